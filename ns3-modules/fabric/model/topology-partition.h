/*
 * How a partitioned run (ns-3's distributed simulator over MPI) splits a topology among
 * its ranks: every node gets a rank, and the links whose ends differ carry their packets
 * between ranks. The default split is at switch tiers, as ns-3's distributed examples
 * split theirs: each leaf switch stays with its hosts, the leaves go to the ranks in
 * contiguous blocks, and every switch above joins the rank most of its lower neighbours
 * are in (on a tie, the rank holding fewest nodes), so a fat tree's pods stay whole and
 * its cores spread over the ranks.
 */
#ifndef FABEMU_TOPOLOGY_PARTITION_H
#define FABEMU_TOPOLOGY_PARTITION_H

#include "ns3/nstime.h"
#include "ns3/topology-spec.h"

#include <cstdint>
#include <map>
#include <vector>

namespace ns3
{

/// The switches a partition can split at: those with a host (leaves), in node order.
std::vector<uint32_t> PartitionLeaves(const TopologySpec& spec);

/**
 * \brief The rank of every node of \p spec (indexed as spec.Nodes()) for \p ranks ranks.
 * \p pinned puts switches (node index -> rank) where the user wants them: a pinned leaf
 * takes its hosts along, and the other switches follow the rules above around it.
 * Throws std::invalid_argument when there are fewer leaves than ranks, no ranks, a pin
 * on a node that is not a switch or to a rank past the last, or a rank left empty.
 */
std::vector<uint32_t> PartitionByTier(const TopologySpec& spec, uint32_t ranks,
                                      const std::map<uint32_t, uint32_t>& pinned = {});

/**
 * \brief The links (indices into spec.Links()) whose ends \p rankOf puts on different
 * ranks, and the smallest delay among them (the lookahead; Time::Max() when none cross).
 */
struct PartitionCut
{
    std::vector<uint32_t> links;
    Time lookahead{Time::Max()};
};

PartitionCut CutOf(const TopologySpec& spec, const std::vector<uint32_t>& rankOf);

} // namespace ns3

#endif
