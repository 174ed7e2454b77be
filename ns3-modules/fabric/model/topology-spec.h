/*
 * A fabric's shape, independent of the fabric: hosts, switches and the links
 * between them, and the equal-cost next hops toward every host. Each fabric's
 * helper turns a spec into its own nodes, ports and links, so builders are
 * written once for RoCEv2, InfiniBand and iWARP.
 */
#ifndef FABEMU_TOPOLOGY_SPEC_H
#define FABEMU_TOPOLOGY_SPEC_H

#include "ns3/data-rate.h"
#include "ns3/nstime.h"

#include <functional>
#include <string>
#include <vector>

namespace ns3
{

/// Rate and propagation delay of a link.
struct LinkParams
{
    DataRate rate{"100Gbps"};
    Time delay{MicroSeconds(1)};
};

class TopologySpec
{
  public:
    struct Node
    {
        std::string name; ///< h0, h1, ... for hosts; s0, s1, ... for switches
        bool isSwitch;
    };
    struct Link
    {
        uint32_t a;
        uint32_t b;
        LinkParams params;
        bool up{true}; ///< false: down (a fault); routes and paths leave it out
    };

    /// Two hosts on one cable, no switch.
    static TopologySpec Pair(LinkParams link);
    /// \p hosts hosts on one switch.
    static TopologySpec Star(uint32_t hosts, LinkParams link);
    /// Two switches joined by \p bottleneck; hosts split evenly between them.
    static TopologySpec Dumbbell(uint32_t hosts, LinkParams edge, LinkParams bottleneck);
    /// Every leaf linked to every spine; \p hostsPerLeaf hosts per leaf.
    static TopologySpec LeafSpine(uint32_t leaves, uint32_t spines, uint32_t hostsPerLeaf,
                                  LinkParams hostLink, LinkParams fabricLink);
    /// Three-tier k-ary fat tree (k even): k^3/4 hosts, 5k^2/4 switches.
    static TopologySpec FatTree(uint32_t k, LinkParams hostLink, LinkParams fabricLink);
    /// \p switches switches in a ring (at least 3), \p hostsPerSwitch hosts on each: the
    /// smallest topology whose shortest paths close a cycle of channel dependencies.
    static TopologySpec Ring(uint32_t switches, uint32_t hostsPerSwitch, LinkParams hostLink,
                             LinkParams ringLink);
    /// The shape of a rail-optimised cluster (Rail).
    struct RailShape
    {
        uint32_t servers{2};
        uint32_t rails{8};          ///< NICs per server: NIC r of every server on rail r
        uint32_t serversPerLeaf{0}; ///< a rail leaf's server ports; 0: one leaf per rail
        uint32_t railSpines{2};     ///< spines inside a rail of more than one leaf
        uint32_t spines{0};         ///< spines joining the rails (0: the rails stay apart)
        LinkParams nicLink;         ///< a NIC to its rail leaf
        LinkParams leafLink;        ///< a rail leaf to its rail's spines
        LinkParams spineLink;       ///< a rail's top (its leaf, or its spines) to the spines
    };

    /// A rail-optimised cluster: NIC r of every server on rail r (host index server x rails
    /// + r). A rail is one leaf switch, or, when it has more servers than serversPerLeaf,
    /// ceil(servers / serversPerLeaf) leaves each joined to the rail's railSpines spines.
    /// Switches are numbered rail by rail (its leaves, then its spines), then the spines
    /// that join the rails, each linked to every rail's top switches.
    static TopologySpec Rail(const RailShape& shape);

    const std::vector<Node>& Nodes() const { return m_nodes; }
    const std::vector<Link>& Links() const { return m_links; }
    /// Node indices of the hosts, h0 first.
    const std::vector<uint32_t>& Hosts() const { return m_hosts; }
    /// Link \p link is unlike the builder's: another rate or delay (a slow cable).
    void SetLinkParams(uint32_t link, LinkParams p) { m_links.at(link).params = p; }
    /// Link \p link is down (false) or back up: NextHops, UpDownNextHops, PathLinks and
    /// Reaches leave a down link out, as routing that has seen it go does.
    void SetLinkUp(uint32_t link, bool up);
    bool IsLinkUp(uint32_t link) const { return m_links.at(link).up; }

    /**
     * \brief Equal-cost next hops.
     * \return result[node][host]: the links (indices into Links()) on shortest
     * paths from \p node toward host number \p host; hosts forward for no one.
     */
    std::vector<std::vector<std::vector<uint32_t>>> NextHops() const;
    /// NextHops one host at a time: \p fn(host, hops) with hops[node] as NextHops()[node][host],
    /// valid during that call only (the next host reuses it). A builder that installs
    /// routes a host at a time holds one column, not the whole table (nodes x hosts
    /// lists: gigabytes at 8,192 hosts).
    void ForEachHostNextHops(
        const std::function<void(uint32_t, const std::vector<std::vector<uint32_t>>&)>& fn) const;

    /**
     * \brief Next hops of up/down routing (Autonet; OpenSM's updn), deadlock-free on any
     * topology: the roots are the switches farthest from the hosts; a switch's rank is
     * its distance from the nearest root; a link goes "up" toward the lower (rank, node
     * index). A route is up-links then down-links, never down then up, so the channel
     * dependencies cannot close a cycle. Each switch keeps the shortest such routes
     * toward each host; where several are equal, all are returned (as NextHops()).
     * On a fat tree and a leaf-spine these are the min-hop routes.
     * \return as NextHops(); throws std::runtime_error naming a pair with no legal route,
     * unless a link is down (SetLinkUp): then such a pair has no next hops.
     */
    std::vector<std::vector<std::vector<uint32_t>>> UpDownNextHops() const;

    /// The links (indices into Links()) of one shortest path from host \p a to host
    /// \p b, in order from \p a; hosts do not forward. Aborts when there is none.
    std::vector<uint32_t> PathLinks(uint32_t a, uint32_t b) const;
    /// Whether any path joins host \p a to host \p b (a rail-only cluster joins only the
    /// NICs of one rail).
    bool Reaches(uint32_t a, uint32_t b) const;
    /// adj[node]: (neighbour, link) over the links that are up (all, \p withDown).
    std::vector<std::vector<std::pair<uint32_t, uint32_t>>> Adjacency(bool withDown = false) const;

  private:
    /// PathLinks's path; empty when there is none.
    std::vector<uint32_t> FirstPath(uint32_t a, uint32_t b) const;
    uint32_t AddHost();
    uint32_t AddSwitch();
    void AddLink(uint32_t a, uint32_t b, LinkParams p);

    std::vector<Node> m_nodes;
    std::vector<Link> m_links;
    std::vector<uint32_t> m_hosts;
    uint32_t m_switches{0};
    uint32_t m_downLinks{0};
};

} // namespace ns3

#endif
