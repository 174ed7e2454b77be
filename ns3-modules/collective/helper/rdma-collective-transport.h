/*
 * Ranks on the hosts of an RDMA fabric (RoCEv2, InfiniBand or iWARP): each transfer is
 * an RDMA WRITE on a reliable connection between the two hosts, one connection per
 * ordered pair made when first needed, and it has arrived when the WRITE completes
 * (the receiver has acknowledged every byte). A WRITE that completes in error fails
 * its transfer with the transport's reason. Ranks whose memory sits behind a NIC's
 * host interface (a GPU under a PCIe tree: GPUDirect RDMA) have every transfer staged
 * through it (RdmaStagedWrite), each on a connection of its own (let go when done),
 * arrived once every byte is placed in the receiver's memory.
 */
#ifndef FABEMU_RDMA_COLLECTIVE_TRANSPORT_H
#define FABEMU_RDMA_COLLECTIVE_TRANSPORT_H

#include "ns3/collective-transport.h"
#include "ns3/rdma-fabric.h"
#include "ns3/rdma-staged-write.h"

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
    /// Rank r's memory is \p ends[r] (its NIC's host interface and "gpuK"): every transfer
    /// is staged through the interfaces. Call after Setup, before the first Send.
    void SetRankMemory(const std::vector<RdmaStagedWrite::End>& ends);

    uint32_t GetNRanks() const override { return static_cast<uint32_t>(m_hosts.size()); }
    void Send(uint32_t from, uint32_t to, uint64_t bytes, Done done) override;
    /// Fitted to the fabric's ideal FCT (headers, store and forward, the ACK's return) at
    /// two sizes of whole frames: the bandwidth from their difference, alpha the rest.
    /// Each pair's is fitted once.
    PathCost GetPathCost(uint32_t from, uint32_t to) const override;
    bool Reaches(uint32_t from, uint32_t to) const override
    {
        return m_fabric->Reaches(m_hosts.at(from), m_hosts.at(to));
    }

  protected:
    std::string DefaultRankName(uint32_t r) const override;
    void DoDispose() override;

  private:
    void Completed(const RdmaCompletion& c);
    /// A staged transfer's end: hands on its outcome, then lets its connection go.
    void StagedDone(uint64_t id, const RdmaCompletion& c);
    /// Staged transfer \p id's connection goes.
    void Release(uint64_t id);

    /// A staged transfer in flight.
    struct Staged
    {
        RdmaFabric::Connection connection;
        Ptr<RdmaStagedWrite> write;
        Done done;
    };

    RdmaFabric* m_fabric{nullptr};
    std::vector<uint32_t> m_hosts;
    std::map<uint64_t, RdmaFabric::Connection> m_connections; ///< by from << 32 | to
    std::map<uint64_t, Done> m_pending;                       ///< by work request id
    std::vector<RdmaStagedWrite::End> m_ends;                 ///< by rank; empty: not staged
    std::map<uint64_t, Staged> m_staged;                      ///< by transfer id
    mutable std::map<uint64_t, PathCost> m_costs; ///< GetPathCost's fits, by from << 32 | to
    uint64_t m_nextWr{1};
};

} // namespace ns3

#endif
