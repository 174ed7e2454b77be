// Speed of the collective layer, both modes, in one run:
//  - packet mode: a ring all-reduce of --mib MiB over the 128 hosts of a k=8 RoCEv2 fat
//    tree (100 Gb/s): wall time, events, simulated bytes per wall second, peak memory;
//  - analytical mode: the same operation's alpha-beta time for 128 ranks (the baseline,
//    with the fabric's own per-pair fits) and for 16,384 ranks, each pair costing what
//    the fat tree's longest path costs (a fabric of 16,384 hosts is not built: the closed
//    form's cost is what is measured, not the per-pair fit's).
// Prints one line per measurement and the packet/analytical wall-time ratio.
#include "ns3/collective-cost-model.h"
#include "ns3/collective.h"
#include "ns3/rdma-collective-transport.h"
#include "ns3/roce-fabric-helper.h"
#include "ns3/simulator.h"

#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <numeric>

using namespace ns3;

namespace
{

double
Since(std::chrono::steady_clock::time_point t0)
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

long
PeakRssMiB()
{
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return u.ru_maxrss / 1024;
}

} // namespace

int
main(int argc, char** argv)
{
    uint64_t mib = 16;
    for (int i = 1; i + 1 < argc; ++i)
    {
        if (std::strcmp(argv[i], "--mib") == 0)
        {
            mib = std::strtoull(argv[i + 1], nullptr, 10);
        }
    }
    Time::SetResolution(Time::PS);
    const uint64_t bytes = mib << 20;
    RoceFabricHelper fabric;
    fabric.Install(TopologySpec::FatTree(8, LinkParams{}, LinkParams{}));
    const uint32_t n = fabric.GetNHosts();
    std::vector<uint32_t> hosts(n);
    std::iota(hosts.begin(), hosts.end(), 0);
    Ptr<RdmaCollectiveTransport> t = CreateObject<RdmaCollectiveTransport>();
    t->Setup(&fabric, hosts);

    // Packet mode.
    const auto p0 = std::chrono::steady_clock::now();
    Ptr<Collective> c = CreateObject<Collective>();
    c->SetTransport(t);
    c->SetSchedule(
        CollectiveSchedule::Build(CollectiveOp::AllReduce, CollectiveAlgorithm::Ring, n, bytes));
    Simulator::ScheduleNow(&Collective::Start, c);
    Simulator::Run();
    const double packetWall = Since(p0);
    const uint64_t events = Simulator::GetEventCount();
    uint64_t received = 0;
    for (uint64_t b : c->GetBytesReceived())
    {
        received += b;
    }
    const bool completed = c->GetState() == Collective::State::Completed;
    const double simulated = c->GetDuration().GetSeconds();
    std::printf("packet: ring all-reduce %lu MiB over %u hosts (k=8 fat tree, 100 Gb/s): %s, "
                "%.3f ms simulated in %.2f s wall, %lu events, %.2f GB delivered per wall s, "
                "peak RSS %ld MiB\n",
                static_cast<unsigned long>(mib), n, completed ? "completed" : "NOT completed",
                simulated * 1e3, packetWall, static_cast<unsigned long>(events),
                received / packetWall / 1e9, PeakRssMiB());

    // Analytical mode, the same operation with the fabric's per-pair fits.
    const auto a0 = std::chrono::steady_clock::now();
    const Time analytical =
        CollectiveAnalyticalTime(CollectiveOp::AllReduce, CollectiveAlgorithm::Ring, n, bytes,
                                 [&](uint32_t a, uint32_t b) { return t->GetPathCost(a, b); });
    const double analyticalWall = Since(a0);
    std::printf("analytical: the same, %u ranks: %.3f ms (packet %+.1f %%) in %.2f ms wall\n", n,
                analytical.GetSeconds() * 1e3, (simulated / analytical.GetSeconds() - 1) * 100,
                analyticalWall * 1e3);

    // Analytical mode at 16,384 ranks: every pair the fat tree's longest path.
    const auto cost = t->GetPathCost(0, n - 1);
    for (uint32_t ranks : {1024u, 16384u})
    {
        const auto b0 = std::chrono::steady_clock::now();
        const Time big = CollectiveAnalyticalTime(
            CollectiveOp::AllReduce, CollectiveAlgorithm::Ring, ranks, uint64_t{ranks} << 20,
            [&](uint32_t, uint32_t) { return cost; });
        const double wall = Since(b0);
        const auto h0 = std::chrono::steady_clock::now();
        const Time hd = CollectiveAnalyticalTime(
            CollectiveOp::AllReduce, CollectiveAlgorithm::HalvingDoubling, ranks,
            uint64_t{ranks} << 20, [&](uint32_t, uint32_t) { return cost; });
        const double hdWall = Since(h0);
        std::printf("analytical: ring all-reduce of %u MiB over %u ranks: %.3f ms in %.3f ms "
                    "wall; halving-doubling %.3f ms in %.3f ms wall\n",
                    ranks, ranks, big.GetSeconds() * 1e3, wall * 1e3, hd.GetSeconds() * 1e3,
                    hdWall * 1e3);
    }
    std::printf("ratio: packet / analytical wall time for the 128-host run: %.0f\n",
                packetWall / analyticalWall);
    c->Dispose();
    t->Dispose();
    Simulator::Destroy();
    return completed ? 0 : 1;
}
