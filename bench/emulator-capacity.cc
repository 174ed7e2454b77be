// Emulator frame capacity without VMs (issue: the emulator, "Speed").
//
// A generator writes 1 KB RoCEv2 frames into one tap at a set rate; a sink reads
// another. Between them either the emulator (two edge ports on a modelled
// RoCEv2 switch, 100 Gb/s links, in real time) or, as the baseline in the same
// run, a plain Linux bridge, and the bare relay (the emulator's tap I/O with no
// model: what any user-space hop costs here). For each offered rate: frames lost
// and, for the emulator, how far simulated time lagged the wall clock. The
// capacity is the highest rate with nothing lost and the lag under 1 ms. Needs root.
// For the emulator, also what a frame costs its simulation thread: events run and
// memory allocations made (operator new and new[], counted on that thread) per frame
// offered in the second half of each rate's time, once the edges' stores are full.
#include "emulator/edge/edge-port.h"
#include "emulator/edge/lag-monitor.h"
#include "emulator/edge/owned-tap.h"
#include "emulator/edge/realtime-simulator.h"
#include "emulator/edge/realtime-thread.h"
#include "emulator/edge/roce-uplink.h"
#include "emulator/edge/tap-relay.h"
#include "replaced-new.h"

#include "ns3/global-value.h"
#include "ns3/nstime.h"
#include "ns3/realtime-simulator-impl.h"
#include "ns3/roce-fabric-helper.h"
#include "ns3/roce-frame.h"
#include "ns3/simulator.h"
#include "ns3/string.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <new>
#include <poll.h>
#include <sstream>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

using namespace fabemu;
using namespace ns3;
using Clock = std::chrono::steady_clock;

namespace
{
thread_local bool tCounted = false;       ///< this is the simulation thread
std::atomic<uint64_t> gSimAllocations{0}; ///< operator new calls on that thread
} // namespace

void*
BenchAllocate(std::size_t n)
{
    if (tCounted)
    {
        gSimAllocations.fetch_add(1, std::memory_order_relaxed);
    }
    if (void* p = std::malloc(n ? n : 1))
    {
        return p;
    }
    throw std::bad_alloc();
}

void
BenchRelease(void* p) noexcept
{
    std::free(p);
}

void*
BenchAllocateAligned(std::size_t n, std::size_t align)
{
    if (tCounted)
    {
        gSimAllocations.fetch_add(1, std::memory_order_relaxed);
    }
    if (void* p = std::aligned_alloc(align, BenchAlignedBytes(n, align)))
    {
        return p;
    }
    throw std::bad_alloc();
}

void
BenchReleaseAligned(void* p, std::size_t /*align*/) noexcept
{
    std::free(p);
}

namespace
{

constexpr size_t kFrameBytes = 1024;
/// A 4-byte aligned payload (no BTH pad) making the frame 1024 bytes with the ICRC.
constexpr uint32_t kPayload = kFrameBytes - 14 - 20 - 8 - 12 - 4 - 2;
size_t gFrameLen = 0; ///< what the sink counts: the built frames' length
std::string gSimulator = "ns3::FabemuRealtimeSimulatorImpl";
std::string gScheduler = "ns3::PriorityQueueScheduler"; ///< as `fabemu run` emulates
/// The simulation thread's scheduling, as a scenario's `scheduling:` sets it.
ThreadScheduling gScheduling = ThreadScheduling::Shared;
int gTransits = 1000;

struct Trial
{
    uint64_t sent{0};
    uint64_t received{0};
    double lagMaxMs{0};
    double lagMedianMs{0};
    double lagP99Ms{0};
    double transitMedianUs{0};
    double transitP99Us{0};
    double eventsPerFrame{0}; ///< emulator: events its simulation thread ran
    /// emulator: operator new and new[] calls on that thread per frame offered in the second
    /// half of the time (the first fills the edges' stores of packets and buffers)
    double allocationsPerFrame{0};
    /// emulator: what the model itself delays one such frame (its links' propagation and
    /// serialisation), which a faithful emulator adds on top of any forwarding cost
    double modelledUs{0};
    /// relay and emulator: CPU time (user and system) of the thread that carries the
    /// frames (the relay's; the simulation thread), per frame offered
    double cpuUsPerFrame{0};
    /// emulator: the simulation thread's waits for its next event, asleep and spinning
    uint64_t sleeps{0};
    uint64_t spins{0};
    /// the most frames the generator wrote in one go: a rate's 1 ms share, or more
    /// after the generator itself was kept from a core and caught up
    uint64_t burstMax{0};
};

std::vector<EndpointAddress>
Addresses()
{
    std::vector<EndpointAddress> d(2);
    for (uint32_t i = 0; i < 2; ++i)
    {
        d[i].ipv4 = 0x0a000001 + i; // the fabric helper's host addresses
        d[i].mac = {0x52, 0x54, 0, 0, 0, static_cast<uint8_t>(i + 1)};
    }
    return d;
}

/// 1 KB RoCEv2 SEND frames from endpoint 0 to endpoint 1, built before any thread starts.
std::vector<std::vector<uint8_t>>
Frames()
{
    const auto d = Addresses();
    std::vector<std::vector<uint8_t>> frames;
    for (uint32_t psn = 0; psn < 256; ++psn)
    {
        RoceFrameSpec spec;
        spec.vlan = false;
        spec.srcMac = d[0].mac;
        spec.dstMac = d[1].mac;
        spec.srcIpv4 = d[0].ipv4;
        spec.dstIpv4 = d[1].ipv4;
        spec.transport.opcode = 0x04;
        spec.transport.psn = psn;
        spec.transport.destQp = 0x11;
        spec.transport.payload = kPayload;
        frames.push_back(BuildRoceV2Frame(spec));
    }
    return frames;
}

/// Offers \p rate frames/s into \p in for \p seconds while counting what \p out
/// receives; waits 200 ms more for stragglers.
void
Offer(OwnedTap& in, OwnedTap& out, double rate, double seconds,
      const std::vector<std::vector<uint8_t>>& frames, Trial& t)
{
    std::atomic<bool> stop{false};
    std::atomic<uint64_t> received{0};
    std::thread sink([&] {
        while (!stop)
        {
            received += out.Discard(gFrameLen);
            std::this_thread::sleep_for(std::chrono::microseconds(500));
        }
        received += out.Discard(gFrameLen);
    });
    const auto start = Clock::now();
    const auto end = start + std::chrono::duration<double>(seconds);
    const auto half = start + std::chrono::duration<double>(seconds / 2);
    uint64_t sentAtHalf = 0;
    uint64_t allocationsAtHalf = 0;
    for (auto now = start; now < end; now = Clock::now())
    {
        if (now >= half && sentAtHalf == 0)
        {
            sentAtHalf = t.sent;
            allocationsAtHalf = gSimAllocations;
        }
        const auto due =
            static_cast<uint64_t>(std::chrono::duration<double>(now - start).count() * rate);
        t.burstMax = std::max<uint64_t>(t.burstMax, due - std::min(due, t.sent));
        while (t.sent < due)
        {
            // A frame the host refuses counts as lost too: it was offered.
            (void)in.Send(frames[t.sent % frames.size()]);
            ++t.sent;
        }
        // Bursts every millisecond: a finer pace would spend the cores on sleeping.
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    stop = true;
    sink.join();
    t.received = received;
    if (t.sent > sentAtHalf)
    {
        t.allocationsPerFrame =
            double(gSimAllocations - allocationsAtHalf) / double(t.sent - sentAtHalf);
    }
}

/// One frame at a time: the wall time from writing it into \p in to reading it
/// from \p out, \p count times; fills the median and the 99th percentile.
void
Transit(OwnedTap& in, OwnedTap& out, const std::vector<std::vector<uint8_t>>& frames, int count,
        Trial& t)
{
    std::vector<double> us;
    pollfd pfd{out.Fd(), POLLIN, 0};
    for (int i = 0; i < count; ++i)
    {
        const auto start = Clock::now();
        (void)in.Send(frames[i % frames.size()]);
        ++t.sent;
        size_t got = 0;
        while (got == 0 && poll(&pfd, 1, 100) > 0)
        {
            got = out.Discard(gFrameLen);
        }
        if (got == 0)
        {
            continue; // lost: counted by sent > received
        }
        t.received += got;
        us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count());
        std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    std::sort(us.begin(), us.end());
    if (!us.empty())
    {
        t.transitMedianUs = us[us.size() / 2];
        t.transitP99Us = us[us.size() * 99 / 100];
    }
}

/// What every path is put through: \p rate frames/s for \p seconds, or with a rate of
/// 0 one frame at a time (transit).
void
Measure(OwnedTap& in, OwnedTap& out, double rate, double seconds,
        const std::vector<std::vector<uint8_t>>& frames, Trial& t)
{
    if (rate > 0)
    {
        Offer(in, out, rate, seconds, frames, t);
    }
    else
    {
        Transit(in, out, frames, gTransits, t);
    }
}

Trial
ThroughBridge(double rate, double seconds, const std::vector<std::vector<uint8_t>>& frames)
{
    const std::string tag = std::to_string(getpid() % 100000);
    OwnedTap a("fcap" + tag + "a", 1000);
    OwnedTap b("fcap" + tag + "b", 1000);
    const std::string br = "fcap" + tag + "br";
    const std::string up = "ip link add " + br + " type bridge && ip link set " + br +
                           " up && ip link set " + a.Name() + " master " + br + " && ip link set " +
                           b.Name() + " master " + br;
    if (std::system(up.c_str()) != 0)
    {
        throw TapError("cannot make the baseline bridge " + br);
    }
    Trial t;
    Measure(a, b, rate, seconds, frames, t);
    (void)!std::system(("ip link del " + br).c_str());
    return t;
}

Trial
ThroughRelay(double rate, double seconds, const std::vector<std::vector<uint8_t>>& frames)
{
    const std::string tag = std::to_string(getpid() % 100000);
    OwnedTap a("fcap" + tag + "a", 1000);
    OwnedTap b("fcap" + tag + "b", 1000);
    const auto d = Addresses();
    std::vector<TapRelay::Member> members;
    members.push_back({std::make_unique<TapPort>(a.Name()), d[0].mac});
    members.push_back({std::make_unique<TapPort>(b.Name()), d[1].mac});
    TapRelay relay(std::move(members));
    relay.Start();
    Trial t;
    Measure(a, b, rate, seconds, frames, t);
    relay.Stop();
    t.cpuUsPerFrame = relay.ThreadCpu().count() / 1e3 / std::max<double>(1, t.sent);
    return t;
}

/// The emulator's links: 100 Gb/s, 1 us.
LinkParams
EmulatorLink()
{
    return LinkParams{DataRate("100Gbps"), MicroSeconds(1)};
}

Trial
ThroughEmulator(double rate, double seconds, const std::vector<std::vector<uint8_t>>& frames)
{
    Simulator::Destroy();
    GlobalValue::Bind("SimulatorImplementationType", StringValue(gSimulator));
    GlobalValue::Bind("SchedulerType", StringValue(gScheduler));
    const std::string tag = std::to_string(getpid() % 100000);
    OwnedTap a("fcap" + tag + "a", 1000);
    OwnedTap b("fcap" + tag + "b", 1000);
    Trial t;
    {
        RoceFabricHelper fabric;
        fabric.SetExternalHosts({0, 1});
        fabric.Install(TopologySpec::Star(2, EmulatorLink()));
        // The modelled path: two links (host 0 to the switch, the switch to host 1), each
        // its delay and the tagged frame's time on the wire.
        const uint32_t tagged = static_cast<uint32_t>(gFrameLen) + 4;
        t.modelledUs =
            2 * (EmulatorLink().delay + fabric.GetPort(0)->WireTime(tagged)).GetNanoSeconds() / 1e3;
        const auto d = Addresses();
        EdgePort ea("h0", std::make_unique<RoceUplink>(fabric.GetPort(0), 3),
                    std::make_unique<TapPort>(a.Name()), 1500, 3, d);
        EdgePort eb("h1", std::make_unique<RoceUplink>(fabric.GetPort(1), 3),
                    std::make_unique<TapPort>(b.Name()), 1500, 3, d);
        ea.Start();
        eb.Start();
        LagMonitor lag;
        lag.Start();
        std::chrono::nanoseconds simCpu{0};
        std::thread sim([&simCpu] {
            TuneRealtimeThread(gScheduling);
            tCounted = true;
            Simulator::Run();
            simCpu = ThreadCpuTime();
        });
        Measure(a, b, rate, seconds, frames, t);
        Simulator::ScheduleWithContext(0, Time(0), &Simulator::Stop);
        sim.join();
        t.cpuUsPerFrame = simCpu.count() / 1e3 / std::max<double>(1, t.sent);
        if (const auto rt =
                DynamicCast<FabemuRealtimeSimulatorImpl>(Simulator::GetImplementation()))
        {
            t.sleeps = rt->GetSleeps();
            t.spins = rt->GetSpins();
        }
        const double frameCount = std::max<double>(1, t.received);
        t.eventsPerFrame = Simulator::GetEventCount() / frameCount;
        ea.Stop();
        eb.Stop();
        const LagMonitor::Summary lagSummary = lag.Summarize();
        t.lagMaxMs = lagSummary.maxMs;
        t.lagMedianMs = lagSummary.medianMs;
        t.lagP99Ms = lagSummary.p99Ms;
    }
    Simulator::Destroy();
    return t;
}

} // namespace

int
main(int argc, char** argv)
{
    Time::SetResolution(Time::PS);
    double seconds = 2;
    std::vector<double> rates{10e3, 20e3, 40e3, 60e3, 80e3, 100e3, 150e3, 200e3, 300e3};
    for (int i = 1; i < argc; ++i)
    {
        const std::string arg = argv[i];
        if (arg == "--seconds" && i + 1 < argc)
        {
            seconds = std::atof(argv[++i]);
        }
        else if (arg == "--rates" && i + 1 < argc)
        {
            rates.clear();
            std::stringstream list(argv[++i]);
            for (std::string r; std::getline(list, r, ',');)
            {
                rates.push_back(std::atof(r.c_str()));
            }
        }
        else if (arg == "--transits" && i + 1 < argc)
        {
            gTransits = std::atoi(argv[++i]);
        }
        else if (arg == "--simulator" && i + 1 < argc)
        {
            gSimulator = argv[++i];
        }
        else if (arg == "--scheduler" && i + 1 < argc)
        {
            gScheduler = argv[++i];
        }
        else if (arg == "--scheduling" && i + 1 < argc &&
                 (std::string(argv[i + 1]) == "shared" || std::string(argv[i + 1]) == "realtime"))
        {
            gScheduling = std::string(argv[++i]) == "realtime" ? ThreadScheduling::Realtime
                                                               : ThreadScheduling::Shared;
        }
        else
        {
            std::cerr << "usage: emulator-capacity [--simulator TYPE] [--scheduler TYPE] "
                         "[--scheduling shared|realtime] [--seconds S] [--transits N] "
                         "[--rates R1,R2,...]  (frames/s)\n";
            return 2;
        }
    }
    if (const std::string why = OwnedTap::WhyNot(); !why.empty())
    {
        std::cerr << "emulator-capacity: " << why << "\n";
        return 1;
    }
    const auto frames = Frames();
    gFrameLen = frames[0].size();
    {
        // One frame at a time first: what a path adds to a frame's journey.
        const Trial br = ThroughBridge(0, 0, frames);
        const Trial re = ThroughRelay(0, 0, frames);
        const Trial em = ThroughEmulator(0, 0, frames);
        std::printf("transit of one 1 KB frame: bridge median %.1f us (p99 %.1f), relay median "
                    "%.1f us (p99 %.1f), "
                    "emulator median %.1f us (p99 %.1f); %lu/%lu, %lu/%lu and %lu/%lu arrived\n",
                    br.transitMedianUs, br.transitP99Us, re.transitMedianUs, re.transitP99Us,
                    em.transitMedianUs, em.transitP99Us, br.received, br.sent, re.received, re.sent,
                    em.received, em.sent);
        std::printf("transit over the relay's: emulator %+.1f us (goal +2)\n",
                    em.transitMedianUs - re.transitMedianUs);
        // A frame enters the model at its receive stamp (ArrivalStamps), so its modelled
        // path runs while the thread wakes to read it: the transit shows the path only
        // where it outlasts the wake-up (the first events' lateness is that wake-up).
        std::printf("the modelled path (two 1 us links at 100 Gb/s, the frame's serialisation "
                    "on each): %.2f us from the frame's arrival; the emulator's events ran "
                    "late by a median %.1f us (p99 %.1f us)\n",
                    em.modelledUs, em.lagMedianMs * 1e3, em.lagP99Ms * 1e3);
        std::printf("CPU of the thread that carries the frames, a frame: relay %.2f us, "
                    "emulator %.2f us (%+.2f us)\n",
                    re.cpuUsPerFrame, em.cpuUsPerFrame, em.cpuUsPerFrame - re.cpuUsPerFrame);
        // Waits nearer than SpinThreshold spin, others sleep; a frame whose events are
        // all due when the thread wakes for it makes neither.
        std::printf("the simulation thread waited for an event %lu times asleep and %lu "
                    "times spinning, over %lu frames\n",
                    em.sleeps, em.spins, em.sent);
    }
    double bridgeBest = 0;
    double relayBest = 0;
    double emuBest = 0;
    double emuBestP99 = 0;
    double emuLossless = 0;
    std::printf("%-10s %-9s %10s %10s %9s %8s %10s %10s %13s %13s %13s\n", "path", "offered",
                "sent", "received", "burst max", "lost%", "lag max", "lag p99", "cpu us/frame",
                "events/frame", "allocs/frame");
    for (double rate : rates)
    {
        const Trial br = ThroughBridge(rate, seconds, frames);
        const Trial re = ThroughRelay(rate, seconds, frames);
        const Trial em = ThroughEmulator(rate, seconds, frames);
        for (const auto& [name, t] :
             {std::pair{"bridge", br}, std::pair{"relay", re}, std::pair{"emulator", em}})
        {
            std::printf("%-10s %-9.0f %10lu %10lu %9lu %8.3f %8.3f ms %7.3f ms", name, rate, t.sent,
                        t.received, t.burstMax,
                        100.0 * (t.sent - std::min(t.sent, t.received)) / t.sent, t.lagMaxMs,
                        t.lagP99Ms);
            if (std::string(name) != "bridge")
            {
                std::printf(" %13.2f", t.cpuUsPerFrame);
            }
            if (std::string(name) == "emulator")
            {
                std::printf(" %13.2f %13.2f", t.eventsPerFrame, t.allocationsPerFrame);
            }
            std::printf("\n");
        }
        std::fflush(stdout);
        if (br.received >= br.sent)
        {
            bridgeBest = rate;
        }
        if (re.received >= re.sent)
        {
            relayBest = rate;
        }
        if (em.received >= em.sent && em.lagMaxMs < 1.0)
        {
            emuBest = rate;
        }
        if (em.received >= em.sent && em.lagP99Ms < 1.0)
        {
            emuBestP99 = rate;
        }
        if (em.received >= em.sent)
        {
            emuLossless = rate;
        }
    }
    std::printf("capacity (1 KB frames, no loss): Linux bridge %.0f frames/s; relay %.0f; emulator "
                "%.0f frames/s "
                "with the lag always under 1 ms (%.2f of the bridge), %.0f with its p99 under 1 "
                "ms, %.0f with no "
                "loss\n",
                bridgeBest, relayBest, emuBest, bridgeBest > 0 ? emuBest / bridgeBest : 0.0,
                emuBestP99, emuLossless);
    // The figure: faithful (no loss, lag p99 under 1 ms) over the relay's lossless.
    std::printf("faithful capacity: %.2f of the relay's (emulator %.0f frames/s with no loss and "
                "lag p99 under 1 ms, relay %.0f with no loss; goal 0.9)\n",
                relayBest > 0 ? emuBestP99 / relayBest : 0.0, emuBestP99, relayBest);
    return 0;
}
