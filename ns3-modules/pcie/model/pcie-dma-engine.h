/*
 * The DMA engine of an endpoint: memory writes (posted, split at Max
 * Payload Size boundaries) and memory reads (non-posted requests of at most
 * Max Read Request Size, one tag each, at most Tags outstanding). A write
 * transfer is done when the link partner's Ack covers its last TLP (it then
 * holds all the data); a read is done when its last completion byte arrives.
 * Transfers of one kind run one after the other in the order posted; writes
 * and reads run side by side.
 */
#ifndef FABEMU_PCIE_DMA_ENGINE_H
#define FABEMU_PCIE_DMA_ENGINE_H

#include "ns3/callback.h"
#include "ns3/nstime.h"
#include "ns3/object.h"
#include "ns3/pcie-tlp.h"
#include "ns3/traced-callback.h"

#include <deque>
#include <map>
#include <string>
#include <vector>

namespace ns3
{

class PciePort;

/// One DMA transfer, as the completion callback reports it.
struct PcieTransfer
{
    uint64_t id{0};
    bool write{true};
    uint64_t address{0};
    uint64_t bytes{0};
    Time started;
    Time completed;
};

class PcieDmaEngine : public Object
{
  public:
    static TypeId GetTypeId();
    PcieDmaEngine();

    /// "" if the attributes are ones the spec allows, else the first problem.
    std::string Check() const;
    void SetPort(Ptr<PciePort> port);

    /// Starts (or queues) a write of \p bytes to \p address; returns its id.
    uint64_t Write(uint64_t address, uint64_t bytes);
    /// Starts (or queues) a read of \p bytes from \p address; returns its id.
    uint64_t Read(uint64_t address, uint64_t bytes);
    /// Called when a transfer completes.
    void SetTransferCallback(Callback<void, const PcieTransfer&> cb) { m_done = cb; }

    /// Called by the endpoint: a completion for one of our reads.
    void ReceiveCompletion(const PcieTlp& cpl);
    /// Called by the port: a TLP of type \p type left its queue.
    void Dequeued(PcieFcType type);
    /// Called by the port: the peer's Ack covered \p tlp.
    void Acked(const PcieTlp& tlp);

    /// Several engines behind one port (a GPU's copy engines): this one uses tags
    /// from \p tagBase and transfer ids from \p idBase up. Call before SetPort.
    void SetBases(uint16_t tagBase, uint64_t idBase)
    {
        m_tagBase = tagBase;
        m_nextId = idBase + 1;
    }
    /// Whether \p tag is one of this engine's.
    bool OwnsTag(uint16_t tag) const
    {
        return tag >= m_tagBase && uint32_t(tag - m_tagBase) < m_maxTags;
    }
    uint32_t GetMaxTags() const { return m_maxTags; }
    uint16_t GetTagBase() const { return m_tagBase; }
    /// Transfers started and not yet done.
    size_t GetTransfersInProgress() const { return m_jobs.size(); }
    /// Read \p id's bytes back so far (0 for a write, or a transfer not in progress).
    uint64_t GetReadBytesReceived(uint64_t id) const
    {
        const auto it = m_jobs.find(id);
        return it == m_jobs.end() ? 0 : it->second.received;
    }

    /// The requester ID its TLPs carry (completions come back by it).
    void SetRequesterId(uint16_t id) { m_requester = id; }
    uint16_t GetRequesterId() const { return m_requester; }

    uint32_t GetTagsInUse() const { return static_cast<uint32_t>(m_tags.size()); }
    uint64_t GetReadRequestsSent() const { return m_requests; }

    using TransferTracedCallback = void (*)(const PcieTransfer& t);

  protected:
    void DoDispose() override;

  private:
    struct Job
    {
        PcieTransfer t;
        uint64_t issued{0};   ///< bytes put into TLPs (writes) or requested (reads)
        uint64_t received{0}; ///< read bytes back
    };
    struct Tag
    {
        uint64_t transfer;
        uint32_t remaining;
    };

    void PumpWrites();
    void PumpReads();
    void Finish(uint64_t id);
    uint8_t HeaderBytes() const { return m_addr64 ? 16 : 12; }

    uint32_t m_mrrs;
    uint32_t m_maxTags;
    uint32_t m_queueDepth;
    bool m_addr64;
    bool m_ecrc;

    Ptr<PciePort> m_port;
    uint16_t m_requester{0};
    uint16_t m_tagBase{0};
    uint64_t m_nextId{1};
    std::map<uint64_t, Job> m_jobs;
    std::deque<uint64_t> m_writes; ///< writes not yet fully issued
    std::deque<uint64_t> m_reads;  ///< reads not yet fully requested
    std::map<uint16_t, Tag> m_tags;
    std::vector<uint16_t> m_freeTags;
    uint64_t m_requests{0};
    Callback<void, const PcieTransfer&> m_done;
    TracedCallback<const PcieTransfer&> m_doneTrace;
};

} // namespace ns3

#endif
