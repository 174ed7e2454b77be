#include "ns3/topology-spec.h"

#include "ns3/abort.h"

#include <algorithm>
#include <deque>
#include <limits>
#include <stdexcept>

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
TopologySpec::Rail(const RailShape& shape)
{
    NS_ABORT_MSG_IF(shape.servers < 1 || shape.rails < 1,
                    "rail: servers and rails must be at least 1");
    const uint32_t perLeaf = shape.serversPerLeaf ? shape.serversPerLeaf : shape.servers;
    const uint32_t leaves = (shape.servers + perLeaf - 1) / perLeaf;
    NS_ABORT_MSG_IF(leaves > 1 && shape.railSpines < 1,
                    "rail: a rail of " << leaves << " leaves needs at least one rail spine");
    TopologySpec t;
    std::vector<std::vector<uint32_t>> leafOf(shape.rails); // [rail][leaf]
    std::vector<std::vector<uint32_t>> topOf(shape.rails);  // what the spines join
    for (uint32_t r = 0; r < shape.rails; ++r)
    {
        for (uint32_t l = 0; l < leaves; ++l)
        {
            leafOf[r].push_back(t.AddSwitch());
        }
        topOf[r] = leafOf[r];
        if (leaves > 1)
        {
            topOf[r].clear();
            for (uint32_t k = 0; k < shape.railSpines; ++k)
            {
                const uint32_t spine = t.AddSwitch();
                topOf[r].push_back(spine);
                for (uint32_t leaf : leafOf[r])
                {
                    t.AddLink(leaf, spine, shape.leafLink);
                }
            }
        }
    }
    for (uint32_t k = 0; k < shape.spines; ++k)
    {
        const uint32_t spine = t.AddSwitch();
        for (const auto& tops : topOf)
        {
            for (uint32_t top : tops)
            {
                t.AddLink(top, spine, shape.spineLink);
            }
        }
    }
    for (uint32_t s = 0; s < shape.servers; ++s)
    {
        for (uint32_t r = 0; r < shape.rails; ++r)
        {
            t.AddLink(t.AddHost(), leafOf[r][s / perLeaf], shape.nicLink);
        }
    }
    return t;
}

TopologySpec
TopologySpec::LeafSpine(uint32_t leaves, uint32_t spines, uint32_t hostsPerLeaf,
                        LinkParams hostLink, LinkParams fabricLink)
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

TopologySpec
TopologySpec::Ring(uint32_t switches, uint32_t hostsPerSwitch, LinkParams hostLink,
                   LinkParams ringLink)
{
    NS_ABORT_MSG_IF(switches < 3 || hostsPerSwitch < 1,
                    "ring: at least 3 switches and 1 host per switch");
    TopologySpec t;
    std::vector<uint32_t> sw;
    for (uint32_t i = 0; i < switches; ++i)
    {
        sw.push_back(t.AddSwitch());
    }
    for (uint32_t i = 0; i < switches; ++i)
    {
        t.AddLink(sw[i], sw[(i + 1) % switches], ringLink);
    }
    for (uint32_t i = 0; i < switches; ++i)
    {
        for (uint32_t h = 0; h < hostsPerSwitch; ++h)
        {
            t.AddLink(t.AddHost(), sw[i], hostLink);
        }
    }
    return t;
}

void
TopologySpec::SetLinkUp(uint32_t link, bool up)
{
    NS_ABORT_MSG_IF(link >= m_links.size(), "TopologySpec: no link " << link);
    if (m_links[link].up != up)
    {
        m_links[link].up = up;
        m_downLinks += up ? -1 : 1;
    }
}

std::vector<std::vector<std::pair<uint32_t, uint32_t>>>
TopologySpec::Adjacency(bool withDown) const
{
    std::vector<std::vector<std::pair<uint32_t, uint32_t>>> adj(m_nodes.size());
    for (uint32_t i = 0; i < m_links.size(); ++i)
    {
        if (m_links[i].up || withDown)
        {
            adj[m_links[i].a].emplace_back(m_links[i].b, i);
            adj[m_links[i].b].emplace_back(m_links[i].a, i);
        }
    }
    return adj;
}

std::vector<std::vector<std::vector<uint32_t>>>
TopologySpec::UpDownNextHops() const
{
    const size_t n = m_nodes.size();
    constexpr uint32_t kInf = std::numeric_limits<uint32_t>::max();
    // Ranks from every link, down ones too: the up/down orientation stays that of the
    // whole fabric, whatever is down, so tables loaded before and after a link changes
    // agree on it and together close no cycle. Routes take the links up (adj).
    const auto all = Adjacency(true);
    const auto adj = Adjacency();
    // Switch-only BFS from a set of sources.
    auto bfs = [&](const std::vector<uint32_t>& from) {
        std::vector<uint32_t> d(n, kInf);
        std::deque<uint32_t> q;
        for (uint32_t s : from)
        {
            d[s] = 0;
            q.push_back(s);
        }
        while (!q.empty())
        {
            const uint32_t u = q.front();
            q.pop_front();
            for (auto [v, link] : all[u])
            {
                (void)link;
                if (m_nodes[v].isSwitch && d[v] == kInf)
                {
                    d[v] = d[u] + 1;
                    q.push_back(v);
                }
            }
        }
        return d;
    };
    // Distance of each switch from the hosts (1: a switch with a host); roots are the farthest.
    std::vector<uint32_t> edgeSwitches;
    for (uint32_t h : m_hosts)
    {
        for (auto [v, link] : all[h])
        {
            (void)link;
            if (m_nodes[v].isSwitch)
            {
                edgeSwitches.push_back(v);
            }
        }
    }
    const auto fromHosts = bfs(edgeSwitches);
    uint32_t top = 0;
    for (uint32_t u = 0; u < n; ++u)
    {
        if (m_nodes[u].isSwitch && fromHosts[u] != kInf)
        {
            top = std::max(top, fromHosts[u]);
        }
    }
    std::vector<uint32_t> roots;
    for (uint32_t u = 0; u < n; ++u)
    {
        if (m_nodes[u].isSwitch && fromHosts[u] == top)
        {
            roots.push_back(u);
        }
    }
    const auto rank = bfs(roots);
    // Total order: lower (rank, index) is "up"; hosts are below every switch.
    auto key = [&](uint32_t u) {
        return m_nodes[u].isSwitch ? std::make_pair(rank[u], u) : std::make_pair(kInf, u);
    };
    auto isDown = [&](uint32_t from, uint32_t to) { return key(from) < key(to); };

    std::vector<std::vector<std::vector<uint32_t>>> hops(
        n, std::vector<std::vector<uint32_t>>(m_hosts.size()));
    for (uint32_t h = 0; h < m_hosts.size(); ++h)
    {
        // Backward BFS from the host over (node, phase). Phase 0: the node's route to the host
        // is down-links only, so a route may reach it by going down or up; phase 1: its route
        // starts with an up-link, so it may be reached only by going up. Each node keeps the
        // first (shortest) label, phase 0 preferred on a tie, and its next hops are the
        // neighbours that label came from: consistent destination-based forwarding tables.
        std::vector<uint32_t> dist(n, kInf);
        std::vector<uint8_t> phase(n, 0);
        std::vector<uint32_t> level{m_hosts[h]};
        dist[m_hosts[h]] = 0;
        for (uint32_t d = 0; !level.empty(); ++d)
        {
            // Candidates at d + 1, phase 0 first so a tie keeps the more permissive label.
            std::vector<uint32_t> next;
            for (uint8_t want : {uint8_t(0), uint8_t(1)})
            {
                for (uint32_t w : level)
                {
                    if (w != m_hosts[h] && !m_nodes[w].isSwitch)
                    {
                        continue;
                    }
                    for (auto [v, link] : adj[w])
                    {
                        (void)link;
                        if (!m_nodes[v].isSwitch || dist[v] != kInf)
                        {
                            continue;
                        }
                        // v -> w: down keeps phase 0 (w must be phase 0); up gives phase 1.
                        const uint8_t ph = isDown(v, w) ? (phase[w] == 0 ? 0 : 2) : 1;
                        if (ph == want)
                        {
                            dist[v] = d + 1;
                            phase[v] = ph;
                            next.push_back(v);
                        }
                    }
                }
            }
            level = std::move(next);
        }
        for (uint32_t u = 0; u < n; ++u)
        {
            if (!m_nodes[u].isSwitch)
            {
                continue;
            }
            if (dist[u] == kInf && m_downLinks == 0)
            {
                throw std::runtime_error("up/down routing: no legal route from " + m_nodes[u].name +
                                         " to " + m_nodes[m_hosts[h]].name +
                                         " (use min-hop routing)");
            }
            for (auto [w, link] : adj[u])
            {
                const bool forwards = w == m_hosts[h] || m_nodes[w].isSwitch;
                if (!forwards || dist[w] + 1 != dist[u])
                {
                    continue;
                }
                const bool ok = isDown(u, w) ? (phase[u] == 0 && phase[w] == 0) : phase[u] == 1;
                if (ok)
                {
                    hops[u][h].push_back(link);
                }
            }
        }
    }
    return hops;
}

std::vector<std::vector<std::vector<uint32_t>>>
TopologySpec::NextHops() const
{
    std::vector<std::vector<std::vector<uint32_t>>> hops(
        m_nodes.size(), std::vector<std::vector<uint32_t>>(m_hosts.size()));
    ForEachHostNextHops([&hops](uint32_t h, const std::vector<std::vector<uint32_t>>& column) {
        for (size_t u = 0; u < column.size(); ++u)
        {
            hops[u][h] = column[u];
        }
    });
    return hops;
}

void
TopologySpec::ForEachHostNextHops(
    const std::function<void(uint32_t, const std::vector<std::vector<uint32_t>>&)>& fn) const
{
    const size_t n = m_nodes.size();
    const auto adj = Adjacency();
    constexpr uint32_t kInf = std::numeric_limits<uint32_t>::max();
    std::vector<uint32_t> dist(n);
    std::vector<std::vector<uint32_t>> column(n);
    for (uint32_t h = 0; h < m_hosts.size(); ++h)
    {
        std::fill(dist.begin(), dist.end(), kInf);
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
            column[u].clear();
            if (dist[u] == kInf || dist[u] == 0)
            {
                continue;
            }
            for (auto [v, link] : adj[u])
            {
                const bool forwards = v == m_hosts[h] || m_nodes[v].isSwitch;
                if (forwards && dist[v] + 1 == dist[u])
                {
                    column[u].push_back(link);
                }
            }
        }
        fn(h, column);
    }
}

bool
TopologySpec::Reaches(uint32_t a, uint32_t b) const
{
    return !FirstPath(a, b).empty() || a == b;
}

std::vector<uint32_t>
TopologySpec::PathLinks(uint32_t a, uint32_t b) const
{
    std::vector<uint32_t> path = FirstPath(a, b);
    NS_ABORT_MSG_IF(path.empty() && a != b, "no path from h" << a << " to h" << b);
    return path;
}

std::vector<uint32_t>
TopologySpec::FirstPath(uint32_t a, uint32_t b) const
{
    // Breadth-first from host a over switches to host b, keeping the first path found.
    const auto adj = Adjacency();
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
    std::vector<uint32_t> path;
    if (!seen[to])
    {
        return path;
    }
    for (uint32_t n = to; n != from;)
    {
        const auto& l = m_links[via[n]];
        path.insert(path.begin(), static_cast<uint32_t>(via[n]));
        n = l.a == n ? l.b : l.a;
    }
    return path;
}

} // namespace ns3
