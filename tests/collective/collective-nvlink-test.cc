// Collectives on one dgx-h100's NVLink: 8 GPUs, four NVSwitches split 5/4/4/5. The ring
// all-reduce's busBw against NCCL's measured ~370 GB/s (nccl-tests#212, reference 2.4),
// the analytical mode against the packet one, and a mesh pair without a link failing.
#include "ns3/collective-cost-model.h"
#include "ns3/collective.h"
#include "ns3/nvlink-collective-transport.h"
#include "ns3/nvlink-helper.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

#include <doctest/doctest.h>

#include <numeric>

using namespace ns3;

TEST_CASE("dgx-h100: 8-GPU ring all-reduce of 1 GB reaches NCCL's ~370 GB/s busBw")
{
    NvlinkHelper h;
    // 64 KiB packets: HeaderBytes scales with MaxPayload, so the usable rate stays NCCL's
    // and the run takes a second instead of minutes (docs/performance.md).
    h.SetLinkAttribute("MaxPayload", UintegerValue(65536));
    NvlinkHelper::Node n = h.InstallSwitched(8, {5, 4, 4, 5});
    REQUIRE(n.Ok());
    std::vector<uint32_t> gpus(8);
    std::iota(gpus.begin(), gpus.end(), 0);
    Ptr<NvlinkCollectiveTransport> t = CreateObject<NvlinkCollectiveTransport>();
    t->Setup(n.node, gpus);
    const uint64_t bytes = 1ull << 30;
    Ptr<Collective> c = CreateObject<Collective>();
    c->SetTransport(t);
    c->SetSchedule(
        CollectiveSchedule::Build(CollectiveOp::AllReduce, CollectiveAlgorithm::Ring, 8, bytes));
    Simulator::ScheduleNow(&Collective::Start, c);
    Simulator::Run();
    REQUIRE(c->GetState() == Collective::State::Completed);
    const double seconds = c->GetDuration().GetSeconds();
    const double busBw = bytes / seconds * CollectiveBusBwFactor(CollectiveOp::AllReduce, 8);
    MESSAGE("ring all-reduce 1 GiB: " << seconds * 1e3 << " ms, busBw " << busBw / 1e9 << " GB/s");
    // NCCL's measured ring figure, within 10 %: a GPU sends to its ring neighbour over all
    // 18 links at NCCL's usable 20.6 GB/s each (370.8 GB/s).
    CHECK(busBw / 1e9 == doctest::Approx(370).epsilon(0.10));
    // The path the analytical mode sees: 18 x 20.6 GB/s; alpha a 64 KiB packet's store
    // and forward on a 4-link bundle at each of two hops (1.6 us), and the switch's 25 ns.
    const auto cost = t->GetPathCost(0, 1);
    CHECK(cost.bytesPerSecond / 1e9 == doctest::Approx(18 * 20.6).epsilon(0.001));
    CHECK(cost.alpha > MicroSeconds(1));
    CHECK(cost.alpha < MicroSeconds(2));
    const Time analytical =
        CollectiveAnalyticalTime(CollectiveOp::AllReduce, CollectiveAlgorithm::Ring, 8, bytes,
                                 [&](uint32_t a, uint32_t b) { return t->GetPathCost(a, b); });
    CHECK(seconds == doctest::Approx(analytical.GetSeconds()).epsilon(0.05));
    CHECK(n.node->GetOverflows() == 0);
    c->Dispose();
    t->Dispose();
    Simulator::Destroy();
}

TEST_CASE("a mesh pair without a link fails the collective with the node's reason")
{
    NvlinkHelper h;
    // A line 0 - 1 - 2: GPUs 0 and 2 share no link.
    NvlinkHelper::Node n = h.InstallMesh(3, {{0, 1, 2}, {1, 2, 2}});
    REQUIRE(n.Ok());
    Ptr<NvlinkCollectiveTransport> t = CreateObject<NvlinkCollectiveTransport>();
    t->Setup(n.node, {0, 1, 2});
    Ptr<Collective> c = CreateObject<Collective>();
    c->SetTransport(t);
    c->SetSchedule(
        CollectiveSchedule::Build(CollectiveOp::AllGather, CollectiveAlgorithm::Ring, 3, 3 << 20));
    Simulator::ScheduleNow(&Collective::Start, c);
    Simulator::Run();
    CHECK(c->GetState() == Collective::State::Failed);
    CHECK(c->GetFailure().find("the transfer from gpu2 to gpu0 failed") == 0);
    c->Dispose();
    t->Dispose();
    Simulator::Destroy();
}
