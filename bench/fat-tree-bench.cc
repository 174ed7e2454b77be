// Speed of the RoCEv2 model against stock ns-3 on the same fat tree and flows.
//
// Both runs carry the same flow list (web-search sizes, Poisson arrivals at the
// given load) over a k-ary fat tree for the same simulated time:
//  - roce:  FabricEmu's RoCEv2 model (PFC, ECN, RC transport, ICRC off);
//  - stock: ns-3's PointToPoint links, DropTail queues, UDP at host line rate,
//           global routing with ECMP: the cheapest model of the same traffic.
// Each run is a child process, so its peak memory is its own. The figure of
// merit is wall time per packet-hop (a frame sent on one link), and the ratio
// of the two costs is what is compared, never absolute times.
//
// --permutation BYTES (with --only roce): the speed issue's scale run instead, every
// host sending BYTES to another (a random permutation) at time 0, with DCQCN and PFC,
// run until the last flow ends (bench/fat-tree-scale: k=8, 16 and 32).
#include "in-child.h"

#include "ns3/applications-module.h"
#include "ns3/config.h"
#include "ns3/ib-fabric-helper.h"
#include "ns3/internet-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/rdma-workload.h"
#include "ns3/roce-fabric-helper.h"
#include "ns3/simulator.h"
#include "ns3/string.h"

#include <sys/resource.h>
#include <sys/wait.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>
#include <unistd.h>

using namespace ns3;

namespace
{

struct Figures
{
    uint64_t hops{0};
    double wallSeconds{0};
    long peakRssKb{0};
    uint64_t events{0};
    uint64_t creditPackets{0}; ///< InfiniBand: flow-control packets sent
    double buildSeconds{0};    ///< building the fabric and its flows, before the run
    bool allDone{false};       ///< a permutation's flows all ended before the duration
    double simulatedMs{0};
    size_t failed{0}; ///< flows that ended failed (a permutation)
};

struct Params
{
    uint32_t k{4};
    double load{0.5};
    Time duration{MilliSeconds(2)};
    LinkParams host{DataRate("100Gbps"), MicroSeconds(1)};
    LinkParams fabric{DataRate("400Gbps"), MicroSeconds(1)};
    uint64_t permutation{0}; ///< bytes per flow of a permutation; 0: web-search at load
};

std::vector<FlowSpec>
Flows(const Params& p, uint32_t hosts)
{
    Ptr<UniformRandomVariable> rng = CreateObject<UniformRandomVariable>();
    rng->SetStream(42);
    std::vector<uint32_t> all(hosts);
    for (uint32_t i = 0; i < hosts; ++i)
    {
        all[i] = i;
    }
    if (p.permutation > 0)
    {
        return workload::Permutation(all, p.permutation, Time(0), rng);
    }
    const auto cdf =
        FlowSizeCdf::Load(std::string(FABEMU_SOURCE_DIR) + "/scenarios/cdf/websearch.txt");
    return workload::Poisson(all, p.load, cdf, p.host.rate, Time(0), p.duration, rng);
}

uint64_t g_hops = 0;
bool g_allDone = false;
uint64_t g_fcps = 0;
std::string g_scheduler = "ns3::BucketScheduler"; ///< for every run; as `fabemu run` simulates

void
CountHop(Ptr<const Packet>)
{
    ++g_hops;
}

void
CountFcp(uint8_t, uint16_t, uint16_t)
{
    ++g_fcps;
}

/// A permutation's last flow ended: the run is over.
void
AllDone()
{
    g_allDone = true;
    Simulator::Stop();
}

/// Builds with \p build, runs for \p duration. The packet-hops are what the trace
/// callbacks counted, or what \p countHops reads from the model's own counters after
/// the run, where it has them (a trace callback per hop is a cache miss or two of its
/// own in a large fabric, which the figure per hop would count as the model's).
Figures
Measure(const std::function<void()>& build, Time duration,
        const std::function<uint64_t()>& countHops = {})
{
    g_hops = 0;
    g_fcps = 0;
    g_allDone = false;
    const auto b0 = std::chrono::steady_clock::now();
    build();
    Simulator::Stop(duration);
    const auto t0 = std::chrono::steady_clock::now();
    Simulator::Run();
    const auto t1 = std::chrono::steady_clock::now();
    Figures f;
    f.hops = countHops ? countHops() : g_hops;
    f.creditPackets = g_fcps;
    f.allDone = g_allDone;
    f.buildSeconds = std::chrono::duration<double>(t0 - b0).count();
    f.wallSeconds = std::chrono::duration<double>(t1 - t0).count();
    f.events = Simulator::GetEventCount();
    f.simulatedMs = Simulator::Now().GetSeconds() * 1e3;
    Simulator::Destroy();
    rusage ru{};
    getrusage(RUSAGE_SELF, &ru);
    f.peakRssKb = ru.ru_maxrss;
    return f;
}

Figures
RunRoce(const Params& p)
{
    Config::SetDefault("ns3::RoceNic::ComputeIcrc", BooleanValue(false));
    if (p.permutation > 0)
    {
        Config::SetDefault("ns3::RoceNic::CongestionControl", StringValue("ns3::DcqcnRateControl"));
    }
    RoceFabricHelper fabric;
    std::unique_ptr<FlowRunner> runner;
    Figures f = Measure(
        [&]() {
            fabric.Install(TopologySpec::FatTree(p.k, p.host, p.fabric));
            runner = std::make_unique<FlowRunner>(fabric);
            runner->Add(Flows(p, fabric.GetNHosts()));
            if (p.permutation > 0)
            {
                runner->SetAllDoneCallback(MakeCallback(&AllDone));
            }
            runner->Start();
        },
        p.duration,
        [&]() {
            uint64_t hops = 0;
            for (const auto& dev : fabric.GetDevices())
            {
                hops += dev->GetDataFramesSent();
            }
            return hops;
        });
    f.failed = runner ? runner->Failed() : 0;
    return f;
}

/// The same fat tree and flows as an InfiniBand subnet (credits per VL, cut-through
/// switches, min-hop LFTs). A packet-hop is a data packet sent on a link; flow-control
/// packets are counted apart.
Figures
RunInfiniband(const Params& p)
{
    IbFabricHelper fabric;
    std::unique_ptr<FlowRunner> runner;
    return Measure(
        [&]() {
            fabric.Install(TopologySpec::FatTree(p.k, p.host, p.fabric));
            for (const auto& port : fabric.GetPorts())
            {
                port->TraceConnectWithoutContext("Sniffer", MakeCallback(&CountHop));
                port->TraceConnectWithoutContext("FcpTx", MakeCallback(&CountFcp));
            }
            runner = std::make_unique<FlowRunner>(fabric);
            runner->Add(Flows(p, fabric.GetNHosts()));
            runner->Start();
        },
        p.duration);
}

/// Sends a flow's bytes as 1024-byte UDP datagrams at the host's line rate.
class UdpFlow : public Application
{
  public:
    UdpFlow(Address dst, uint64_t bytes, DataRate rate) : m_dst(dst), m_left(bytes), m_rate(rate) {}

  private:
    void StartApplication() override
    {
        m_socket = Socket::CreateSocket(GetNode(), UdpSocketFactory::GetTypeId());
        m_socket->Connect(m_dst);
        Send();
    }
    void StopApplication() override
    {
        m_event.Cancel();
        if (m_socket)
        {
            m_socket->Close();
        }
    }
    void Send()
    {
        const uint32_t n = static_cast<uint32_t>(std::min<uint64_t>(m_left, 1024));
        m_socket->Send(Create<Packet>(n));
        m_left -= n;
        if (m_left > 0)
        {
            m_event =
                Simulator::Schedule(m_rate.CalculateBytesTxTime(n + 66), &UdpFlow::Send, this);
        }
    }
    Address m_dst;
    uint64_t m_left;
    DataRate m_rate;
    Ptr<Socket> m_socket;
    EventId m_event;
};

Figures
RunStock(const Params& p)
{
    Config::SetDefault("ns3::Ipv4GlobalRouting::RandomEcmpRouting", BooleanValue(true));
    return Measure(
        [&]() {
            const auto spec = TopologySpec::FatTree(p.k, p.host, p.fabric);
            NodeContainer nodes;
            nodes.Create(spec.Nodes().size());
            InternetStackHelper stack;
            stack.Install(nodes);
            Ipv4AddressHelper ip;
            ip.SetBase("10.0.0.0", "255.255.255.252");
            std::vector<Ipv4Address> hostAddr(spec.Hosts().size());
            std::map<uint32_t, uint32_t> hostOfNode;
            for (uint32_t h = 0; h < spec.Hosts().size(); ++h)
            {
                hostOfNode[spec.Hosts()[h]] = h;
            }
            for (const auto& link : spec.Links())
            {
                PointToPointHelper p2p;
                p2p.SetDeviceAttribute("DataRate", DataRateValue(link.params.rate));
                p2p.SetChannelAttribute("Delay", TimeValue(link.params.delay));
                NetDeviceContainer devs = p2p.Install(nodes.Get(link.a), nodes.Get(link.b));
                for (uint32_t i = 0; i < 2; ++i)
                {
                    devs.Get(i)->TraceConnectWithoutContext("PhyTxEnd", MakeCallback(&CountHop));
                }
                Ipv4InterfaceContainer ifs = ip.Assign(devs);
                ip.NewNetwork();
                for (uint32_t i = 0; i < 2; ++i)
                {
                    const uint32_t node = i == 0 ? link.a : link.b;
                    if (hostOfNode.count(node))
                    {
                        hostAddr[hostOfNode[node]] = ifs.GetAddress(i);
                    }
                }
            }
            Ipv4GlobalRoutingHelper::PopulateRoutingTables();
            for (uint32_t h = 0; h < spec.Hosts().size(); ++h)
            {
                Ptr<Socket> sink =
                    Socket::CreateSocket(nodes.Get(spec.Hosts()[h]), UdpSocketFactory::GetTypeId());
                sink->Bind(InetSocketAddress(Ipv4Address::GetAny(), 4791));
            }
            for (const auto& f : Flows(p, spec.Hosts().size()))
            {
                Ptr<UdpFlow> app = CreateObject<UdpFlow>(InetSocketAddress(hostAddr[f.dst], 4791),
                                                         f.bytes, p.host.rate);
                nodes.Get(spec.Hosts()[f.src])->AddApplication(app);
                app->SetStartTime(f.start);
            }
        },
        p.duration);
}

/// The scheduler --scheduler names, for the simulation about to be built.
void
UseScheduler()
{
    if (!g_scheduler.empty())
    {
        ObjectFactory factory;
        factory.SetTypeId(g_scheduler);
        Simulator::SetScheduler(factory);
    }
}

/// Runs \p fn in a child process and returns its figures through a pipe.
Figures
InChild(const std::function<Figures()>& fn)
{
    return ::InChild<Figures>(fn, UseScheduler);
}

void
Report(const char* name, uint32_t k, const Figures& f)
{
    std::printf("%-6s k=%u  packet-hops %10llu  wall %7.2f s  %8.0f ns/hop  %9.0f hops/s  "
                "events %10llu  peak RSS %7.1f MiB\n",
                name, k, static_cast<unsigned long long>(f.hops), f.wallSeconds,
                f.wallSeconds * 1e9 / f.hops, f.hops / f.wallSeconds,
                static_cast<unsigned long long>(f.events), f.peakRssKb / 1024.0);
    std::printf("%-6s k=%u  build %.2f s, simulated to %.3f ms%s, %zu failed\n", name, k,
                f.buildSeconds, f.simulatedMs, f.allDone ? ", every flow ended" : "", f.failed);
    if (f.creditPackets > 0)
    {
        // Each flow-control packet is two events: sent, received.
        std::printf(
            "%-6s k=%u  flow-control packets %llu: %.1f%% of events, %.2f per data packet-hop\n",
            name, k, static_cast<unsigned long long>(f.creditPackets),
            200.0 * f.creditPackets / f.events, double(f.creditPackets) / f.hops);
    }
}

} // namespace

int
main(int argc, char** argv)
{
    Params p;
    uint32_t bigK = 8;
    std::string only; // "roce" or "stock": one run at --k in this process (for callgrind)
    for (int i = 1; i < argc; ++i)
    {
        if (std::strcmp(argv[i], "--duration-us") == 0 && i + 1 < argc)
        {
            p.duration = MicroSeconds(std::stoul(argv[++i]));
        }
        else if (std::strcmp(argv[i], "--only") == 0 && i + 1 < argc)
        {
            only = argv[++i];
        }
        else if (std::strcmp(argv[i], "--k") == 0 && i + 1 < argc)
        {
            p.k = static_cast<uint32_t>(std::stoul(argv[++i]));
        }
        else if (std::strcmp(argv[i], "--scheduler") == 0 && i + 1 < argc)
        {
            g_scheduler = argv[++i];
        }
        else if (std::strcmp(argv[i], "--permutation") == 0 && i + 1 < argc)
        {
            p.permutation = std::stoull(argv[++i]);
        }
        else if (std::strcmp(argv[i], "--big-k") == 0 && i + 1 < argc)
        {
            bigK = static_cast<uint32_t>(std::stoul(argv[++i]));
        }
        else
        {
            std::cerr
                << "usage: fat-tree-bench [--duration-us N] [--big-k K] [--scheduler TYPEID]\n"
                   "                      [--only roce|ib|stock --k K [--permutation BYTES]]\n";
            return 2;
        }
    }
    if (!only.empty())
    {
        Time::SetResolution(Time::PS);
        UseScheduler(); // --only runs here, not in a child
        const Figures f = only == "roce" ? RunRoce(p)
                          : only == "ib" ? RunInfiniband(p)
                                         : RunStock(p);
        Report(only.c_str(), p.k, f);
        return 0;
    }
    std::printf("fat tree, web-search at %.0f%% load, %.0f us simulated, hosts %s / fabric %s\n",
                p.load * 100, p.duration.GetMicroSeconds() * 1.0,
                p.host.rate.GetBitRate() == 100'000'000'000ULL ? "100G" : "?", "400G");
    const Figures stock = InChild([&]() { return RunStock(p); });
    Report("stock", p.k, stock);
    const Figures roce = InChild([&]() { return RunRoce(p); });
    Report("roce", p.k, roce);
    const Figures ib = InChild([&]() { return RunInfiniband(p); });
    Report("ib", p.k, ib);
    Params big = p;
    big.k = bigK;
    const Figures roceBig = InChild([&]() { return RunRoce(big); });
    Report("roce", big.k, roceBig);
    const Figures stockBig = InChild([&]() { return RunStock(big); });
    Report("stock", big.k, stockBig);

    const double costRatio = (roce.wallSeconds / roce.hops) / (stock.wallSeconds / stock.hops);
    const double growth = (roceBig.wallSeconds / roceBig.hops) / (roce.wallSeconds / roce.hops);
    std::printf("cost per packet-hop, roce / stock (k=%u): %.2f  (target <= 1.5)\n", p.k,
                costRatio);
    std::printf("cost per packet-hop, ib / roce (k=%u): %.2f; ib packet-hops per wall second %.0f, "
                "roce %.0f\n",
                p.k, (ib.wallSeconds / ib.hops) / (roce.wallSeconds / roce.hops),
                ib.hops / ib.wallSeconds, roce.hops / roce.wallSeconds);
    const double stockGrowth =
        (stockBig.wallSeconds / stockBig.hops) / (stock.wallSeconds / stock.hops);
    std::printf("cost per packet-hop, roce k=%u / k=%u: %.2f  (target within 1.2 of linear); "
                "stock ns-3 on the same machine: %.2f\n",
                big.k, p.k, growth, stockGrowth);
    return 0;
}
