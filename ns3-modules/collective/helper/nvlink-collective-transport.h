/*
 * Ranks on the GPUs of one server's NVLink (an NvlinkNode: NVSwitches or a direct
 * mesh): each transfer is an NVLink transfer, striped by the sending GPU over every
 * port that reaches the receiver, arrived when its last byte is in. A pair NVLink
 * does not join fails its transfers with the node's reason. Where the node's
 * NVSwitches offer it, sums and multicasts run in the switches (NVLS).
 */
#ifndef FABEMU_NVLINK_COLLECTIVE_TRANSPORT_H
#define FABEMU_NVLINK_COLLECTIVE_TRANSPORT_H

#include "ns3/collective-transport.h"
#include "ns3/nvlink-node.h"

#include <string>
#include <vector>

namespace ns3
{

class NvlinkCollectiveTransport : public CollectiveTransport
{
  public:
    static TypeId GetTypeId();

    /// Rank r is GPU \p gpus[r] of \p node, called \p names[r] (or "gpu<K>").
    void Setup(Ptr<NvlinkNode> node, const std::vector<uint32_t>& gpus,
               const std::vector<std::string>& names = {});

    uint32_t GetNRanks() const override { return static_cast<uint32_t>(m_gpus.size()); }
    void Send(uint32_t from, uint32_t to, uint64_t bytes, Done done) override;
    /**
     * \brief From the links: the bandwidth is the usable payload rate (MaxPayload of
     * MaxPayload + HeaderBytes of each bundle's raw rate) summed over the sender's ports
     * that reach the receiver; alpha a packet's wire time and propagation per hop, and
     * the NVSwitch's latency where the path crosses one.
     */
    PathCost GetPathCost(uint32_t from, uint32_t to) const override;
    /// Whether NVLink joins the two GPUs (dgx-1's hybrid cube mesh leaves some pairs out).
    bool Reaches(uint32_t from, uint32_t to) const override;
    /// Whether the GPUs meet in NVSwitches (else each pair has links of its own, a mesh).
    bool IsSwitched() const;
    std::string CheckInSwitch(const std::vector<uint32_t>& ranks) const override;
    void SendInSwitch(CollectiveVia via, uint32_t from, uint32_t to,
                      const std::vector<uint32_t>& group, uint64_t bytes, Done done) override;
    /**
     * \brief The rate of what the switches make for rank \p r: each of its bundles'
     * raw rate times MaxPayload / (MaxPayload / NvlsEfficiency + HeaderBytes), summed;
     * alpha two hops and the switch's latency, as GetPathCost's.
     */
    PathCost GetInSwitchCost(uint32_t r) const override;

  protected:
    std::string DefaultRankName(uint32_t r) const override;
    void DoDispose() override;

  private:
    std::vector<uint32_t> GpusOf(const std::vector<uint32_t>& ranks) const;

    Ptr<NvlinkNode> m_node;
    std::vector<uint32_t> m_gpus;
};

} // namespace ns3

#endif
