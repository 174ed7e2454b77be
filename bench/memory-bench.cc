// What the RoCEv2 model's memory goes to (issue 22, "Memory"): the heap bytes per
// host, per switch port, per route, per flow, per queued packet and per scheduled
// event, each measured in a fresh child process as the bytes the program asked
// operator new (and new[]) for, and still holds, across one step.
//
// - Fabric: RoceFabricHelper builds trees and the bytes
//   held after each build are fitted (least squares) to a host term, a switch-port
//   term, a route term (each switch keeps 8 bytes per destination host) and a
//   constant, over leaf-spine trees of five shapes; fat trees of k = 8 and 16, which
//   the fit has not seen, are measured against its prediction.
// - Flows: 2,048 one-GB writes between random hosts of a k=4 tree, all starting at 0,
//   run for 1 ns (every queue pair made, at most a frame per priority at each NIC).
// - A queued packet: 20,000 RoCEv2 data frames (1,024-byte payload) put on one port's
//   queue, and the three commonest block sizes they hold: kept as bytes, as a port keeps
//   a waiting frame (FrameQueue), and kept as Packets (CompactWaitingFrames false).
// - An event: 20,000 pooled events scheduled within 4 us (BucketScheduler, as `fabemu
//   run` simulates), each holding a device and a packet pointer as a frame's arrival
//   (RoceChannel's FrameArrival) does; and 20,000 of the events ns-3's Schedule makes
//   (MakeEvent), as the timers do.
//
// The allocator's own rounding and caches come on top (see docs/performance.md).
#include "in-child.h"
#include "replaced-new.h"

#include "ns3/boolean.h"
#include "ns3/config.h"
#include "ns3/object-factory.h"
#include "ns3/pooled-event.h"
#include "ns3/rdma-workload.h"
#include "ns3/roce-channel.h"
#include "ns3/roce-fabric-helper.h"
#include "ns3/roce-packet.h"
#include "ns3/simulator.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <iterator>
#include <new>
#include <string>
#include <vector>

using namespace ns3;

namespace
{

// Every block carries its size in front, 16 bytes to keep the alignment.
constexpr std::size_t kTag = 16;
std::size_t g_liveBytes = 0;
// Blocks held, by size (up to kSizes bytes), counted while g_bySize is set: what a step's
// bytes are made of.
constexpr std::size_t kSizes = 4096;
bool g_bySize = false;
std::array<long, kSizes + 1> g_held{};

} // namespace

void*
BenchAllocate(std::size_t n)
{
    auto* p = static_cast<unsigned char*>(std::malloc(n + kTag));
    if (!p)
    {
        throw std::bad_alloc();
    }
    *reinterpret_cast<std::size_t*>(p) = n;
    g_liveBytes += n;
    if (g_bySize)
    {
        ++g_held[std::min(n, kSizes)];
    }
    return p + kTag;
}

void
BenchRelease(void* q) noexcept
{
    if (q)
    {
        auto* p = static_cast<unsigned char*>(q) - kTag;
        const std::size_t n = *reinterpret_cast<std::size_t*>(p);
        g_liveBytes -= n;
        if (g_bySize)
        {
            --g_held[std::min(n, kSizes)];
        }
        std::free(p);
    }
}

// An aligned block: its size is kept in the word before it, in the alignment's room
// before the block (align is at least 32), and counted as BenchAllocate counts.
void*
BenchAllocateAligned(std::size_t n, std::size_t align)
{
    auto* p =
        static_cast<unsigned char*>(std::aligned_alloc(align, align + BenchAlignedBytes(n, align)));
    if (!p)
    {
        throw std::bad_alloc();
    }
    unsigned char* q = p + align;
    *reinterpret_cast<std::size_t*>(q - sizeof(std::size_t)) = n;
    g_liveBytes += n;
    if (g_bySize)
    {
        ++g_held[std::min(n, kSizes)];
    }
    return q;
}

void
BenchReleaseAligned(void* q, std::size_t align) noexcept
{
    if (q)
    {
        auto* b = static_cast<unsigned char*>(q);
        const std::size_t n = *reinterpret_cast<std::size_t*>(b - sizeof(std::size_t));
        g_liveBytes -= n;
        if (g_bySize)
        {
            --g_held[std::min(n, kSizes)];
        }
        std::free(b - align);
    }
}

namespace
{

const LinkParams kHostLink{DataRate("100Gbps"), MicroSeconds(1)};
const LinkParams kFabricLink{DataRate("400Gbps"), MicroSeconds(1)};

struct FabricFigures
{
    double hosts;
    double switches;
    double switchPorts;
    double routes; ///< switches x hosts
    double bytes;
};

constexpr int kTerms = 5; ///< per host, switch, switch port, route; fixed

FabricFigures
MeasureFabric(const std::function<TopologySpec()>& topology)
{
    return InChild<FabricFigures>([&topology] {
        const TopologySpec spec = topology();
        const std::size_t before = g_liveBytes;
        RoceFabricHelper fabric;
        fabric.Install(spec);
        double ports = 0;
        for (const auto& sw : fabric.GetSwitches())
        {
            ports += sw->GetNPorts();
        }
        const double switches = double(fabric.GetSwitches().size());
        return FabricFigures{double(fabric.GetNHosts()), switches, ports,
                             switches * fabric.GetNHosts(), double(g_liveBytes - before)};
    });
}

std::array<double, kTerms>
Terms(const FabricFigures& p)
{
    return {p.hosts, p.switches, p.switchPorts, p.routes, 1.0};
}

/// Least squares of bytes over Terms (normal equations).
std::array<double, kTerms>
Fit(const std::vector<FabricFigures>& points)
{
    std::array<std::array<double, kTerms + 1>, kTerms> a{};
    for (const auto& p : points)
    {
        const auto x = Terms(p);
        for (int r = 0; r < kTerms; ++r)
        {
            for (int c = 0; c < kTerms; ++c)
            {
                a[r][c] += x[r] * x[c];
            }
            a[r][kTerms] += x[r] * p.bytes;
        }
    }
    for (int c = 0; c < kTerms; ++c) // Gauss-Jordan with partial pivoting
    {
        int pivot = c;
        for (int r = c + 1; r < kTerms; ++r)
        {
            if (std::abs(a[r][c]) > std::abs(a[pivot][c]))
            {
                pivot = r;
            }
        }
        std::swap(a[c], a[pivot]);
        for (int r = 0; r < kTerms; ++r)
        {
            if (r != c)
            {
                const double f = a[r][c] / a[c][c];
                for (int j = c; j <= kTerms; ++j)
                {
                    a[r][j] -= f * a[c][j];
                }
            }
        }
    }
    std::array<double, kTerms> fit{};
    for (int r = 0; r < kTerms; ++r)
    {
        fit[r] = a[r][kTerms] / a[r][r];
    }
    return fit;
}

double
Predict(const std::array<double, kTerms>& fit, const FabricFigures& p)
{
    const auto x = Terms(p);
    double bytes = 0;
    for (int i = 0; i < kTerms; ++i)
    {
        bytes += fit[i] * x[i];
    }
    return bytes;
}

double
BytesPerFlow(uint32_t flows)
{
    return InChild<double>([flows] {
        RoceFabricHelper fabric;
        fabric.Install(TopologySpec::FatTree(4, kHostLink, kFabricLink));
        std::vector<FlowSpec> specs;
        for (uint32_t i = 0; i < flows; ++i)
        {
            const uint32_t src = i % fabric.GetNHosts();
            const uint32_t dst = (src + 1 + (i / fabric.GetNHosts()) % 15) % fabric.GetNHosts();
            specs.push_back(FlowSpec{src, dst, 1'000'000'000, Time(0)});
        }
        const std::size_t before = g_liveBytes;
        FlowRunner runner(fabric);
        runner.Add(specs);
        runner.Start();
        Simulator::Stop(NanoSeconds(1));
        Simulator::Run();
        return double(g_liveBytes - before) / flows;
    });
}

/// Bytes per queued packet, and the three largest kinds of block held for each; the
/// port keeps waiting frames as bytes if \p compact.
struct PacketFigures
{
    double bytes;
    std::array<std::array<double, 2>, 3> blocks; ///< (size, blocks per packet)
};

PacketFigures
BytesPerQueuedPacket(uint32_t packets, bool compact)
{
    return InChild<PacketFigures>([packets, compact] {
        RoceFabricHelper fabric;
        fabric.Install(TopologySpec::FatTree(4, kHostLink, kFabricLink));
        Ptr<RoceNetDevice> port = fabric.GetPort(0); // host 0's NIC port
        port->SetAttribute("CompactWaitingFrames", BooleanValue(compact));
        RoceFrameSpec spec;
        spec.transport.opcode = 0x0a; // RDMA WRITE middle
        spec.transport.payload = 1024;
        const std::size_t before = g_liveBytes;
        g_bySize = true;
        for (uint32_t i = 0; i < packets; ++i)
        {
            spec.transport.psn = i;
            port->Enqueue(MakeRoceV2Packet(spec, false), 3);
        }
        g_bySize = false;
        PacketFigures f{double(g_liveBytes - before) / packets, {}};
        for (auto& block : f.blocks)
        {
            const auto most = std::max_element(g_held.begin(), g_held.end());
            const auto size = std::distance(g_held.begin(), most);
            block = {double(size), double(*most) / packets};
            *most = 0;
        }
        return f;
    });
}

void
Nothing(Ptr<Packet>)
{
}

/// The layout of RoceChannel's FrameArrival: a pooled event holding the far end and the frame.
class ArrivalLike : public PooledEvent<ArrivalLike>
{
  public:
    ArrivalLike(Ptr<Object> dst, Ptr<Packet> p) : m_dst(dst), m_packet(p) {}

  private:
    void Notify() override {}

    Ptr<Object> m_dst;
    Ptr<Packet> m_packet;
};

/// Heap bytes per scheduled event holding a packet: pooled as an arrival, or made by
/// ns-3's Schedule; under the scheduler `fabemu run` simulates on (BucketScheduler),
/// the events spread over its window as a fabric's arrivals are.
double
BytesPerEvent(uint32_t events, bool pooled)
{
    return InChild<double>([events, pooled] {
        ObjectFactory scheduler;
        scheduler.SetTypeId("ns3::BucketScheduler");
        Simulator::SetScheduler(scheduler);
        Ptr<Packet> p = Create<Packet>(64);
        Ptr<Object> dst = CreateObject<Object>();
        const std::size_t before = g_liveBytes;
        for (uint32_t i = 0; i < events; ++i)
        {
            const Time at = NanoSeconds(1 + (uint64_t(i) * 7919) % 4000); // within 4 us
            if (pooled)
            {
                Simulator::ScheduleWithContext(0, at,
                                               static_cast<EventImpl*>(new ArrivalLike(dst, p)));
            }
            else
            {
                Simulator::Schedule(at, &Nothing, p);
            }
        }
        return double(g_liveBytes - before) / events;
    });
}

} // namespace

int
main()
{
    std::setvbuf(stdout, nullptr, _IOLBF, 0); // nothing buffered for the children to repeat
    Config::SetDefault("ns3::RoceNic::ComputeIcrc", BooleanValue(false));
    std::printf("heap bytes held (asked of operator new and new[]; the allocator's rounding "
                "comes on top)\n\n");
    std::printf("%-22s %7s %9s %12s %14s %14s\n", "topology", "hosts", "switches", "switch ports",
                "switch-routes", "bytes");
    auto row = [](const std::string& name, const FabricFigures& f) {
        std::printf("%-22s %7.0f %9.0f %12.0f %14.0f %14.0f", name.c_str(), f.hosts, f.switches,
                    f.switchPorts, f.routes, f.bytes);
    };
    // Leaf-spine trees of several shapes vary the terms apart; the fit is theirs.
    const std::vector<std::array<uint32_t, 3>> shapes{{4, 4, 8},   {4, 4, 32},   {16, 16, 8},
                                                      {16, 8, 32}, {32, 16, 16}, {64, 8, 16},
                                                      {48, 4, 8},  {8, 32, 4}};
    std::vector<FabricFigures> points;
    for (const auto& [leaves, spines, perLeaf] : shapes)
    {
        points.push_back(MeasureFabric([=] {
            return TopologySpec::LeafSpine(leaves, spines, perLeaf, kHostLink, kFabricLink);
        }));
        const std::string name = "leaf-spine " + std::to_string(leaves) + "x" +
                                 std::to_string(spines) + "x" + std::to_string(perLeaf);
        row(name, points.back());
        std::printf("\n");
    }
    const auto fit = Fit(points);
    // Fat trees, which the fit has not seen, check it.
    for (uint32_t k : {8u, 16u})
    {
        const FabricFigures f =
            MeasureFabric([k] { return TopologySpec::FatTree(k, kHostLink, kFabricLink); });
        const double predicted = Predict(fit, f);
        row("fat tree k=" + std::to_string(k), f);
        std::printf("  the fit: %.0f (%+.1f %%)\n", predicted,
                    100.0 * (predicted - f.bytes) / f.bytes);
    }
    std::printf("\nper host (node, NIC, its port and cable): %8.0f bytes\n", fit[0]);
    std::printf("per switch (node, MMU, tables):           %8.0f bytes\n", fit[1]);
    std::printf("per switch port (device, cable):          %8.0f bytes\n", fit[2]);
    std::printf("per route (a switch's entry for a host):  %8.1f bytes\n", fit[3]);
    std::printf("fixed:                                    %8.0f bytes\n", fit[4]);
    std::printf("the objects themselves: RoceNetDevice %zu, RoceChannel %zu, RoceNic %zu, "
                "RoceSwitch %zu, Node %zu bytes\n",
                sizeof(RoceNetDevice), sizeof(RoceChannel), sizeof(RoceNic), sizeof(RoceSwitch),
                sizeof(Node));
    std::printf("per flow (both queue pairs, its pacer, the runner's record): %8.0f bytes\n",
                BytesPerFlow(2048));
    for (const bool compact : {true, false})
    {
        const PacketFigures packet = BytesPerQueuedPacket(20000, compact);
        std::printf("per queued packet (1,024-byte payload, on a port's queue), %s: %8.0f "
                    "bytes (ns3::Packet itself: %zu)\n",
                    compact ? "kept as bytes" : "as a Packet  ", packet.bytes, sizeof(Packet));
        for (const auto& [size, perPacket] : packet.blocks)
        {
            if (perPacket >= 0.01) // (kept as bytes, they are in a few large rings)
            {
                std::printf("    blocks of %4.0f bytes: %.2f per packet\n", size, perPacket);
            }
        }
    }
    std::printf("per frame arrival (pooled event, BucketScheduler):           %8.0f bytes\n",
                BytesPerEvent(20000, true));
    std::printf("per event from Simulator::Schedule holding a packet:         %8.0f bytes\n",
                BytesPerEvent(20000, false));
    return 0;
}
