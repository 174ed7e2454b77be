#include "ns3/cluster-collective-transport.h"

#include "ns3/abort.h"

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(ClusterCollectiveTransport);

TypeId
ClusterCollectiveTransport::GetTypeId()
{
    static TypeId tid = TypeId("ns3::ClusterCollectiveTransport")
                            .SetParent<CollectiveTransport>()
                            .SetGroupName("Collective")
                            .AddConstructor<ClusterCollectiveTransport>();
    return tid;
}

void
ClusterCollectiveTransport::SetNetwork(Ptr<CollectiveTransport> network)
{
    m_network = network;
    m_places.resize(network->GetNRanks());
}

void
ClusterCollectiveTransport::AddServer(Ptr<CollectiveTransport> inside,
                                      const std::vector<uint32_t>& ranks)
{
    NS_ABORT_MSG_IF(!m_network, "ClusterCollectiveTransport: SetNetwork before AddServer");
    NS_ABORT_MSG_IF(inside->GetNRanks() < ranks.size(),
                    "ClusterCollectiveTransport: the server's transport has "
                        << inside->GetNRanks() << " ranks, not " << ranks.size());
    const auto server = static_cast<uint32_t>(m_servers.size());
    for (uint32_t local = 0; local < ranks.size(); ++local)
    {
        Place& p = m_places.at(ranks[local]);
        NS_ABORT_MSG_IF(p.placed, "ClusterCollectiveTransport: rank " << ranks[local]
                                                                      << " is on two servers");
        p = {server, local, true};
    }
    m_servers.push_back(inside);
    m_layout.servers.push_back(ranks);
}

uint32_t
ClusterCollectiveTransport::GetNRanks() const
{
    return static_cast<uint32_t>(m_places.size());
}

bool
ClusterCollectiveTransport::Inside(uint32_t from, uint32_t to) const
{
    const Place& a = m_places.at(from);
    const Place& b = m_places.at(to);
    return a.placed && b.placed && a.server == b.server;
}

void
ClusterCollectiveTransport::Send(uint32_t from, uint32_t to, uint64_t bytes, Done done)
{
    if (Inside(from, to))
    {
        m_servers[m_places[from].server]->Send(m_places[from].local, m_places[to].local, bytes,
                                               done);
        return;
    }
    m_network->Send(from, to, bytes, done);
}

CollectiveTransport::PathCost
ClusterCollectiveTransport::GetPathCost(uint32_t from, uint32_t to) const
{
    if (Inside(from, to))
    {
        return m_servers[m_places[from].server]->GetPathCost(m_places[from].local,
                                                             m_places[to].local);
    }
    return m_network->GetPathCost(from, to);
}

bool
ClusterCollectiveTransport::Reaches(uint32_t from, uint32_t to) const
{
    if (Inside(from, to))
    {
        return m_servers[m_places[from].server]->Reaches(m_places[from].local, m_places[to].local);
    }
    return m_network->Reaches(from, to);
}

std::string
ClusterCollectiveTransport::DefaultRankName(uint32_t r) const
{
    return m_network->GetRankName(r);
}

void
ClusterCollectiveTransport::DoDispose()
{
    for (auto& s : m_servers)
    {
        s->Dispose();
    }
    m_servers.clear();
    if (m_network)
    {
        m_network->Dispose();
        m_network = nullptr;
    }
    CollectiveTransport::DoDispose();
}

} // namespace ns3
