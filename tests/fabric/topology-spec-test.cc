#include "ns3/topology-spec.h"

#include <doctest/doctest.h>

#include <functional>
#include <set>

using namespace ns3;

namespace
{
uint32_t
Switches(const TopologySpec& t)
{
    uint32_t n = 0;
    for (const auto& node : t.Nodes())
    {
        n += node.isSwitch;
    }
    return n;
}
} // namespace

TEST_CASE("a k-ary fat tree has k^3/4 hosts, 5k^2/4 switches and k^3/4 links per tier")
{
    for (uint32_t k : {2u, 4u, 8u})
    {
        CAPTURE(k);
        const auto t = TopologySpec::FatTree(k, LinkParams{}, LinkParams{});
        CHECK(t.Hosts().size() == k * k * k / 4);
        CHECK(Switches(t) == 5 * k * k / 4);
        CHECK(t.Links().size() == 3 * k * k * k / 4);
    }
}

TEST_CASE("ECMP next hops: every path up a fat tree, one path down")
{
    const uint32_t k = 4;
    const auto t = TopologySpec::FatTree(k, LinkParams{}, LinkParams{});
    const auto hops = t.NextHops();
    // Node order: (k/2)^2 cores, then per pod k/2 aggregation and k/2 edge switches, then hosts.
    const uint32_t core0 = 0;
    const uint32_t agg0 = (k / 2) * (k / 2);
    const uint32_t edge0 = agg0 + k / 2;
    const uint32_t farHost = static_cast<uint32_t>(t.Hosts().size() - 1); // in the last pod
    const uint32_t nearHost = 0;                                          // under edge0
    CHECK(hops[edge0][farHost].size() == k / 2);     // up to every aggregation switch
    CHECK(hops[agg0][farHost].size() == k / 2);      // up to every core it reaches
    CHECK(hops[core0][farHost].size() == 1);         // down: one way to the far pod
    CHECK(hops[edge0][nearHost].size() == 1);        // straight to its own host
    CHECK(hops[t.Hosts()[1]][nearHost].size() == 1); // a host sends through its edge
}

TEST_CASE("leaf-spine, star, dumbbell and pair have the shapes their names say")
{
    const auto ls = TopologySpec::LeafSpine(4, 2, 3, LinkParams{}, LinkParams{});
    CHECK(ls.Hosts().size() == 12);
    CHECK(Switches(ls) == 6);
    CHECK(ls.Links().size() == 4 * 2 + 12);
    CHECK(ls.NextHops()[0][11].size() == 2); // leaf 0 to a host on leaf 3: either spine

    const auto star = TopologySpec::Star(5, LinkParams{});
    CHECK(star.Hosts().size() == 5);
    CHECK(Switches(star) == 1);

    const auto db = TopologySpec::Dumbbell(6, LinkParams{}, LinkParams{DataRate("10Gbps")});
    CHECK(db.Hosts().size() == 6);
    CHECK(db.Links()[0].params.rate == DataRate("10Gbps")); // the bottleneck comes first

    const auto pair = TopologySpec::Pair(LinkParams{});
    CHECK(pair.Hosts().size() == 2);
    CHECK(Switches(pair) == 0);
    CHECK(pair.NextHops()[pair.Hosts()[0]][1].size() == 1);
}

TEST_CASE("rail: one leaf per rail, or a leaf-spine per rail, joined by spines; links per tier")
{
    TopologySpec::RailShape shape;
    shape.servers = 6;
    shape.rails = 2;
    shape.spines = 1;
    shape.nicLink.rate = DataRate("400Gbps");
    shape.leafLink.rate = DataRate("800Gbps");
    shape.spineLink.rate = DataRate("200Gbps");
    const auto flat = TopologySpec::Rail(shape);
    CHECK(flat.Hosts().size() == 12);
    CHECK(Switches(flat) == 2 + 1);
    CHECK(flat.Links().size() == 2 + 12); // each rail to the spine; the NICs
    // Host server x rails + rail: h5 is server 2's NIC 1, on rail switch s1.
    const auto& nic = flat.Links().back(); // server 5, NIC 1
    CHECK(flat.Nodes()[nic.b].name == "s1");
    CHECK(nic.params.rate == DataRate("400Gbps"));
    CHECK(flat.Links()[0].params.rate == DataRate("200Gbps")); // the spine tier's rate

    shape.serversPerLeaf = 4; // 6 servers: two leaves per rail, and two rail spines
    shape.railSpines = 2;
    const auto tall = TopologySpec::Rail(shape);
    CHECK(tall.Hosts().size() == 12);
    CHECK(Switches(tall) == 2 * (2 + 2) + 1);
    // Per rail 2 leaves x 2 rail spines; the spine joins each rail's 2 rail spines; 12 NICs.
    CHECK(tall.Links().size() == 2 * 4 + 2 * 2 + 12);
    uint32_t leafTier = 0;
    uint32_t spineTier = 0;
    for (const auto& l : tall.Links())
    {
        leafTier += l.params.rate == DataRate("800Gbps");
        spineTier += l.params.rate == DataRate("200Gbps");
    }
    CHECK(leafTier == 8);
    CHECK(spineTier == 4);
    const auto hops = tall.NextHops();
    // Server 0 and server 5 on rail 0 sit on different leaves: either rail spine joins them.
    CHECK(hops[tall.Hosts()[0]][10].size() == 1);
    const uint32_t leaf0 = tall.Links()[8 + 4].b; // server 0's NIC 0 is the first NIC link
    CHECK(tall.Nodes()[tall.Links()[8 + 4].a].name == "h0");
    CHECK(hops[leaf0][10].size() == 2);
    CHECK(hops[leaf0][2].size() == 1); // server 1, same leaf: straight down
}

TEST_CASE("names are h0.. for hosts and s0.. for switches")
{
    const auto t = TopologySpec::Star(3, LinkParams{});
    CHECK(t.Nodes()[0].name == "s0");
    CHECK(t.Nodes()[t.Hosts()[2]].name == "h2");
}

namespace
{

using Hops = std::vector<std::vector<std::vector<uint32_t>>>;

/// The channel dependency graph of destination-based routes: channel = (link, direction);
/// an edge from each channel a route takes into a switch to each channel it may take out.
/// Returns whether it has a cycle (a credit loop: deadlock possible with lossless links).
bool
HasCycle(const TopologySpec& t, const Hops& hops)
{
    const auto& links = t.Links();
    auto channel = [&](uint32_t link, uint32_t from) {
        return 2 * link + (links[link].a == from ? 0 : 1);
    };
    auto other = [&](uint32_t link, uint32_t from) {
        return links[link].a == from ? links[link].b : links[link].a;
    };
    std::vector<std::set<uint32_t>> next(2 * links.size());
    for (uint32_t h = 0; h < t.Hosts().size(); ++h)
    {
        for (uint32_t u = 0; u < t.Nodes().size(); ++u)
        {
            if (!t.Nodes()[u].isSwitch)
            {
                continue;
            }
            for (uint32_t l1 : hops[u][h])
            {
                const uint32_t v = other(l1, u);
                if (!t.Nodes()[v].isSwitch)
                {
                    continue;
                }
                for (uint32_t l2 : hops[v][h])
                {
                    next[channel(l1, u)].insert(channel(l2, v));
                }
            }
        }
    }
    std::vector<int> state(next.size(), 0); // 0 new, 1 on the stack, 2 done
    std::function<bool(uint32_t)> visit = [&](uint32_t c) {
        state[c] = 1;
        for (uint32_t d : next[c])
        {
            if (state[d] == 1 || (state[d] == 0 && visit(d)))
            {
                return true;
            }
        }
        state[c] = 2;
        return false;
    };
    for (uint32_t c = 0; c < next.size(); ++c)
    {
        if (state[c] == 0 && visit(c))
        {
            return true;
        }
    }
    return false;
}

} // namespace

TEST_CASE("up/down routing: min-hop's routes on a fat tree and a leaf-spine")
{
    for (const auto& t : {TopologySpec::FatTree(4, LinkParams{}, LinkParams{}),
                          TopologySpec::LeafSpine(4, 2, 3, LinkParams{}, LinkParams{})})
    {
        const auto minHop = t.NextHops();
        const auto upDown = t.UpDownNextHops();
        for (uint32_t u = 0; u < t.Nodes().size(); ++u)
        {
            if (t.Nodes()[u].isSwitch)
            {
                CHECK(upDown[u] == minHop[u]);
            }
        }
        CHECK_FALSE(HasCycle(t, minHop));
    }
}

TEST_CASE(
    "up/down routing on a ring: every pair reachable, no credit loop where min-hop closes one")
{
    for (uint32_t switches : {3u, 4u, 5u, 8u})
    {
        CAPTURE(switches);
        const auto t = TopologySpec::Ring(switches, 2, LinkParams{}, LinkParams{});
        CHECK(t.Hosts().size() == 2 * switches);
        const auto upDown = t.UpDownNextHops();
        for (uint32_t u = 0; u < t.Nodes().size(); ++u)
        {
            for (uint32_t h = 0; h < t.Hosts().size(); ++h)
            {
                if (t.Nodes()[u].isSwitch)
                {
                    CHECK_FALSE(upDown[u][h].empty());
                }
            }
        }
        CHECK_FALSE(HasCycle(t, upDown));
        if (switches >= 4)
        {
            // Shortest paths go both ways round: the dependencies close the ring.
            CHECK(HasCycle(t, t.NextHops()));
        }
    }
}
