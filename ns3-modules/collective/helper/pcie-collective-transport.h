/*
 * Ranks on the GPUs of one server's PCIe tree (a PcieTree: switches, a root complex):
 * each transfer is a DMA write by the sending GPU into the receiving GPU's memory,
 * peer to peer under one switch or up through the root complex between switches
 * (through it under one switch too where ACS redirects), arrived when its last byte is
 * in. Servers whose GPUs have no NVLink (pcie-8gpu, like L40S servers) run their
 * collectives on it.
 */
#ifndef FABEMU_PCIE_COLLECTIVE_TRANSPORT_H
#define FABEMU_PCIE_COLLECTIVE_TRANSPORT_H

#include "ns3/collective-transport.h"
#include "ns3/pcie-tree.h"

#include <string>
#include <vector>

namespace ns3
{

class PcieCollectiveTransport : public CollectiveTransport
{
  public:
    static TypeId GetTypeId();

    /// One rank: its GPU's endpoint name in the tree ("gpu3") and what it sits under
    /// ("sw1", or "root" for a root port).
    struct Rank
    {
        std::string device;
        std::string parent;
    };
    /// Ranks on \p tree; \p acs: peer-to-peer under a switch goes up to the root complex;
    /// \p mps: the tree's Max Payload Size (the TLPs a write is cut into).
    void Setup(Ptr<PcieTree> tree, const std::vector<Rank>& ranks, bool acs, uint32_t mps,
               const std::vector<std::string>& names = {});

    uint32_t GetNRanks() const override { return static_cast<uint32_t>(m_ranks.size()); }
    void Send(uint32_t from, uint32_t to, uint64_t bytes, Done done) override;
    /**
     * \brief From the links on the path: the bandwidth is the narrowest link's payload
     * rate (MPS-byte TLPs with their framing); alpha a TLP's wire time and propagation
     * on each link, and each switch's latency.
     */
    PathCost GetPathCost(uint32_t from, uint32_t to) const override;

  protected:
    std::string DefaultRankName(uint32_t r) const override;
    void DoDispose() override;

  private:
    /// The links from \p from's GPU to \p to's, and the switches between.
    void Path(uint32_t from, uint32_t to, std::vector<Ptr<PcieLink>>& links,
              std::vector<Ptr<PcieSwitch>>& switches) const;

    Ptr<PcieTree> m_tree;
    std::vector<Rank> m_ranks;
    bool m_acs{false};
    uint32_t m_mps{256};
};

} // namespace ns3

#endif
