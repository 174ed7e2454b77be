// Speed of the NVLink model on one dgx-h100-like server (8 GPUs, 18 NVLink4 links split
// 5/4/4/5 over four NVSwitches) under an 8-GPU all-to-all: every GPU copies to every
// other at once. Two runs in one process, one after the other:
//  - packets of 256 bytes (the default MaxPayload) and --small-mib per pair;
//  - packets of --big-payload bytes (64 KiB) and --mib per pair (1 GiB, the case).
// HeaderBytes scales with MaxPayload (its default keeps NCCL's usable 20.6 GB/s per link),
// so both should move bytes at the same simulated rate; the figure of merit is what a
// simulated GB costs in wall time and events with each packet size.
#include "ns3/nvlink-helper.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

using namespace ns3;

namespace
{

struct Result
{
    double wall{0};
    double simulated{0};
    uint64_t events{0};
    uint64_t bytes{0};
    uint64_t packetHops{0};
};

void
Count(uint64_t* n, const NvlinkTransfer&)
{
    ++*n;
}

Result
AllToAll(uint32_t payload, uint64_t bytesPerPair)
{
    NvlinkHelper h;
    h.SetLinkAttribute("MaxPayload", UintegerValue(payload));
    NvlinkHelper::Node n = h.InstallSwitched(8, {5, 4, 4, 5});
    if (!n.Ok())
    {
        std::fprintf(stderr, "nvlink-bench: %s\n", n.error.c_str());
        std::exit(2);
    }
    uint64_t done = 0;
    for (uint32_t a = 0; a < 8; ++a)
    {
        for (uint32_t b = 0; b < 8; ++b)
        {
            if (a != b)
            {
                n.node->Send(a, b, bytesPerPair, MakeBoundCallback(&Count, &done));
            }
        }
    }
    const auto t0 = std::chrono::steady_clock::now();
    Simulator::Run();
    Result r;
    r.wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    r.simulated = Simulator::Now().GetSeconds();
    r.events = Simulator::GetEventCount();
    r.bytes = done * bytesPerPair;
    for (const auto& l : n.node->GetLinks())
    {
        r.packetHops += l->GetPort(0)->GetPacketsSent() + l->GetPort(1)->GetPacketsSent();
    }
    n.node->Dispose();
    Simulator::Destroy();
    return r;
}

void
Print(const char* what, uint32_t payload, const Result& r)
{
    const double gb = r.bytes / 1e9;
    std::printf("%s: %u-byte packets, %.1f GB in %.3f ms simulated (%.1f GB/s per GPU), "
                "%llu packet-hops, %.3f s wall: %.2f GB simulated per wall s, %.3f s wall per "
                "GB, %.0f events per MB\n",
                what, payload, gb, r.simulated * 1e3, gb / 8 / r.simulated,
                static_cast<unsigned long long>(r.packetHops), r.wall, gb / r.wall, r.wall / gb,
                r.events / (r.bytes / 1e6));
}

} // namespace

int
main(int argc, char** argv)
{
    uint64_t smallMib = 16;
    uint64_t mib = 1024;
    uint32_t bigPayload = 65536;
    for (int i = 1; i + 1 < argc; i += 2)
    {
        const std::string flag = argv[i];
        const uint64_t v = std::strtoull(argv[i + 1], nullptr, 10);
        if (flag == "--small-mib" && v > 0)
        {
            smallMib = v;
        }
        else if (flag == "--mib" && v > 0)
        {
            mib = v;
        }
        else if (flag == "--big-payload" && v >= 256 && v <= (1u << 20))
        {
            bigPayload = static_cast<uint32_t>(v);
        }
        else
        {
            std::fprintf(stderr,
                         "nvlink-bench: usage: [--small-mib N] [--mib N] [--big-payload BYTES]; "
                         "'%s %s' is not one\n",
                         argv[i], argv[i + 1]);
            return 2;
        }
    }
    if (argc % 2 == 0)
    {
        std::fprintf(stderr, "nvlink-bench: '%s' has no value\n", argv[argc - 1]);
        return 2;
    }
    Time::SetResolution(Time::PS); // as fabemu runs: a 256-byte packet takes ~2.5 ns on 5 links
    const Result small = AllToAll(256, smallMib << 20);
    Print("default packets", 256, small);
    const Result big = AllToAll(bigPayload, mib << 20);
    Print("large packets", bigPayload, big);
    const double rateSmall = small.bytes / small.simulated;
    const double rateBig = big.bytes / big.simulated;
    std::printf("simulated rate, large / default packets: %.4f (the same links: should be 1)\n",
                rateBig / rateSmall);
    std::printf("wall time per GB, default / large packets: %.1f times\n",
                (small.wall / (small.bytes / 1e9)) / (big.wall / (big.bytes / 1e9)));
    return 0;
}
