// The lossless edge on real tap devices, without VMs: the test holds each tap's
// file descriptor and plays the endpoint. Endpoint A sends RoCEv2 frames; B does
// not read for a while, so its tap's ring fills. The edge must hold B's frames
// (and pause the fabric when PFC is on) and deliver every one, in order, once B
// reads again.
#include "../skip.h"
#include "emulator/edge/edge-port.h"
#include "emulator/edge/owned-tap.h"
#include "emulator/edge/realtime-simulator.h"
#include "emulator/edge/roce-uplink.h"

#include "ns3/boolean.h"
#include "ns3/config.h"
#include "ns3/global-value.h"
#include "ns3/roce-fabric-helper.h"
#include "ns3/roce-frame.h"
#include "ns3/simulator.h"
#include "ns3/string.h"

#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <unistd.h>

using namespace fabemu;
using namespace ns3;

namespace
{

constexpr uint32_t kDestQp = 0x11;
constexpr uint32_t kPayload = 1024;
constexpr int kFrames = 600; // 640 KB: well above the edge's XOFF

std::vector<EndpointAddress>
Directory(const RoceFabricHelper& fabric)
{
    std::vector<EndpointAddress> d(2);
    for (uint32_t i = 0; i < 2; ++i)
    {
        d[i].ipv4 = fabric.GetHostAddress(i).Get();
        d[i].mac = {0x52, 0x54, 0, 0, 0, static_cast<uint8_t>(i + 1)};
    }
    return d;
}

std::vector<uint8_t>
SendFrame(const std::vector<EndpointAddress>& d, uint32_t psn)
{
    RoceFrameSpec spec;
    spec.vlan = false; // as rxe sends
    spec.srcMac = d[0].mac;
    spec.dstMac = d[1].mac;
    spec.srcIpv4 = d[0].ipv4;
    spec.dstIpv4 = d[1].ipv4;
    spec.transport.opcode = 0x04; // RC SEND Only
    spec.transport.psn = psn;
    spec.transport.destQp = kDestQp;
    spec.transport.payload = kPayload;
    spec.payloadFill = static_cast<uint8_t>(psn);
    return BuildRoceV2Frame(spec);
}

struct Outcome
{
    std::vector<uint32_t> psns; ///< of the frames B read, in order
    bool payloadsIntact{true};
    EdgePort::Counters a;
    EdgePort::Counters b;
    uint64_t switchDrops{0};
    uint64_t others{0}; ///< frames B read that were not A's
    uint64_t pfcFrames{0};
};

/// A and B on one switch at 100 Gb/s; B's tap holds 16 frames and B reads nothing
/// for 300 ms after A has sent.
Outcome
Run(bool pfc)
{
    Simulator::Destroy();
    Config::Reset();
    GlobalValue::Bind("SimulatorImplementationType",
                      StringValue("ns3::FabemuRealtimeSimulatorImpl"));
    Config::SetDefault("ns3::RoceNetDevice::PfcEnabled", BooleanValue(pfc));
    const std::string tag = std::to_string(getpid() % 100000);
    OwnedTap tapA("fet" + tag + "a", 1000);
    OwnedTap tapB("fet" + tag + "b", 16);
    Outcome o;
    {
        RoceFabricHelper fabric;
        fabric.SetExternalHosts({0, 1});
        fabric.Install(TopologySpec::Star(2, LinkParams{DataRate("100Gbps"), MicroSeconds(1)}));
        REQUIRE(fabric.GetNic(0) == nullptr); // bare ports: nothing simulated answers for them
        const auto d = Directory(fabric);
        EdgePort a("h0", std::make_unique<RoceUplink>(fabric.GetPort(0), 3),
                   std::make_unique<TapPort>(tapA.Name()), 1500, 3, d);
        EdgePort b("h1", std::make_unique<RoceUplink>(fabric.GetPort(1), 3),
                   std::make_unique<TapPort>(tapB.Name()), 1500, 3, d);
        a.Start();
        b.Start();
        // Built before the simulation runs: ns-3's packet buffers are not to be
        // touched from two threads, and the frame builder uses them.
        std::vector<std::vector<uint8_t>> sent;
        for (int i = 0; i < kFrames; ++i)
        {
            sent.push_back(SendFrame(d, i));
        }
        std::thread sim([] { Simulator::Run(); });
        for (int i = 0; i < kFrames; ++i)
        {
            REQUIRE(tapA.Send(sent[i]));
            if (i % 50 == 49)
            {
                // Paced so the emulator's packet socket on A never overflows.
                std::this_thread::sleep_for(std::chrono::milliseconds(2));
            }
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
        // B reads again: the held frames follow as its ring empties. Frames are
        // only collected here and examined once the simulation has stopped.
        std::vector<std::vector<uint8_t>> got;
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
        size_t ours = 0;
        while (ours < kFrames && std::chrono::steady_clock::now() < deadline)
        {
            for (auto& frame : tapB.Drain())
            {
                // UDP destination port 4791 at offset 36: one of A's RoCEv2 frames.
                ours += frame.size() > 37 && frame[36] == 0x12 && frame[37] == 0xb7;
                got.push_back(std::move(frame));
            }
            std::this_thread::sleep_for(std::chrono::microseconds(200));
        }
        Simulator::ScheduleWithContext(0, Time(0), &Simulator::Stop);
        sim.join();
        a.Stop();
        b.Stop();
        o.a = a.GetCounters();
        o.b = b.GetCounters();
        o.switchDrops = fabric.TotalDrops();
        for (const auto& frame : got)
        {
            const ParsedFrame f = ParseEthernetFrame(frame.data(), frame.size(), true);
            if (f.kind != FrameKind::Roce || f.destQp != kDestQp || f.psn >= kFrames)
            {
                ++o.others;
                continue;
            }
            o.psns.push_back(f.psn);
            // Bit-exact but for what switches may rewrite (TTL, IP checksum).
            const auto& expect = sent[f.psn];
            o.payloadsIntact = o.payloadsIntact && frame.size() == expect.size() &&
                               std::equal(frame.begin() + 34, frame.end(), expect.begin() + 34);
        }
        o.pfcFrames = fabric.TotalPfcFrames();
    }
    Simulator::Destroy();
    Config::Reset();
    GlobalValue::Bind("SimulatorImplementationType", StringValue("ns3::DefaultSimulatorImpl"));
    return o;
}

void
CheckAllDeliveredInOrder(const Outcome& o)
{
    INFO("A read " << o.a.framesRead << ", took " << o.a.fromTap << " frames in, B was given "
                   << o.b.toTap << ", B read " << o.psns.size() << ", switch drops "
                   << o.switchDrops << ", other frames " << o.others);
    for (const auto& [why, n] : o.a.drops)
    {
        MESSAGE("A dropped " << n << " " << why);
    }
    if (o.psns.size() != kFrames)
    {
        std::vector<bool> seen(kFrames);
        for (uint32_t p : o.psns)
        {
            seen[p] = true;
        }
        for (int i = 0; i < kFrames; ++i)
        {
            if (!seen[i])
            {
                MESSAGE("frame " << i << " never arrived");
            }
        }
    }
    REQUIRE(o.psns.size() == kFrames);
    for (int i = 0; i < kFrames; ++i)
    {
        REQUIRE(o.psns[i] == static_cast<uint32_t>(i));
    }
    CHECK(o.payloadsIntact);
    CHECK(o.b.drops.empty());
    CHECK(o.b.heldAtStop == 0);
    CHECK(o.switchDrops == 0);
    // The ring took its 16 frames; the rest waited at the edge or behind its pause.
    CHECK(o.b.framesHeld > 0);
    // And went out as the ring emptied, batched, not one system call each (586 calls for
    // the 600 frames when the edge drained one frame at a time; 39-250 batched, fewer
    // with PFC off, where the edge held them all).
    INFO("B's writes: " << o.b.toTap << " frames in " << o.b.tapWriteCalls << " system calls");
    CHECK(o.b.tapWriteCalls * 3 <= o.b.toTap * 2);
}

} // namespace

TEST_CASE("a VM that does not read: its edge holds the frames, pauses the fabric, then delivers "
          "all in order")
{
    const std::string why = OwnedTap::WhyNot();
    if (!why.empty())
    {
        FABEMU_SKIP(why);
    }
    const Outcome o = Run(true);
    CheckAllDeliveredInOrder(o);
    MESSAGE("held " << o.b.framesHeld << " frames, peak " << o.b.peakHeldBytes << " bytes, "
                    << o.b.pausesToFabric << " pauses from the edge, " << o.pfcFrames
                    << " PFC frames");
    CHECK(o.b.peakHeldBytes > EdgePort::kHoldXoff);
    CHECK(o.b.pausesToFabric >= 1);
    // Paused at XOFF: the edge held little more than XOFF plus what was on the wire.
    CHECK(o.b.peakHeldBytes < EdgePort::kHoldXoff + 64 * 1024);
}

TEST_CASE("the same with PFC off: the edge holds everything itself and sends no pause")
{
    const std::string why = OwnedTap::WhyNot();
    if (!why.empty())
    {
        FABEMU_SKIP(why);
    }
    const Outcome o = Run(false);
    CheckAllDeliveredInOrder(o);
    CHECK(o.b.pausesToFabric == 0);
    CHECK(o.pfcFrames == 0);
    CHECK(o.b.peakHeldBytes > EdgePort::kHoldXoff); // all 600 minus the ring's 16
}

TEST_CASE("frames read together enter the fabric at the moments they left the endpoint, as the "
          "kernel stamped them")
{
    const std::string why = OwnedTap::WhyNot();
    if (!why.empty())
    {
        FABEMU_SKIP(why);
    }
    // The simulation thread is held by a 40 ms event while A sends two frames 5 ms
    // apart; it then reads both at once. Each must reach A's port on the fabric at its
    // own moment (MacTx: it leaves the port's queue for the wire at once), 5 ms apart,
    // not both at the moment of the read.
    Simulator::Destroy();
    Config::Reset();
    GlobalValue::Bind("SimulatorImplementationType",
                      StringValue("ns3::FabemuRealtimeSimulatorImpl"));
    const std::string tag = std::to_string(getpid() % 100000);
    OwnedTap tapA("fes" + tag + "a", 1000);
    OwnedTap tapB("fes" + tag + "b", 1000);
    std::vector<int64_t> onWireNs;
    std::vector<std::chrono::steady_clock::time_point> sentAt;
    int64_t heldUntilNs = 0;
    EdgePort::Counters countersA;
    {
        RoceFabricHelper fabric;
        fabric.SetExternalHosts({0, 1});
        fabric.Install(TopologySpec::Star(2, LinkParams{DataRate("100Gbps"), MicroSeconds(1)}));
        const auto d = Directory(fabric);
        EdgePort a("h0", std::make_unique<RoceUplink>(fabric.GetPort(0), 3),
                   std::make_unique<TapPort>(tapA.Name()), 1500, 3, d);
        EdgePort b("h1", std::make_unique<RoceUplink>(fabric.GetPort(1), 3),
                   std::make_unique<TapPort>(tapB.Name()), 1500, 3, d);
        fabric.GetPort(0)->TraceConnectWithoutContext(
            "MacTx", MakeCallback(+[](std::vector<int64_t>* at, Ptr<const Packet>, uint8_t) {
                         at->push_back(Simulator::Now().GetNanoSeconds());
                     }).Bind(&onWireNs));
        a.Start();
        b.Start();
        const std::vector<std::vector<uint8_t>> frames{SendFrame(d, 0), SendFrame(d, 1)};
        std::atomic<bool> held{false};
        Simulator::Schedule(MilliSeconds(1), [&] {
            held = true;
            const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(40);
            while (std::chrono::steady_clock::now() < until)
            {
            }
            heldUntilNs = DynamicCast<FabemuRealtimeSimulatorImpl>(Simulator::GetImplementation())
                              ->RealtimeNow()
                              .GetNanoSeconds();
        });
        std::thread sim([] { Simulator::Run(); });
        while (!held)
        {
            std::this_thread::sleep_for(std::chrono::microseconds(100));
        }
        for (const auto& frame : frames)
        {
            if (!sentAt.empty())
            {
                std::this_thread::sleep_for(std::chrono::milliseconds(5));
            }
            sentAt.push_back(std::chrono::steady_clock::now());
            REQUIRE(tapA.Send(frame));
            sentAt.push_back(std::chrono::steady_clock::now());
        }
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
        size_t got = 0;
        while (got < 2 && std::chrono::steady_clock::now() < deadline)
        {
            got += tapB.Discard(frames[0].size());
            std::this_thread::sleep_for(std::chrono::microseconds(200));
        }
        Simulator::ScheduleWithContext(0, Time(0), &Simulator::Stop);
        sim.join();
        a.Stop();
        b.Stop();
        countersA = a.GetCounters();
        CHECK(got == 2);
    }
    Simulator::Destroy();
    Config::Reset();
    GlobalValue::Bind("SimulatorImplementationType", StringValue("ns3::DefaultSimulatorImpl"));
    REQUIRE(onWireNs.size() == 2);
    // Each frame was stamped inside its write: between the moments before and after it.
    const auto ms = [](auto d) { return std::chrono::duration<double, std::milli>(d).count(); };
    const double apartAtLeastMs = ms(sentAt[2] - sentAt[1]);
    const double apartAtMostMs = ms(sentAt[3] - sentAt[0]);
    const double onWireApartMs = (onWireNs[1] - onWireNs[0]) / 1e6;
    INFO("sent " << apartAtLeastMs << " to " << apartAtMostMs << " ms apart, on the wire "
                 << onWireApartMs << " ms apart; the first at " << onWireNs[0] / 1e6
                 << " ms, the thread held until " << heldUntilNs / 1e6 << " ms");
    // Sent while the thread was held (else this shows nothing about a late read).
    REQUIRE(apartAtMostMs < 35.0);
    CHECK(onWireApartMs > apartAtLeastMs - 0.05);
    CHECK(onWireApartMs < apartAtMostMs + 0.05);
    // The first went in before the thread was free to read it: at its own moment.
    CHECK(onWireNs[0] < heldUntilNs - 20'000'000);
    CHECK(countersA.framesRead == 2);
    CHECK(countersA.framesUnstamped == 0);
}

TEST_CASE("a TapPort reads batch after batch into the same headers: every frame at its length "
          "and stamp, the oversized one counted and dropped")
{
    const std::string why = OwnedTap::WhyNot();
    if (!why.empty())
    {
        FABEMU_SKIP(why);
    }
    const std::string tag = std::to_string(getpid() % 100000);
    OwnedTap tap("fer" + tag, 1000);
    TapPort port(tap.Name());
    // 40 frames (three batches of at most 16), each its own length and first payload
    // byte; the 21st is longer than a read slot (9 KiB).
    constexpr int kCount = 40;
    constexpr int kOversized = 20;
    std::vector<size_t> lengths;
    for (int i = 0; i < kCount; ++i)
    {
        const size_t len = i == kOversized ? 9300 : 60 + 37 * static_cast<size_t>(i);
        std::vector<uint8_t> frame(len, static_cast<uint8_t>(i));
        for (size_t b = 0; b < 6; ++b)
        {
            frame[b] = 0x02; // a unicast, locally administered destination
        }
        frame[12] = 0x88; // an EtherType of its own (local experimental)
        frame[13] = 0xb5;
        REQUIRE(tap.Send(frame));
        if (i != kOversized)
        {
            lengths.push_back(len);
        }
    }
    std::vector<size_t> read;
    std::vector<uint8_t> marks;
    std::vector<TapPort::Clock::time_point> stamps;
    const auto before = TapPort::Clock::now();
    // One batch a call, so the headers serve call after call.
    for (int call = 0; call < 10 && read.size() < lengths.size(); ++call)
    {
        port.ReadAvailable(
            [&](uint8_t* frame, size_t len, TapPort::Clock::time_point arrived) {
                read.push_back(len);
                marks.push_back(frame[14]);
                stamps.push_back(arrived);
            },
            1);
    }
    const auto after = TapPort::Clock::now();
    CHECK(read == lengths);
    REQUIRE(marks.size() == lengths.size());
    for (size_t i = 0; i < marks.size(); ++i)
    {
        CHECK(marks[i] == (i < kOversized ? i : i + 1));
    }
    CHECK(port.Truncated() == 1);
    CHECK(port.Unstamped() == 0);
    CHECK(port.FramesRead() == lengths.size());
    for (size_t i = 0; i < stamps.size(); ++i)
    {
        // Stamped by the kernel when written, before the reads began.
        CHECK(stamps[i] <= before);
        CHECK(stamps[i] <= after);
        if (i > 0)
        {
            CHECK(stamps[i - 1] <= stamps[i]);
        }
    }
}
