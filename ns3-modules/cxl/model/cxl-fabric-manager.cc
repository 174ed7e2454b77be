#include "ns3/cxl-fabric-manager.h"

#include "ns3/abort.h"

#include <fmt/format.h>

#include <deque>
#include <limits>

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(CxlFabricManager);

namespace
{

constexpr uint32_t kUnreached = std::numeric_limits<uint32_t>::max();

} // namespace

TypeId
CxlFabricManager::GetTypeId()
{
    static TypeId tid = TypeId("ns3::CxlFabricManager")
                            .SetParent<Object>()
                            .SetGroupName("Cxl")
                            .AddConstructor<CxlFabricManager>();
    return tid;
}

uint32_t
CxlFabricManager::AddSwitch(Ptr<CxlSwitch> s)
{
    m_switches.push_back(s);
    m_links.emplace_back();
    m_programmed = false;
    return static_cast<uint32_t>(m_switches.size() - 1);
}

std::pair<Ptr<CxlPort>, Ptr<CxlPort>>
CxlFabricManager::Link(uint32_t a, uint32_t b)
{
    NS_ABORT_MSG_IF(a >= m_switches.size() || b >= m_switches.size() || a == b,
                    "CxlFabricManager::Link: switches " << a << " and " << b << " of "
                                                        << m_switches.size());
    Ptr<CxlPort> pa = m_switches[a]->AddFabricPort();
    Ptr<CxlPort> pb = m_switches[b]->AddFabricPort();
    m_links[a].push_back({b, pa});
    m_links[b].push_back({a, pb});
    m_programmed = false;
    return {pa, pb};
}

std::string
CxlFabricManager::AddEdge(uint32_t s, uint32_t port, bool host, uint16_t* pid)
{
    if (s >= m_switches.size())
    {
        return fmt::format("switch {}: the fabric has {}", s, m_switches.size());
    }
    const uint32_t ports =
        host ? m_switches[s]->GetNUpstreamPorts() : m_switches[s]->GetNDownstreamPorts();
    if (port >= ports)
    {
        return fmt::format("switch {} has {} {} ports, not {}", s, ports,
                           host ? "upstream" : "downstream", port + 1);
    }
    if (m_edges.size() >= kMaxPortIds)
    {
        return fmt::format("port IDs are 12 bits: {} edge ports at most", kMaxPortIds);
    }
    *pid = static_cast<uint16_t>(m_edges.size());
    m_edges.push_back({s, port, host});
    m_programmed = false;
    return "";
}

std::string
CxlFabricManager::AddHost(uint32_t s, uint32_t port, uint16_t* pid)
{
    return AddEdge(s, port, true, pid);
}

std::string
CxlFabricManager::AddDevice(uint32_t s, uint32_t port, uint16_t* pid)
{
    return AddEdge(s, port, false, pid);
}

std::vector<uint32_t>
CxlFabricManager::Distances(uint32_t s, std::vector<Ptr<CxlPort>>* firstPort) const
{
    std::vector<uint32_t> dist(m_switches.size(), kUnreached);
    firstPort->assign(m_switches.size(), nullptr);
    std::deque<uint32_t> queue{s};
    dist[s] = 0;
    while (!queue.empty())
    {
        const uint32_t at = queue.front();
        queue.pop_front();
        for (const Neighbour& n : m_links[at])
        {
            if (dist[n.sw] == kUnreached)
            {
                dist[n.sw] = dist[at] + 1;
                (*firstPort)[n.sw] = at == s ? n.port : (*firstPort)[at];
                queue.push_back(n.sw);
            }
        }
    }
    return dist;
}

std::string
CxlFabricManager::Program()
{
    for (uint32_t s = 0; s < m_switches.size(); ++s)
    {
        std::vector<Ptr<CxlPort>> first;
        const auto dist = Distances(s, &first);
        for (uint32_t pid = 0; pid < m_edges.size(); ++pid)
        {
            const Edge& e = m_edges[pid];
            if (dist[e.sw] == kUnreached)
            {
                return fmt::format("no link joins switch {} to switch {}", s, e.sw);
            }
            m_switches[s]->SetRoute(static_cast<uint16_t>(pid),
                                    e.sw == s ? (e.host ? m_switches[s]->GetUpstreamPort(e.port)
                                                        : m_switches[s]->GetDownstreamPort(e.port))
                                              : first[e.sw]);
        }
    }
    m_programmed = true;
    return "";
}

std::string
CxlFabricManager::Bind(uint16_t hostPid, uint16_t devicePid, uint32_t ld)
{
    if (hostPid >= m_edges.size() || !m_edges[hostPid].host)
    {
        return fmt::format("port ID {} is not a host's edge port", hostPid);
    }
    if (devicePid >= m_edges.size() || m_edges[devicePid].host)
    {
        return fmt::format("port ID {} is not a device's edge port", devicePid);
    }
    if (!m_programmed)
    {
        if (std::string wrong = Program(); !wrong.empty())
        {
            return wrong;
        }
    }
    const Edge& h = m_edges[hostPid];
    const Edge& d = m_edges[devicePid];
    // Everything checked before either end changes: no half-made binding.
    if (ld >= 16)
    {
        return fmt::format("logical device {}: a multi-logical device has at most 16", ld);
    }
    if (m_switches[h.sw]->IsHostBound(h.port))
    {
        return fmt::format("port ID {} (a host's) is bound already", hostPid);
    }
    if (m_switches[d.sw]->IsDeviceBound(d.port, ld))
    {
        return fmt::format("logical device {} of port ID {} is bound already", ld, devicePid);
    }
    const std::string wrong = m_switches[d.sw]->SetOwner(d.port, devicePid, ld, hostPid) +
                              m_switches[h.sw]->BindRemote(h.port, hostPid, devicePid, ld);
    NS_ABORT_MSG_IF(!wrong.empty(), "CxlFabricManager: " << wrong); // checked above
    return "";
}

uint32_t
CxlFabricManager::GetHops(uint16_t fromPid, uint16_t toPid) const
{
    std::vector<Ptr<CxlPort>> first;
    const auto dist = Distances(m_edges.at(fromPid).sw, &first);
    const uint32_t d = dist.at(m_edges.at(toPid).sw);
    return d == kUnreached ? 0 : d + 1;
}

void
CxlFabricManager::DoDispose()
{
    m_links.clear();
    m_switches.clear();
    Object::DoDispose();
}

} // namespace ns3
