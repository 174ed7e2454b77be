#include "ns3/topology-partition.h"

#include <algorithm>
#include <deque>
#include <limits>
#include <map>
#include <stdexcept>
#include <string>

namespace ns3
{

std::vector<uint32_t>
PartitionLeaves(const TopologySpec& spec)
{
    const auto& nodes = spec.Nodes();
    std::vector<bool> leaf(nodes.size(), false);
    for (const auto& link : spec.Links())
    {
        if (nodes[link.a].isSwitch != nodes[link.b].isSwitch)
        {
            leaf[nodes[link.a].isSwitch ? link.a : link.b] = true;
        }
    }
    std::vector<uint32_t> leaves;
    for (uint32_t u = 0; u < nodes.size(); ++u)
    {
        if (leaf[u])
        {
            leaves.push_back(u);
        }
    }
    return leaves;
}

std::vector<uint32_t>
PartitionByTier(const TopologySpec& spec, uint32_t ranks,
                const std::map<uint32_t, uint32_t>& pinned)
{
    const auto leaves = PartitionLeaves(spec);
    if (ranks == 0 || leaves.size() < ranks)
    {
        throw std::invalid_argument(
            std::to_string(ranks) + " ranks for " + std::to_string(leaves.size()) +
            " partitionable switches (those with hosts): a rank needs at least one");
    }
    constexpr uint32_t kNone = std::numeric_limits<uint32_t>::max();
    const auto& nodes = spec.Nodes();
    std::vector<uint32_t> rankOf(nodes.size(), kNone);
    std::vector<uint32_t> load(ranks, 0);
    auto assign = [&](uint32_t u, uint32_t r) {
        rankOf[u] = r;
        ++load[r];
    };
    for (const auto& [u, r] : pinned)
    {
        if (u >= nodes.size() || !nodes[u].isSwitch)
        {
            throw std::invalid_argument("node " + std::to_string(u) +
                                        " is not a switch: only switches are pinned to a rank");
        }
        if (r >= ranks)
        {
            throw std::invalid_argument(nodes[u].name + " pinned to rank " + std::to_string(r) +
                                        " of a run with " + std::to_string(ranks) +
                                        " ranks (0 to " + std::to_string(ranks - 1) + ")");
        }
        assign(u, r);
    }
    for (size_t i = 0; i < leaves.size(); ++i)
    {
        if (rankOf[leaves[i]] == kNone)
        {
            assign(leaves[i], static_cast<uint32_t>(i * ranks / leaves.size()));
        }
    }
    const auto adjacency = spec.Adjacency(true);
    for (uint32_t h : spec.Hosts())
    {
        for (const auto& [peer, link] : adjacency[h])
        {
            (void)link;
            if (rankOf[peer] != kNone && nodes[peer].isSwitch)
            {
                assign(h, rankOf[peer]);
                break;
            }
        }
        if (rankOf[h] == kNone)
        {
            assign(h, 0); // a host with no switch (two hosts on one cable)
        }
    }
    // The switches above, tier by tier upwards (breadth first from the leaves).
    std::deque<uint32_t> next(leaves.begin(), leaves.end());
    std::vector<bool> queued(nodes.size(), false);
    for (uint32_t u : leaves)
    {
        queued[u] = true;
    }
    while (!next.empty())
    {
        const uint32_t u = next.front();
        next.pop_front();
        if (rankOf[u] == kNone)
        {
            std::map<uint32_t, uint32_t> votes; // rank -> neighbours already there
            for (const auto& [peer, link] : adjacency[u])
            {
                (void)link;
                if (rankOf[peer] != kNone)
                {
                    ++votes[rankOf[peer]];
                }
            }
            uint32_t best = 0;
            uint32_t bestVotes = 0;
            for (const auto& [r, n] : votes)
            {
                if (n > bestVotes || (n == bestVotes && load[r] < load[best]))
                {
                    best = r;
                    bestVotes = n;
                }
            }
            assign(u, best);
        }
        for (const auto& [peer, link] : adjacency[u])
        {
            (void)link;
            if (!queued[peer] && nodes[peer].isSwitch)
            {
                queued[peer] = true;
                next.push_back(peer);
            }
        }
    }
    for (uint32_t u = 0; u < nodes.size(); ++u)
    {
        if (rankOf[u] == kNone)
        {
            assign(u, 0); // not connected to any leaf
        }
    }
    for (uint32_t r = 0; r < ranks; ++r)
    {
        if (load[r] == 0)
        {
            throw std::invalid_argument("rank " + std::to_string(r) +
                                        " would simulate nothing: the pinned switches leave it "
                                        "no leaf");
        }
    }
    return rankOf;
}

PartitionCut
CutOf(const TopologySpec& spec, const std::vector<uint32_t>& rankOf)
{
    PartitionCut cut;
    const auto& links = spec.Links();
    for (uint32_t l = 0; l < links.size(); ++l)
    {
        if (rankOf.at(links[l].a) != rankOf.at(links[l].b))
        {
            cut.links.push_back(l);
            cut.lookahead = std::min(cut.lookahead, links[l].params.delay);
        }
    }
    return cut;
}

} // namespace ns3
