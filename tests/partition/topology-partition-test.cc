#include "ns3/rank-exchange.h"
#include "ns3/rank-sent-tag.h"
#include "ns3/simple-net-device.h"
#include "ns3/topology-partition.h"

#include <doctest/doctest.h>

#include <map>
#include <set>
#include <stdexcept>

using namespace ns3;

namespace
{
const LinkParams kLink{DataRate("100Gbps"), MicroSeconds(1)};
}

TEST_CASE("a k=4 fat tree splits at its tiers: pods whole, cores spread, hosts with their leaf")
{
    const TopologySpec spec = TopologySpec::FatTree(4, kLink, kLink);
    CHECK(PartitionLeaves(spec).size() == 8); // k^2/2 edge switches
    for (const uint32_t ranks : {1u, 2u, 4u})
    {
        CAPTURE(ranks);
        const auto rankOf = PartitionByTier(spec, ranks);
        REQUIRE(rankOf.size() == spec.Nodes().size());
        std::map<uint32_t, uint32_t> nodesOn;
        for (uint32_t r : rankOf)
        {
            CHECK(r < ranks);
            ++nodesOn[r];
        }
        CHECK(nodesOn.size() == ranks); // every rank has nodes
        // Each host is on its leaf's rank; with 4 ranks, a pod is a rank.
        const auto adjacency = spec.Adjacency(true);
        for (uint32_t h : spec.Hosts())
        {
            CHECK(rankOf[h] == rankOf[adjacency[h].front().first]);
        }
        const PartitionCut cut = CutOf(spec, rankOf);
        if (ranks == 1)
        {
            CHECK(cut.links.empty());
            CHECK(cut.lookahead == Time::Max());
            continue;
        }
        // Only links between aggregation and core switches cross: no host link, no
        // link inside a pod.
        CHECK(!cut.links.empty());
        for (uint32_t l : cut.links)
        {
            const auto& link = spec.Links()[l];
            CHECK(spec.Nodes()[link.a].isSwitch);
            CHECK(spec.Nodes()[link.b].isSwitch);
        }
        CHECK(cut.lookahead == MicroSeconds(1));
        // The 4 cores spread evenly: as many nodes on every rank (36 nodes).
        for (const auto& [r, n] : nodesOn)
        {
            CHECK(n == 36 / ranks);
        }
    }
}

TEST_CASE("more ranks than leaves, or none, are refused; the smallest crossing delay is the "
          "lookahead")
{
    const TopologySpec spec = TopologySpec::FatTree(4, kLink, kLink);
    CHECK_THROWS_WITH_AS(PartitionByTier(spec, 9),
                         "9 ranks for 8 partitionable switches (those with hosts): a rank "
                         "needs at least one",
                         std::invalid_argument);
    CHECK_THROWS_AS(PartitionByTier(spec, 0), std::invalid_argument);
    // A leaf-spine whose two leaves go to two ranks: the slower link sets the lookahead.
    const TopologySpec ls =
        TopologySpec::LeafSpine(2, 2, 2, kLink, LinkParams{DataRate("100Gbps"), NanoSeconds(300)});
    const auto rankOf = PartitionByTier(ls, 2);
    const PartitionCut cut = CutOf(ls, rankOf);
    CHECK(cut.links.size() == 2); // each spine sits with one leaf: its link to the other crosses
    CHECK(cut.lookahead == NanoSeconds(300));
}

TEST_CASE("pinned switches go where they are pinned; a leaf takes its hosts; bad pins are refused")
{
    const TopologySpec spec = TopologySpec::FatTree(4, kLink, kLink);
    const auto leaves = PartitionLeaves(spec);
    const auto adjacency = spec.Adjacency(true);
    // The first leaf on rank 1, the last on rank 0: the reverse of the default blocks.
    const std::map<uint32_t, uint32_t> pins{{leaves.front(), 1}, {leaves.back(), 0}};
    const auto byDefault = PartitionByTier(spec, 2);
    CHECK(byDefault[leaves.front()] == 0);
    CHECK(byDefault[leaves.back()] == 1);
    const auto rankOf = PartitionByTier(spec, 2, pins);
    CHECK(rankOf[leaves.front()] == 1);
    CHECK(rankOf[leaves.back()] == 0);
    for (uint32_t h : spec.Hosts())
    {
        CHECK(rankOf[h] == rankOf[adjacency[h].front().first]);
    }
    CHECK_THROWS_WITH_AS(PartitionByTier(spec, 2, {{spec.Hosts().front(), 0}}),
                         doctest::Contains("is not a switch"), std::invalid_argument);
    CHECK_THROWS_WITH_AS(PartitionByTier(spec, 2, {{leaves.front(), 2}}),
                         doctest::Contains("pinned to rank 2 of a run with 2 ranks"),
                         std::invalid_argument);
    // Every switch on rank 0 leaves rank 1 nothing.
    std::map<uint32_t, uint32_t> all;
    for (uint32_t u = 0; u < spec.Nodes().size(); ++u)
    {
        if (spec.Nodes()[u].isSwitch)
        {
            all[u] = 0;
        }
    }
    CHECK_THROWS_WITH_AS(PartitionByTier(spec, 2, all), doctest::Contains("rank 1 would simulate"),
                         std::invalid_argument);
}

namespace
{

struct DoorLog
{
    uint32_t sent{0};
    Time at;
    uint32_t node{0};
    uint32_t device{0};
    uint32_t listened{0};
};

DoorLog gDoor;

void
NoteSend(Ptr<Packet> p, Time at, uint32_t node, uint32_t device)
{
    ++gDoor.sent;
    gDoor.at = at;
    gDoor.node = node;
    gDoor.device = device;
    (void)p;
}

void
NoteListen(Ptr<NetDevice> device, RankExchange::Receive receive)
{
    ++gDoor.listened;
    receive(Create<Packet>(10)); // what a rank would hand the device
    (void)device;
}

} // namespace

TEST_CASE("links between ranks need the door: refused, naming the link, until one is open")
{
    // No partitioned run has opened it in this process.
    REQUIRE_FALSE(RankExchange::IsOpen());
    try
    {
        RankSentTag::Lookahead(MicroSeconds(1), "e0-a0");
        FAIL("a crossing link was taken with no door open");
    }
    catch (const std::invalid_argument& e)
    {
        const std::string what = e.what();
        CHECK(what.find("link e0-a0 crosses ranks, but no MPI interface is open") !=
              std::string::npos);
    }
    RankExchange::Open({&NoteSend, &NoteListen});
    REQUIRE(RankExchange::IsOpen());
    CHECK(RankSentTag::Lookahead(MicroSeconds(1), "e0-a0") == MicroSeconds(1) - PicoSeconds(1));
    CHECK_THROWS_AS(RankSentTag::Lookahead(PicoSeconds(1), "e0-a0"), std::invalid_argument);
    // What goes through reaches the door unchanged.
    RankExchange::Send(Create<Packet>(100), NanoSeconds(1500), 7, 2);
    CHECK(gDoor.sent == 1);
    CHECK(gDoor.at == NanoSeconds(1500));
    CHECK(gDoor.node == 7);
    CHECK(gDoor.device == 2);
    uint32_t heard = 0;
    RankExchange::Listen(CreateObject<SimpleNetDevice>(),
                         RankExchange::Receive([&heard](Ptr<Packet> p) { heard += p->GetSize(); }));
    CHECK(gDoor.listened == 1);
    CHECK(heard == 10);
    RankExchange::Open({nullptr, nullptr});
    CHECK_FALSE(RankExchange::IsOpen());
}
