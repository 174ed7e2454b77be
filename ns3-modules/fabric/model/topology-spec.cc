#include "topology-spec.h"

#include "ns3/abort.h"

#include <deque>
#include <limits>

namespace ns3
{

uint32_t
TopologySpec::AddHost()
{
    m_nodes.push_back(Node{"h" + std::to_string(m_hosts.size()), false});
    m_hosts.push_back(static_cast<uint32_t>(m_nodes.size() - 1));
    return m_hosts.back();
}

uint32_t
TopologySpec::AddSwitch()
{
    m_nodes.push_back(Node{"s" + std::to_string(m_switches++), true});
    return static_cast<uint32_t>(m_nodes.size() - 1);
}

void
TopologySpec::AddLink(uint32_t a, uint32_t b, LinkParams p)
{
    m_links.push_back(Link{a, b, p});
}

TopologySpec
TopologySpec::Pair(LinkParams link)
{
    TopologySpec t;
    const uint32_t a = t.AddHost();
    const uint32_t b = t.AddHost();
    t.AddLink(a, b, link);
    return t;
}

TopologySpec
TopologySpec::Star(uint32_t hosts, LinkParams link)
{
    NS_ABORT_MSG_IF(hosts < 2, "star: hosts must be at least 2, not " << hosts);
    TopologySpec t;
    const uint32_t s = t.AddSwitch();
    for (uint32_t i = 0; i < hosts; ++i)
    {
        t.AddLink(t.AddHost(), s, link);
    }
    return t;
}

TopologySpec
TopologySpec::Dumbbell(uint32_t hosts, LinkParams edge, LinkParams bottleneck)
{
    NS_ABORT_MSG_IF(hosts < 2, "dumbbell: hosts must be at least 2, not " << hosts);
    TopologySpec t;
    const uint32_t left = t.AddSwitch();
    const uint32_t right = t.AddSwitch();
    t.AddLink(left, right, bottleneck);
    for (uint32_t i = 0; i < hosts; ++i)
    {
        t.AddLink(t.AddHost(), i < (hosts + 1) / 2 ? left : right, edge);
    }
    return t;
}

TopologySpec
TopologySpec::LeafSpine(uint32_t leaves,
                        uint32_t spines,
                        uint32_t hostsPerLeaf,
                        LinkParams hostLink,
                        LinkParams fabricLink)
{
    NS_ABORT_MSG_IF(leaves < 1 || spines < 1 || hostsPerLeaf < 1,
                    "leaf-spine: leaves, spines and hosts_per_leaf must be at least 1");
    TopologySpec t;
    std::vector<uint32_t> leaf;
    std::vector<uint32_t> spine;
    for (uint32_t i = 0; i < leaves; ++i)
    {
        leaf.push_back(t.AddSwitch());
    }
    for (uint32_t i = 0; i < spines; ++i)
    {
        spine.push_back(t.AddSwitch());
    }
    for (uint32_t l : leaf)
    {
        for (uint32_t s : spine)
        {
            t.AddLink(l, s, fabricLink);
        }
    }
    for (uint32_t l : leaf)
    {
        for (uint32_t h = 0; h < hostsPerLeaf; ++h)
        {
            t.AddLink(t.AddHost(), l, hostLink);
        }
    }
    return t;
}

TopologySpec
TopologySpec::FatTree(uint32_t k, LinkParams hostLink, LinkParams fabricLink)
{
    NS_ABORT_MSG_IF(k < 2 || k % 2, "fat-tree: k must be even and at least 2, not " << k);
    const uint32_t half = k / 2;
    TopologySpec t;
    std::vector<uint32_t> core;
    for (uint32_t i = 0; i < half * half; ++i)
    {
        core.push_back(t.AddSwitch());
    }
    for (uint32_t pod = 0; pod < k; ++pod)
    {
        std::vector<uint32_t> agg;
        std::vector<uint32_t> edge;
        for (uint32_t i = 0; i < half; ++i)
        {
            agg.push_back(t.AddSwitch());
        }
        for (uint32_t i = 0; i < half; ++i)
        {
            edge.push_back(t.AddSwitch());
        }
        for (uint32_t a = 0; a < half; ++a)
        {
            for (uint32_t c = 0; c < half; ++c)
            {
                t.AddLink(agg[a], core[a * half + c], fabricLink);
            }
            for (uint32_t e : edge)
            {
                t.AddLink(e, agg[a], fabricLink);
            }
        }
        for (uint32_t e : edge)
        {
            for (uint32_t h = 0; h < half; ++h)
            {
                t.AddLink(t.AddHost(), e, hostLink);
            }
        }
    }
    return t;
}

std::vector<std::vector<std::vector<uint32_t>>>
TopologySpec::NextHops() const
{
    const size_t n = m_nodes.size();
    std::vector<std::vector<std::pair<uint32_t, uint32_t>>> adj(n); // (neighbour, link)
    for (uint32_t i = 0; i < m_links.size(); ++i)
    {
        adj[m_links[i].a].emplace_back(m_links[i].b, i);
        adj[m_links[i].b].emplace_back(m_links[i].a, i);
    }
    std::vector<std::vector<std::vector<uint32_t>>> hops(
        n, std::vector<std::vector<uint32_t>>(m_hosts.size()));
    constexpr uint32_t kInf = std::numeric_limits<uint32_t>::max();
    for (uint32_t h = 0; h < m_hosts.size(); ++h)
    {
        std::vector<uint32_t> dist(n, kInf);
        std::deque<uint32_t> queue{m_hosts[h]};
        dist[m_hosts[h]] = 0;
        while (!queue.empty())
        {
            const uint32_t u = queue.front();
            queue.pop_front();
            if (u != m_hosts[h] && !m_nodes[u].isSwitch)
            {
                continue; // hosts do not forward
            }
            for (auto [v, link] : adj[u])
            {
                if (dist[v] == kInf)
                {
                    dist[v] = dist[u] + 1;
                    queue.push_back(v);
                }
            }
        }
        for (uint32_t u = 0; u < n; ++u)
        {
            if (dist[u] == kInf || dist[u] == 0)
            {
                continue;
            }
            for (auto [v, link] : adj[u])
            {
                const bool forwards = v == m_hosts[h] || m_nodes[v].isSwitch;
                if (forwards && dist[v] + 1 == dist[u])
                {
                    hops[u][h].push_back(link);
                }
            }
        }
    }
    return hops;
}

std::vector<uint32_t>
TopologySpec::PathLinks(uint32_t a, uint32_t b) const
{
    // Breadth-first from host a over switches to host b, keeping the first path found.
    std::vector<std::vector<std::pair<uint32_t, uint32_t>>> adj(m_nodes.size());
    for (uint32_t i = 0; i < m_links.size(); ++i)
    {
        adj[m_links[i].a].emplace_back(m_links[i].b, i);
        adj[m_links[i].b].emplace_back(m_links[i].a, i);
    }
    const uint32_t from = m_hosts.at(a);
    const uint32_t to = m_hosts.at(b);
    std::vector<int64_t> via(m_nodes.size(), -1); // link by which a node was reached
    std::vector<bool> seen(m_nodes.size(), false);
    std::deque<uint32_t> queue{from};
    seen[from] = true;
    while (!queue.empty() && !seen[to])
    {
        const uint32_t u = queue.front();
        queue.pop_front();
        if (u != from && !m_nodes[u].isSwitch)
        {
            continue;
        }
        for (auto [v, link] : adj[u])
        {
            if (!seen[v])
            {
                seen[v] = true;
                via[v] = link;
                queue.push_back(v);
            }
        }
    }
    NS_ABORT_MSG_IF(!seen[to], "no path from h" << a << " to h" << b);
    std::vector<uint32_t> path;
    for (uint32_t n = to; n != from;)
    {
        const auto& l = m_links[via[n]];
        path.insert(path.begin(), static_cast<uint32_t>(via[n]));
        n = l.a == n ? l.b : l.a;
    }
    return path;
}

} // namespace ns3
