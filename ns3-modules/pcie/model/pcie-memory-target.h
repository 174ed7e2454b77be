/*
 * The memory behind an endpoint, as a completer: requests are served one
 * after the other at Bandwidth (0: at once); a read's completions leave
 * Latency after its data has been served. Completions carry at most Max
 * Payload Size and end on Read Completion Boundary-aligned addresses, except
 * the last (or, with SplitAtRcb, carry one RCB each, as many root complexes do).
 */
#ifndef FABEMU_PCIE_MEMORY_TARGET_H
#define FABEMU_PCIE_MEMORY_TARGET_H

#include "ns3/callback.h"
#include "ns3/data-rate.h"
#include "ns3/nstime.h"
#include "ns3/object.h"
#include "ns3/pcie-tlp.h"
#include "ns3/traced-callback.h"

#include <string>

namespace ns3
{

class PciePort;

class PcieMemoryTarget : public Object
{
  public:
    static TypeId GetTypeId();
    PcieMemoryTarget();

    /// "" if the attributes are ones the spec allows, else the first problem.
    std::string Check() const;
    void SetPort(Ptr<PciePort> port) { m_port = port; }

    /// A posted write of \p bytes: returns when the memory has taken it.
    Time Write(uint32_t bytes);
    /// A posted write TLP: returns when the memory has taken it; fires Written then.
    Time Write(const PcieTlp& tlp);
    /// A read request: its completions go out through the port.
    void Read(const PcieTlp& request);
    /// A read request whose completions go out through \p via (a root complex's root port).
    void Read(const PcieTlp& request, Ptr<PciePort> via);

    /// Completions go to \p cb (with the port they are for) instead of straight into the
    /// port: a root complex keeps its per-port accounting of what it queued.
    void SetCompletionCallback(Callback<void, const PcieTlp&, Ptr<PciePort>> cb) { m_send = cb; }

    using WrittenTracedCallback = void (*)(const PcieTlp& tlp, Time taken);

    uint64_t GetBytesWritten() const { return m_written; }
    uint64_t GetCompletionsSent() const { return m_completions; }

  protected:
    void DoDispose() override;

  private:
    Time Serve(uint32_t bytes);
    void SendCompletions(PcieTlp request, Ptr<PciePort> via);

    Time m_latency;
    DataRate m_bandwidth;
    uint32_t m_rcb;
    bool m_splitAtRcb;

    Ptr<PciePort> m_port;
    Time m_busyUntil;
    uint64_t m_written{0};
    uint64_t m_completions{0};
    Callback<void, const PcieTlp&, Ptr<PciePort>> m_send;
    TracedCallback<const PcieTlp&, Time> m_writtenTrace;
};

} // namespace ns3

#endif
