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

namespace
{

/// A server of 8 GPUs on NVSwitches, \p split links from each to each switch, every GPU
/// a rank. 64 KiB packets: HeaderBytes scales with MaxPayload, so the usable rate stays
/// NCCL's and a run takes a second instead of minutes (docs/performance.md).
struct Server
{
    NvlinkHelper::Node n;
    Ptr<NvlinkCollectiveTransport> t;
};

Server
SwitchedServer(const std::vector<uint32_t>& split)
{
    NvlinkHelper h;
    h.SetLinkAttribute("MaxPayload", UintegerValue(65536));
    Server s{h.InstallSwitched(8, split), CreateObject<NvlinkCollectiveTransport>()};
    REQUIRE(s.n.Ok());
    std::vector<uint32_t> gpus(8);
    std::iota(gpus.begin(), gpus.end(), 0);
    s.t->Setup(s.n.node, gpus);
    return s;
}

} // namespace

TEST_CASE("dgx-h100: 8-GPU ring all-reduce of 1 GB reaches NCCL's ~370 GB/s busBw")
{
    const Server s = SwitchedServer({5, 4, 4, 5});
    const auto& n = s.n;
    const Ptr<NvlinkCollectiveTransport> t = s.t;
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

namespace
{

struct NvlsRun
{
    double seconds{0};
    double analytical{0};
    std::vector<uint64_t> received;
    uint64_t sums{0};
    uint64_t copies{0};
    uint64_t overflows{0};
};

/// \p op by \p algorithm over the 8 GPUs of a switched server (\p split links per switch).
NvlsRun
RunNvlsServer(CollectiveOp op, CollectiveAlgorithm algorithm, uint64_t bytes,
              const std::vector<uint32_t>& split)
{
    const Server s = SwitchedServer(split);
    const auto& n = s.n;
    const Ptr<NvlinkCollectiveTransport> t = s.t;
    REQUIRE(t->CheckInSwitch({0, 1, 2, 3, 4, 5, 6, 7}).empty());
    Ptr<Collective> c = CreateObject<Collective>();
    c->SetTransport(t);
    c->SetSchedule(CollectiveSchedule::Build(op, algorithm, 8, bytes));
    Simulator::ScheduleNow(&Collective::Start, c);
    Simulator::Run();
    REQUIRE(c->GetState() == Collective::State::Completed);
    NvlsRun r;
    r.seconds = c->GetDuration().GetSeconds();
    r.analytical =
        CollectiveAnalyticalTime(
            op, algorithm, 8, bytes, [&](uint32_t a, uint32_t b) { return t->GetPathCost(a, b); },
            {}, [&](uint32_t a) { return t->GetInSwitchCost(a); })
            .GetSeconds();
    r.received = c->GetBytesReceived();
    for (uint32_t k = 0; k < n.node->GetNSwitches(); ++k)
    {
        r.sums += n.node->GetSwitch(k)->GetReduced();
        r.copies += n.node->GetSwitch(k)->GetMulticastCopies();
    }
    r.overflows = n.node->GetOverflows();
    c->Dispose();
    t->Dispose();
    Simulator::Destroy();
    return r;
}

} // namespace

TEST_CASE("dgx-h100: NVLS all-reduce of 1 GB beats ring and reaches NCCL's ~480 GB/s busBw")
{
    const uint64_t bytes = 1ull << 30;
    const NvlsRun nvls =
        RunNvlsServer(CollectiveOp::AllReduce, CollectiveAlgorithm::Nvls, bytes, {5, 4, 4, 5});
    const double busBw = bytes / nvls.seconds * CollectiveBusBwFactor(CollectiveOp::AllReduce, 8);
    MESSAGE("nvls all-reduce 1 GiB: " << nvls.seconds * 1e3 << " ms (analytical "
                                      << nvls.analytical * 1e3 << "), busBw " << busBw / 1e9
                                      << " GB/s");
    // Calibrated (NvSwitch::NvlsEfficiency) to NCCL's ~480 GB/s (nccl-tests#212): within 10 %.
    CHECK(busBw / 1e9 == doctest::Approx(480).epsilon(0.10));
    const NvlsRun ring =
        RunNvlsServer(CollectiveOp::AllReduce, CollectiveAlgorithm::Ring, bytes, {5, 4, 4, 5});
    CHECK(nvls.seconds < ring.seconds * 0.85);
    CHECK(nvls.seconds == doctest::Approx(nvls.analytical).epsilon(0.05));
    // Each GPU takes in its sum (S/n) and every multicast, its own included (S); each
    // switch made one sum per 64 KiB packet of every GPU's piece and 8 copies of each
    // multicast packet.
    for (uint64_t got : nvls.received)
    {
        CHECK(got == bytes / 8 + bytes);
    }
    CHECK(nvls.sums > 0);
    CHECK(nvls.copies == 8 * nvls.sums);
    CHECK(nvls.overflows == 0);
}

TEST_CASE("an NVLS sum waits for its latest rank: a straggler holds every rank's first sum")
{
    const Server s = SwitchedServer({5, 4, 4, 5});
    const Ptr<NvlinkCollectiveTransport> t = s.t;
    Ptr<Collective> c = CreateObject<Collective>();
    c->SetTransport(t);
    c->SetSchedule(CollectiveSchedule::Build(CollectiveOp::AllReduce, CollectiveAlgorithm::Nvls, 8,
                                             64ull << 20));
    std::vector<Time> delays(8);
    delays[3] = MilliSeconds(1); // gpu3 is late
    c->SetRankDelays(delays);
    Simulator::ScheduleNow(&Collective::Start, c);
    Simulator::Run();
    REQUIRE(c->GetState() == Collective::State::Completed);
    // Every sum needs gpu3's bytes: none, into any rank, arrives before it sends them.
    for (const auto& x : c->GetTransfers())
    {
        CHECK(x.posted >= MilliSeconds(1));
        CHECK(x.arrived > MilliSeconds(1));
    }
    c->Dispose();
    t->Dispose();
    Simulator::Destroy();
}

TEST_CASE("8 x H800 (8 NVLinks a GPU): NVLS predicts NCCL's measured 215 GB/s, not fitted to it")
{
    // H800 has 8 NVLink4 links per GPU (reference 2.2; SimAI's H800_NVLINKS); the split
    // 2/2/2/2 over four NVSwitches is an assumption. Nothing here was fitted to 215 GB/s
    // (nccl#1374): NvlsEfficiency comes from the H100's 480.
    const uint64_t bytes = 1ull << 30;
    const NvlsRun h800 =
        RunNvlsServer(CollectiveOp::AllReduce, CollectiveAlgorithm::Nvls, bytes, {2, 2, 2, 2});
    const double busBw = bytes / h800.seconds * CollectiveBusBwFactor(CollectiveOp::AllReduce, 8);
    MESSAGE("H800 nvls all-reduce 1 GiB: busBw " << busBw / 1e9 << " GB/s");
    CHECK(busBw / 1e9 == doctest::Approx(215).epsilon(0.10));
}

TEST_CASE("NVLS reduce-scatter and all-gather: the switch's half of the all-reduce each")
{
    const uint64_t bytes = 256ull << 20;
    const NvlsRun rs =
        RunNvlsServer(CollectiveOp::ReduceScatter, CollectiveAlgorithm::Nvls, bytes, {5, 4, 4, 5});
    const NvlsRun ag =
        RunNvlsServer(CollectiveOp::AllGather, CollectiveAlgorithm::Nvls, bytes, {5, 4, 4, 5});
    MESSAGE("nvls 256 MiB: reduce-scatter "
            << rs.seconds * 1e3 << " ms (analytical " << rs.analytical * 1e3 << "), all-gather "
            << ag.seconds * 1e3 << " ms (analytical " << ag.analytical * 1e3 << ")");
    CHECK(rs.seconds == doctest::Approx(rs.analytical).epsilon(0.05));
    CHECK(ag.seconds == doctest::Approx(ag.analytical).epsilon(0.05));
    for (uint64_t got : rs.received)
    {
        CHECK(got == bytes / 8);
    }
    for (uint64_t got : ag.received)
    {
        CHECK(got == bytes);
    }
    CHECK(rs.copies == 0);
    CHECK(ag.sums == 0);
}

TEST_CASE("NVLS is refused where the switches cannot sum: gen2, or GPUs joined directly")
{
    NvlinkHelper h;
    h.SetSwitchAttribute("Generation", UintegerValue(2));
    NvlinkHelper::Node a100 = h.InstallSwitched(8, {2, 2, 2, 2, 2, 2});
    REQUIRE(a100.Ok());
    Ptr<NvlinkCollectiveTransport> t = CreateObject<NvlinkCollectiveTransport>();
    t->Setup(a100.node, {0, 1, 2, 3});
    CHECK(t->CheckInSwitch({0, 1, 2, 3}) ==
          "NVLS needs NVSwitch gen3 or later (NVLink SHARP); this server's are gen2");
    CHECK(t->GetInSwitchCost(0).bytesPerSecond == 0);
    // A collective sent there anyway fails with the reason, naming the rank.
    Ptr<Collective> c = CreateObject<Collective>();
    c->SetTransport(t);
    c->SetSchedule(
        CollectiveSchedule::Build(CollectiveOp::AllReduce, CollectiveAlgorithm::Nvls, 4, 4 << 20));
    Simulator::ScheduleNow(&Collective::Start, c);
    Simulator::Run();
    CHECK(c->GetState() == Collective::State::Failed);
    CHECK(c->GetFailure().find("the sum in the switch into gpu") == 0);
    CHECK(c->GetFailure().find("gen2") != std::string::npos);
    c->Dispose();
    t->Dispose();
    Simulator::Destroy();
    NvlinkHelper m;
    NvlinkHelper::Node mesh = m.InstallMesh(2, {{0, 1, 4}});
    REQUIRE(mesh.Ok());
    Ptr<NvlinkCollectiveTransport> direct = CreateObject<NvlinkCollectiveTransport>();
    direct->Setup(mesh.node, {0, 1});
    CHECK(direct->CheckInSwitch({0, 1}) ==
          "NVLS needs NVSwitches; this server's GPUs are joined directly");
    direct->Dispose();
    mesh.node->Dispose();
    a100.node->Dispose();
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
