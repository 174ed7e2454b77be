// Speed of the PCIe model against the RoCEv2 model, in the same run.
//
//  - pcie: one long DMA write stream, gpu0 -> host memory through a switch and the
//          root complex (Gen5 x16, MPS 256): every TLP crosses two links. A TLP-hop
//          is a TLP sent on one link (PciePort::TlpTx, replays included).
//  - roce: FabricEmu's RoCEv2 model on a k=4 fat tree carrying web-search flows at
//          50 % load, as bench/fat-tree-bench.cc runs it; a packet-hop is a frame
//          sent on one link (RoceNetDevice::MacTx).
// The figure of merit is the ratio of wall time per TLP-hop to wall time per
// RoCEv2 packet-hop (goal: <= 1). Each run is a child process, so neither warms
// the other's caches or allocator; with --repeat N the two alternate N times and
// the run with the least CPU time of each is kept (the machines are shared and noisy).
#include "in-child.h"

#include "ns3/boolean.h"
#include "ns3/config.h"
#include "ns3/pcie-helper.h"
#include "ns3/rdma-workload.h"
#include "ns3/roce-fabric-helper.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <functional>
#include <iostream>
#include <memory>
#include <string>
#include <unistd.h>

using namespace ns3;

namespace
{

struct Figures
{
    uint64_t hops{0};
    uint64_t tlps{0}; ///< pcie: TLPs delivered to host memory
    uint64_t events{0};
    double wallSeconds{0};
    double cpuSeconds{0}; ///< process CPU time of Run(): less sensitive to a loaded machine
    double simulatedSeconds{0};
};

uint64_t g_hops = 0;

void
CountTlpHop(const PcieTlp&, bool)
{
    ++g_hops;
}

void
CountFrameHop(Ptr<const Packet>, uint8_t)
{
    ++g_hops;
}

Figures
Measure(const std::function<void()>& build, Time stop)
{
    g_hops = 0;
    build();
    if (!stop.IsZero())
    {
        Simulator::Stop(stop);
    }
    timespec c0{};
    timespec c1{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c0);
    const auto t0 = std::chrono::steady_clock::now();
    Simulator::Run();
    const auto t1 = std::chrono::steady_clock::now();
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c1);
    Figures f;
    f.hops = g_hops;
    f.wallSeconds = std::chrono::duration<double>(t1 - t0).count();
    f.cpuSeconds = double(c1.tv_sec - c0.tv_sec) + 1e-9 * double(c1.tv_nsec - c0.tv_nsec);
    f.simulatedSeconds = Simulator::Now().GetSeconds();
    f.events = Simulator::GetEventCount();
    Simulator::Destroy();
    return f;
}

Figures
RunPcie(uint64_t bytes)
{
    Ptr<PcieTree> tree;
    Figures f = Measure(
        [&]() {
            PcieHelper h;
            h.SetLinkAttribute("Generation", UintegerValue(5));
            h.SetLinkAttribute("Width", UintegerValue(16));
            h.SetPortAttribute("MaxPayloadSize", UintegerValue(256));
            PcieTreeSpec spec;
            PcieTreeSpec::Switch sw;
            sw.devices.resize(1); // gpu0
            spec.switches.push_back(sw);
            auto built = h.InstallTree(spec);
            if (!built.Ok())
            {
                std::cerr << built.error << "\n";
                _exit(1);
            }
            tree = built.tree;
            tree->GetEndpoint("gpu0")->GetPort()->TraceConnectWithoutContext(
                "TlpTx", MakeCallback(&CountTlpHop));
            tree->GetSwitch("sw0")
                ->GetPort(PcieSwitch::kUpstream)
                ->TraceConnectWithoutContext("TlpTx", MakeCallback(&CountTlpHop));
            tree->Write("gpu0", "mem", 0, bytes, Callback<void, const PcieTransfer&>());
        },
        Time(0));
    f.tlps = bytes / 256;
    return f;
}

Figures
RunRoce(Time duration)
{
    Config::SetDefault("ns3::RoceNic::ComputeIcrc", BooleanValue(false));
    RoceFabricHelper fabric;
    std::unique_ptr<FlowRunner> runner;
    const LinkParams host{DataRate("100Gbps"), MicroSeconds(1)};
    const LinkParams core{DataRate("400Gbps"), MicroSeconds(1)};
    return Measure(
        [&]() {
            fabric.Install(TopologySpec::FatTree(4, host, core));
            for (const auto& dev : fabric.GetDevices())
            {
                dev->TraceConnectWithoutContext("MacTx", MakeCallback(&CountFrameHop));
            }
            Ptr<UniformRandomVariable> rng = CreateObject<UniformRandomVariable>();
            rng->SetStream(42);
            std::vector<uint32_t> all(fabric.GetNHosts());
            for (uint32_t i = 0; i < all.size(); ++i)
            {
                all[i] = i;
            }
            const auto cdf =
                FlowSizeCdf::Load(std::string(FABEMU_SOURCE_DIR) + "/scenarios/cdf/websearch.txt");
            runner = std::make_unique<FlowRunner>(fabric);
            runner->Add(workload::Poisson(all, 0.5, cdf, host.rate, Time(0), duration, rng));
            runner->Start();
        },
        duration);
}

Figures
InChild(const std::function<Figures()>& fn)
{
    return ::InChild<Figures>(fn);
}

} // namespace

int
main(int argc, char** argv)
{
    uint64_t mib = 256;
    double roceUs = 2000;
    int repeat = 3;
    for (int i = 1; i < argc; ++i)
    {
        if (std::strcmp(argv[i], "--mib") == 0 && i + 1 < argc)
        {
            mib = std::stoull(argv[++i]);
        }
        else if (std::strcmp(argv[i], "--repeat") == 0 && i + 1 < argc)
        {
            repeat = std::max(1, std::stoi(argv[++i]));
        }
        else if (std::strcmp(argv[i], "--roce-us") == 0 && i + 1 < argc)
        {
            roceUs = std::stod(argv[++i]);
        }
        else
        {
            std::cerr << "usage: pcie-bench [--mib N] [--roce-us N] [--repeat N]\n";
            return 2;
        }
    }
    Figures pcie;
    Figures roce;
    for (int r = 0; r < repeat; ++r)
    {
        const Figures p = InChild([&]() { return RunPcie(mib << 20); });
        const Figures q = InChild([&]() { return RunRoce(MicroSeconds(roceUs)); });
        std::printf("run %d: pcie %.3f s wall %.3f s CPU, roce %.3f s wall %.3f s CPU\n", r + 1,
                    p.wallSeconds, p.cpuSeconds, q.wallSeconds, q.cpuSeconds);
        if (r == 0 || p.cpuSeconds < pcie.cpuSeconds)
        {
            pcie = p;
        }
        if (r == 0 || q.cpuSeconds < roce.cpuSeconds)
        {
            roce = q;
        }
    }
    std::printf(
        "pcie: %llu MiB gpu0 -> mem via sw0, Gen5 x16: %llu TLPs, %llu TLP-hops, %.3f s "
        "wall, %.0f TLP-hops/wall s, %.0f TLPs/wall s, %.2f events/TLP-hop, %.1f us simulated\n",
        (unsigned long long)mib, (unsigned long long)pcie.tlps, (unsigned long long)pcie.hops,
        pcie.wallSeconds, pcie.hops / pcie.wallSeconds, pcie.tlps / pcie.wallSeconds,
        double(pcie.events) / pcie.hops, pcie.simulatedSeconds * 1e6);
    std::printf("roce: k=4 fat tree, web-search 50%% load, %.0f us: %llu packet-hops, %.3f s wall, "
                "%.0f packet-hops/s, %.2f events/packet-hop\n",
                roceUs, (unsigned long long)roce.hops, roce.wallSeconds,
                roce.hops / roce.wallSeconds, double(roce.events) / roce.hops);
    std::printf("fastest of %d by CPU time: pcie %.0f TLP-hops per CPU second, roce %.0f "
                "packet-hops per CPU second\n",
                repeat, pcie.hops / pcie.cpuSeconds, roce.hops / roce.cpuSeconds);
    std::printf("cost per TLP-hop / cost per RoCEv2 packet-hop: %.2f CPU, %.2f wall  (goal <= 1)\n",
                (pcie.cpuSeconds / pcie.hops) / (roce.cpuSeconds / roce.hops),
                (pcie.wallSeconds / pcie.hops) / (roce.wallSeconds / roce.hops));
    return 0;
}
