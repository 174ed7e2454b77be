// Collectives packet by packet on a RoCEv2 star: their times against the alpha-beta
// formulas, with alpha and the bandwidth the fabric's own (RdmaCollectiveTransport's
// fit to its ideal FCT), and every rank holding exactly what the operation says.
#include "ns3/collective-cost-model.h"
#include "ns3/collective.h"
#include "ns3/rdma-collective-transport.h"
#include "ns3/roce-fabric-helper.h"
#include "ns3/simulator.h"

#include <doctest/doctest.h>

#include <cmath>
#include <numeric>

using namespace ns3;

namespace
{

struct Outcome
{
    double seconds{0};
    double analytical{0};
    CollectiveTransport::PathCost cost;
    std::vector<uint64_t> received;
};

Outcome
RunOnStar(uint32_t n, CollectiveOp op, CollectiveAlgorithm algorithm, uint64_t bytes)
{
    RoceFabricHelper fabric;
    fabric.Install(TopologySpec::Star(n, LinkParams{}));
    std::vector<uint32_t> hosts(n);
    std::iota(hosts.begin(), hosts.end(), 0);
    Ptr<RdmaCollectiveTransport> transport = CreateObject<RdmaCollectiveTransport>();
    transport->Setup(&fabric, hosts);
    Ptr<Collective> c = CreateObject<Collective>();
    c->SetTransport(transport);
    c->SetSchedule(CollectiveSchedule::Build(op, algorithm, n, bytes));
    Simulator::Schedule(MicroSeconds(10), &Collective::Start, c);
    Simulator::Run();
    Outcome o;
    REQUIRE(c->GetState() == Collective::State::Completed); // holdings checked at the end
    o.seconds = c->GetDuration().GetSeconds();
    o.cost = transport->GetPathCost(0, 1);
    o.analytical = CollectiveAnalyticalTime(op, algorithm, n, bytes, [&](uint32_t a, uint32_t b) {
                       return transport->GetPathCost(a, b);
                   }).GetSeconds();
    o.received = c->GetBytesReceived();
    c->Dispose();
    transport->Dispose();
    Simulator::Destroy();
    return o;
}

} // namespace

TEST_CASE("ring all-reduce on 2, 4 and 8 hosts takes 2(n-1)/n S/B + 2(n-1) alpha within 3 %")
{
    const uint64_t s = 16 << 20;
    for (uint32_t n : {2u, 4u, 8u})
    {
        CAPTURE(n);
        const auto o = RunOnStar(n, CollectiveOp::AllReduce, CollectiveAlgorithm::Ring, s);
        // The fitted path: 100 Gb/s less RoCEv2's headers (about 6 % at MTU 1024), and an
        // alpha of a round trip through the switch, microseconds.
        CHECK(o.cost.bytesPerSecond > 0.9 * 12.5e9);
        CHECK(o.cost.bytesPerSecond < 12.5e9);
        CHECK(o.cost.alpha > MicroSeconds(2));
        CHECK(o.cost.alpha < MicroSeconds(10));
        const double b = o.cost.bytesPerSecond;
        const double a = o.cost.alpha.GetSeconds();
        const double formula = 2.0 * (n - 1) / n * s / b + 2.0 * (n - 1) * a;
        CHECK(std::abs(o.analytical - formula) < 1e-9); // analytical: the formula itself
        CHECK(o.seconds == doctest::Approx(formula).epsilon(0.03));
        for (uint64_t r : o.received)
        {
            CHECK(r == 2 * (n - 1) * (s / n));
        }
    }
}

TEST_CASE("ring all-gather and reduce-scatter take (n-1)/n S/B; halving-doubling its own form")
{
    const uint64_t s = 16 << 20;
    const uint32_t n = 4;
    for (auto op : {CollectiveOp::AllGather, CollectiveOp::ReduceScatter})
    {
        const std::string opName = CollectiveOpName(op);
        CAPTURE(opName);
        const auto o = RunOnStar(n, op, CollectiveAlgorithm::Ring, s);
        const double formula =
            1.0 * (n - 1) / n * s / o.cost.bytesPerSecond + (n - 1) * o.cost.alpha.GetSeconds();
        CHECK(o.seconds == doctest::Approx(formula).epsilon(0.03));
        CHECK(o.analytical == doctest::Approx(formula).epsilon(1e-9));
    }
    const auto hd = RunOnStar(8, CollectiveOp::AllReduce, CollectiveAlgorithm::HalvingDoubling, s);
    const double formula =
        2.0 * 7 / 8 * s / hd.cost.bytesPerSecond + 2 * 3 * hd.cost.alpha.GetSeconds();
    CHECK(hd.seconds == doctest::Approx(formula).epsilon(0.03));
    CHECK(hd.analytical == doctest::Approx(formula).epsilon(1e-9));
    for (uint64_t r : hd.received)
    {
        CHECK(r == 2 * 7 * (s / 8));
    }
}

TEST_CASE("direct all-to-all: each host's sends share its link")
{
    const uint64_t s = 16 << 20;
    const auto o = RunOnStar(4, CollectiveOp::AllToAll, CollectiveAlgorithm::Direct, s);
    const double formula = 3.0 / 4 * s / o.cost.bytesPerSecond + o.cost.alpha.GetSeconds();
    CHECK(o.seconds == doctest::Approx(formula).epsilon(0.03));
}
