/*
 * Ranks on the hosts of an RDMA fabric (RoCEv2, InfiniBand or iWARP): each transfer is
 * an RDMA WRITE on a reliable connection between the two hosts, one connection per
 * ordered pair made when first needed, and it has arrived when the WRITE completes
 * (the receiver has acknowledged every byte). A WRITE that completes in error fails
 * its transfer with the transport's reason.
 */
#ifndef FABEMU_RDMA_COLLECTIVE_TRANSPORT_H
#define FABEMU_RDMA_COLLECTIVE_TRANSPORT_H

#include "ns3/collective-transport.h"
#include "ns3/rdma-fabric.h"

#include <map>
#include <string>
#include <vector>

namespace ns3
{

class RdmaCollectiveTransport : public CollectiveTransport
{
  public:
    static TypeId GetTypeId();

    /// Rank r is host \p hosts[r] of \p fabric, called \p names[r] (or "h<host>").
    void Setup(RdmaFabric* fabric, const std::vector<uint32_t>& hosts,
               const std::vector<std::string>& names = {});

    uint32_t GetNRanks() const override { return static_cast<uint32_t>(m_hosts.size()); }
    void Send(uint32_t from, uint32_t to, uint64_t bytes, Done done) override;
    /// Fitted to the fabric's ideal FCT (headers, store and forward, the ACK's return) at
    /// two sizes of whole frames: the bandwidth from their difference, alpha the rest.
    /// Each pair's is fitted once.
    PathCost GetPathCost(uint32_t from, uint32_t to) const override;

  protected:
    std::string DefaultRankName(uint32_t r) const override;
    void DoDispose() override;

  private:
    void Completed(const RdmaCompletion& c);

    RdmaFabric* m_fabric{nullptr};
    std::vector<uint32_t> m_hosts;
    std::map<uint64_t, RdmaFabric::Connection> m_connections; ///< by from << 32 | to
    std::map<uint64_t, Done> m_pending;                       ///< by work request id
    mutable std::map<uint64_t, PathCost> m_costs; ///< GetPathCost's fits, by from << 32 | to
    uint64_t m_nextWr{1};
};

} // namespace ns3

#endif
