// A partitioned run of a RoCEv2 k=4 fat tree on ns-3's distributed simulator, for the
// determinism test (partition-test.sh): run under `mpirun -np N` it splits the fabric
// at switch tiers (PartitionByTier), each rank simulating its part; alone, or with
// --engine none, it is the ordinary one-process run. Each rank prints the flows its hosts
// sent ("flow ID SRC DST FCT_PS") and its own counters; the union over the ranks must be
// the one-process run's, line for line.
#include "ns3/boolean.h"
#include "ns3/config.h"
#include "ns3/global-value.h"
#include "ns3/rdma-workload.h"
#include "ns3/roce-fabric-helper.h"
#include "ns3/simulator.h"
#include "ns3/string.h"
#include "ns3/topology-partition.h"
#include "ns3/uinteger.h"
#ifdef FABEMU_HAVE_MPI
#include "ns3/mpi-interface.h"
#include "ns3/mpi-rank-exchange.h"
#endif

#include <cstdio>
#include <cstring>
#include <iostream>
#include <stdexcept>
#include <string>

using namespace ns3;

namespace
{

struct Options
{
    std::string engine{"gtw"}; ///< gtw (granted time window), null (null messages), none
    uint64_t bytes{200'000};
    bool incast{true};       ///< --no-incast: the permutation alone
    std::string cc{"dcqcn"}; ///< --cc none: no DCQCN
    bool probe{false};       ///< --probe: only say whether this build can run partitioned
};

Options
Parse(int argc, char** argv)
{
    Options o;
    for (int i = 1; i < argc; ++i)
    {
        const std::string a = argv[i];
        if (a == "--engine" && i + 1 < argc)
        {
            o.engine = argv[++i];
        }
        else if (a == "--bytes" && i + 1 < argc)
        {
            o.bytes = std::stoull(argv[++i]);
        }
        else if (a == "--probe")
        {
            o.probe = true;
        }
        else if (a == "--no-incast")
        {
            o.incast = false;
        }
        else if (a == "--cc" && i + 1 < argc)
        {
            o.cc = argv[++i];
        }
        else
        {
            throw std::invalid_argument("unknown argument '" + a +
                                        "' (--engine gtw|null|none, --bytes N)");
        }
    }
    if (o.engine != "gtw" && o.engine != "null" && o.engine != "none")
    {
        throw std::invalid_argument("--engine must be gtw, null or none, not '" + o.engine + "'");
    }
    return o;
}

/// Which rank simulates each host, and this rank (SetLocalHosts asks).
std::vector<uint32_t> g_rankOfHost;
uint32_t g_rank = 0;

bool
IsLocal(uint32_t host)
{
    return g_rankOfHost.at(host) == g_rank;
}

void
Run(const Options& o, uint32_t rank, uint32_t ranks)
{
    if (o.cc == "dcqcn")
    {
        Config::SetDefault("ns3::RoceNic::CongestionControl", StringValue("ns3::DcqcnRateControl"));
    }
    // Pause an ingress once 32 KB of it are queued, so that the incast pauses.
    Config::SetDefault("ns3::SwitchMmu::StaticThreshold", BooleanValue(true));
    Config::SetDefault("ns3::SwitchMmu::StaticXoff", UintegerValue(32768));
    const LinkParams link{DataRate("100Gbps"), MicroSeconds(1)};
    const TopologySpec spec = TopologySpec::FatTree(4, link, link);
    const std::vector<uint32_t> rankOf = PartitionByTier(spec, ranks);
    RoceFabricHelper fabric;
    if (ranks > 1)
    {
        fabric.SetPartition(rankOf);
    }
    fabric.Install(spec);
    const uint32_t hosts = fabric.GetNHosts();
    std::vector<uint32_t> all(hosts);
    g_rank = rank;
    for (uint32_t h = 0; h < hosts; ++h)
    {
        all[h] = h;
        g_rankOfHost.push_back(rankOf[spec.Hosts()[h]]);
    }
    // A permutation, and an incast into h0 that makes the switches pause (PFC) and mark
    // (CNPs back to the senders), across the ranks' borders.
    Ptr<UniformRandomVariable> rng = CreateObject<UniformRandomVariable>();
    rng->SetStream(1);
    std::vector<FlowSpec> flows = workload::Permutation(all, o.bytes, Time(0), rng);
    const auto incast = workload::Incast(0, {1, 2, 5, 6, 9, 10, 13, 14}, o.bytes, MicroSeconds(3));
    if (o.incast)
    {
        flows.insert(flows.end(), incast.begin(), incast.end());
    }
    FlowRunner runner(fabric);
    runner.Add(flows);
    runner.SetLocalHosts(MakeCallback(&IsLocal));
    runner.Start();
    Simulator::Stop(MilliSeconds(5));
    Simulator::Run();
    uint32_t local = 0;
    for (const FlowRecord& r : runner.Records())
    {
        if (!IsLocal(r.spec.src))
        {
            continue;
        }
        ++local;
        std::printf("flow %u %u %u %s %lld\n", r.id, r.spec.src, r.spec.dst, FlowStateName(r.state),
                    static_cast<long long>(r.fct.GetPicoSeconds()));
    }
    const PartitionCut cut = CutOf(spec, ranks > 1 ? rankOf : std::vector<uint32_t>(rankOf.size()));
    std::printf("rank %u of %u: %u flows sent, %llu pfc frames, %llu cnps, %zu links cross, "
                "%llu events\n",
                rank, ranks, local, static_cast<unsigned long long>(fabric.TotalPfcFrames()),
                static_cast<unsigned long long>(fabric.TotalCnps()), cut.links.size(),
                static_cast<unsigned long long>(Simulator::GetEventCount()));
    std::fflush(stdout);
    Simulator::Destroy();
}

} // namespace

int
main(int argc, char** argv)
{
    Time::SetResolution(Time::PS);
    Options o;
    try
    {
        o = Parse(argc, argv);
    }
    catch (const std::exception& e)
    {
        std::cerr << "partition-run: " << e.what() << "\n";
        return 2;
    }
    // Ties between events of one time stamp broken the same way however many ranks.
    GlobalValue::Bind("SchedulerType", StringValue("ns3::DeterministicScheduler"));
    uint32_t rank = 0;
    uint32_t ranks = 1;
    if (o.engine != "none")
    {
#ifdef FABEMU_HAVE_MPI
        if (o.probe)
        {
            return 0;
        }
        GlobalValue::Bind("SimulatorImplementationType",
                          StringValue(o.engine == "gtw" ? "ns3::DistributedSimulatorImpl"
                                                        : "ns3::NullMessageSimulatorImpl"));
        MpiInterface::Enable(&argc, &argv);
        OpenMpiRankExchange();
        rank = MpiInterface::GetSystemId();
        ranks = MpiInterface::GetSize();
#else
        std::cerr << "partition-run: this build has no ns-3 mpi module; use --engine none\n";
        return 2;
#endif
    }
    int code = 0;
    try
    {
        Run(o, rank, ranks);
    }
    catch (const std::exception& e)
    {
        std::cerr << "partition-run: rank " << rank << ": " << e.what() << "\n";
        code = 1;
    }
#ifdef FABEMU_HAVE_MPI
    if (o.engine != "none")
    {
        MpiInterface::Disable();
    }
#endif
    return code;
}
