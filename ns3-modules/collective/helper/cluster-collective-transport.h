/*
 * Ranks on the GPUs of several servers: a pair inside one server takes that server's
 * own transport (its NVLink), a pair on two servers the network's (RDMA WRITEs staged
 * GPU memory -> PCIe -> NIC -> fabric -> NIC -> PCIe -> GPU memory). One rank
 * numbering over both; GetLayout says which ranks share a server, for the algorithms
 * that follow servers and rails.
 */
#ifndef FABEMU_CLUSTER_COLLECTIVE_TRANSPORT_H
#define FABEMU_CLUSTER_COLLECTIVE_TRANSPORT_H

#include "ns3/collective-schedule.h"
#include "ns3/collective-transport.h"

#include <vector>

namespace ns3
{

class ClusterCollectiveTransport : public CollectiveTransport
{
  public:
    static TypeId GetTypeId();

    /// Pairs on different servers: rank r is rank r of \p network too.
    void SetNetwork(Ptr<CollectiveTransport> network);
    /// One server: ranks \p ranks (in the order of its GPUs) are ranks 0, 1, ... of
    /// \p inside, which joins them inside the server.
    void AddServer(Ptr<CollectiveTransport> inside, const std::vector<uint32_t>& ranks);
    /// Which ranks share a server, as added.
    const CollectiveLayout& GetLayout() const { return m_layout; }

    uint32_t GetNRanks() const override;
    void Send(uint32_t from, uint32_t to, uint64_t bytes, Done done) override;
    PathCost GetPathCost(uint32_t from, uint32_t to) const override;
    /// Inside a server: its transport's word; across: the network's.
    bool Reaches(uint32_t from, uint32_t to) const override;

  protected:
    std::string DefaultRankName(uint32_t r) const override;
    void DoDispose() override;

  private:
    /// Rank r's server and its number there (only where a server was added).
    struct Place
    {
        uint32_t server{0};
        uint32_t local{0};
        bool placed{false};
    };
    /// \p from and \p to share a server.
    bool Inside(uint32_t from, uint32_t to) const;

    Ptr<CollectiveTransport> m_network;
    std::vector<Ptr<CollectiveTransport>> m_servers;
    std::vector<Place> m_places; ///< by rank
    CollectiveLayout m_layout;
};

} // namespace ns3

#endif
