#include "topology-spec.h"

#include <doctest/doctest.h>

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
    const uint32_t nearHost = 0;                                           // under edge0
    CHECK(hops[edge0][farHost].size() == k / 2);  // up to every aggregation switch
    CHECK(hops[agg0][farHost].size() == k / 2);   // up to every core it reaches
    CHECK(hops[core0][farHost].size() == 1);      // down: one way to the far pod
    CHECK(hops[edge0][nearHost].size() == 1);     // straight to its own host
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

TEST_CASE("names are h0.. for hosts and s0.. for switches")
{
    const auto t = TopologySpec::Star(3, LinkParams{});
    CHECK(t.Nodes()[0].name == "s0");
    CHECK(t.Nodes()[t.Hosts()[2]].name == "h2");
}
