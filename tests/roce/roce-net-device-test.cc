#include "ns3/boolean.h"
#include "ns3/enum.h"
#include "ns3/pfc-header.h"
#include "ns3/roce-channel.h"
#include "ns3/roce-net-device.h"
#include "ns3/roce-packet.h"
#include "ns3/roce-port-owner.h"
#include "ns3/simulator.h"

#include <doctest/doctest.h>

#include <tuple>
#include <vector>

using namespace ns3;

namespace
{

/// Two nodes joined by one cable; a records what it dequeues, b what arrives.
struct Link
{
    Ptr<RoceNetDevice> a = CreateObject<RoceNetDevice>();
    Ptr<RoceNetDevice> b = CreateObject<RoceNetDevice>();
    Ptr<RoceChannel> cable = CreateObject<RoceChannel>();
    std::vector<std::pair<Time, uint8_t>> txAtA; // (start of transmission, priority)
    std::vector<Time> arrivalsAtB;
    std::vector<Time> pausesAtA;

    explicit Link(DataRate rate = DataRate("100Gbps"), Time delay = MicroSeconds(1))
    {
        for (auto dev : {a, b})
        {
            CreateObject<Node>()->AddDevice(dev); // the node disposes it at Simulator::Destroy
            dev->SetAddress(Mac48Address::Allocate());
            dev->SetDataRate(rate);
        }
        cable->SetAttribute("Delay", TimeValue(delay));
        a->Attach(cable);
        b->Attach(cable);
        a->TraceConnectWithoutContext("MacTx", MakeCallback(&Link::OnTx, this));
        a->TraceConnectWithoutContext("PfcPauseReceived", MakeCallback(&Link::OnPause, this));
        b->SetFrameCallback(MakeCallback(&Link::OnArrival, this));
    }
    ~Link() { Simulator::Destroy(); }

    void OnTx(Ptr<const Packet>, uint8_t prio) { txAtA.emplace_back(Simulator::Now(), prio); }
    void OnPause(uint8_t, uint16_t) { pausesAtA.push_back(Simulator::Now()); }
    void OnArrival(Ptr<RoceNetDevice>, Ptr<Packet>, const ParsedFrame&)
    {
        arrivalsAtB.push_back(Simulator::Now());
    }

    static Ptr<Packet> Frame(uint32_t payload, uint8_t pcp)
    {
        RoceFrameSpec spec;
        spec.pcp = pcp;
        spec.transport.opcode = 0x0a; // RC WRITE Only; the RETH content does not matter here
        spec.transport.payload = payload;
        return MakeRoceV2Packet(spec, false);
    }

    /// a's watchdog set to its Drop action (1 ms to detect, 1 ms of recovery), and a storm
    /// from b: pauses of 2,000 quanta on priority 3, refreshed every 5 us, for 2.2 ms.
    void DropOnStorm()
    {
        a->SetAttribute("PfcWatchdogTime", TimeValue(MilliSeconds(1)));
        a->SetAttribute("PfcWatchdogRecovery", TimeValue(MilliSeconds(1)));
        a->SetAttribute("PfcWatchdogAction", EnumValue(RoceNetDevice::Drop));
        for (int i = 0; i < 440; ++i)
        {
            Simulator::Schedule(MicroSeconds(1 + 5 * i), &RoceNetDevice::SendPause, b, 3, 2000);
        }
    }

    /// \p n frames on \p prio, enqueued with from = firstFrom, firstFrom + 1, ...
    void Backlog(uint8_t prio, int n, uint32_t payload = 1000, uint16_t firstFrom = 0)
    {
        for (int i = 0; i < n; ++i)
        {
            a->Enqueue(Frame(payload, prio), prio, static_cast<uint16_t>(firstFrom + i));
        }
    }
};

} // namespace

TEST_CASE("a frame arrives one wire time plus the propagation delay after it is sent")
{
    Link link(DataRate("10Gbps"), MicroSeconds(2));
    Ptr<Packet> f = Link::Frame(1000, 0);
    const uint32_t size = f->GetSize();
    link.a->Enqueue(f, 0);
    Simulator::Run();
    REQUIRE(link.arrivalsAtB.size() == 1);
    // frame + FCS 4 + preamble/SFD 8 + IFG 12, at 10 Gb/s = 0.8 ns per byte
    const Time want = NanoSeconds(2000) + PicoSeconds(800 * (size + 24));
    CHECK(link.arrivalsAtB[0] == want);
}

TEST_CASE("a backlog leaves at line rate, framing overhead included")
{
    Link link;
    link.Backlog(0, 200);
    Simulator::Run();
    REQUIRE(link.txAtA.size() == 200);
    const uint32_t size = Link::Frame(1000, 0)->GetSize();
    const Time span = link.txAtA.back().first - link.txAtA.front().first;
    CHECK(span == link.a->WireTime(size) * 199);
}

TEST_CASE("a port counts the data frames it sends, as MacTx reports them, and no PFC frame")
{
    Link link;
    link.Backlog(0, 30);
    link.Backlog(3, 20);
    link.a->SendPause(5, 100); // a control frame from a: sent, never counted
    uint64_t midway = 0;
    size_t tracedMidway = 0;
    Simulator::Schedule(MicroSeconds(2), [&]() {
        midway = link.a->GetDataFramesSent();
        tracedMidway = link.txAtA.size();
    });
    Simulator::Run();
    CHECK(tracedMidway > 0);
    CHECK(tracedMidway < 50);
    CHECK(midway == tracedMidway);
    CHECK(link.txAtA.size() == 50);
    CHECK(link.a->GetDataFramesSent() == 50);
    CHECK(link.b->GetDataFramesSent() == 0);
}

TEST_CASE("a pause of q quanta stops that priority for q*512/r, and only that priority")
{
    // Strict priority, so the paused (higher) priority is served the moment its
    // pause ends: the gap measures the pause, not the scheduler.
    Link link;
    link.Backlog(3, 3000);
    link.Backlog(5, 3000);
    const uint16_t quanta = 2000; // 2000 * 5.12 ns = 10.24 us at 100 Gb/s
    const Time pause = PfcHeader::QuantaToTime(quanta, DataRate("100Gbps"));
    CHECK(pause == NanoSeconds(10240));
    Simulator::Schedule(MicroSeconds(20), &RoceNetDevice::SendPause, link.b, 5, quanta);
    Simulator::Run();

    REQUIRE(link.pausesAtA.size() == 1);
    const Time tp = link.pausesAtA[0];
    const Time frameTime = link.a->WireTime(Link::Frame(1000, 5)->GetSize());
    Time lastBefore;
    Time firstAfter = Time::Max();
    int prio3During = 0;
    for (const auto& [t, prio] : link.txAtA)
    {
        if (prio == 5 && t <= tp)
        {
            lastBefore = t;
        }
        if (prio == 5 && t > tp)
        {
            firstAfter = std::min(firstAfter, t);
        }
        if (prio == 3 && t > tp && t < tp + pause)
        {
            ++prio3During;
        }
    }
    // Priority 5 was flowing when the pause arrived ...
    CHECK(tp - lastBefore <= frameTime);
    // ... stops for the pause time, and resumes within one frame time of its end.
    CHECK(firstAfter >= tp + pause);
    CHECK(firstAfter <= tp + pause + frameTime);
    // Priority 3 takes the whole link meanwhile.
    const int lineRateFrames =
        static_cast<int>(pause.GetPicoSeconds() / frameTime.GetPicoSeconds());
    CHECK(prio3During >= lineRateFrames - 1);
}

TEST_CASE("DWRR shares the link by weight between backlogged priorities")
{
    Link link;
    link.a->SetScheduler(RoceNetDevice::Dwrr);
    link.a->SetDwrrWeight(1, 1);
    link.a->SetDwrrWeight(2, 3);
    link.Backlog(1, 2000);
    link.Backlog(2, 6000);
    Simulator::Stop(MicroSeconds(300));
    Simulator::Run();
    int n1 = 0;
    int n2 = 0;
    for (const auto& [t, prio] : link.txAtA)
    {
        n1 += prio == 1;
        n2 += prio == 2;
    }
    REQUIRE(n1 > 500);
    CHECK(static_cast<double>(n2) / n1 == doctest::Approx(3.0).epsilon(0.02));
}

TEST_CASE("quanta 0 resumes a paused priority at once")
{
    Link link;
    link.Backlog(3, 400);
    Simulator::Schedule(MicroSeconds(5), &RoceNetDevice::SendPause, link.b, 3, 0xffff);
    Simulator::Schedule(MicroSeconds(15), &RoceNetDevice::SendPause, link.b, 3, 0);
    Simulator::Run();
    REQUIRE(link.pausesAtA.size() == 2);
    const Time resumeAt = link.pausesAtA[1];
    Time firstAfter = Time::Max();
    for (const auto& [t, prio] : link.txAtA)
    {
        if (t > link.pausesAtA[0] && t < firstAfter)
        {
            firstAfter = t;
        }
    }
    const Time frameTime = link.a->WireTime(Link::Frame(1000, 3)->GetSize());
    CHECK(firstAfter >= resumeAt);
    CHECK(firstAfter <= resumeAt + frameTime);
    // 0xffff quanta would have held it for 335 us: it resumed long before.
    CHECK(firstAfter < MicroSeconds(30));
}

TEST_CASE("a pause refreshed before it expires keeps the priority stopped")
{
    Link link;
    link.Backlog(3, 400);
    const uint16_t quanta = 2000; // 10.24 us
    Simulator::Schedule(MicroSeconds(5), &RoceNetDevice::SendPause, link.b, 3, quanta);
    Simulator::Schedule(MicroSeconds(10), &RoceNetDevice::SendPause, link.b, 3, quanta);
    Simulator::Run();
    REQUIRE(link.pausesAtA.size() == 2);
    const Time end = link.pausesAtA[1] + PfcHeader::QuantaToTime(quanta, DataRate("100Gbps"));
    for (const auto& [t, prio] : link.txAtA)
    {
        CHECK_FALSE((t > link.pausesAtA[0] && t < end));
    }
}

TEST_CASE("a port that does not honour PFC keeps sending")
{
    Link link;
    link.a->SetAttribute("PfcEnabled", BooleanValue(false));
    link.Backlog(3, 400);
    Simulator::Schedule(MicroSeconds(5), &RoceNetDevice::SendPause, link.b, 3, 0xffff);
    Simulator::Run();
    CHECK(link.txAtA.size() == 400);
    CHECK(link.txAtA.back().first < MicroSeconds(40));
}

TEST_CASE("the PFC watchdog fires within its detection time; with a recovery the queue goes on")
{
    // off; on, reporting only (a NIC's, the default); on, ignoring pauses for 200 ms (a
    // switch port's, RoceSwitch::PfcWatchdogRecovery).
    for (const auto& [watchdog, recovery] :
         {std::pair{false, Time(0)}, std::pair{true, Time(0)}, std::pair{true, MilliSeconds(200)}})
    {
        CAPTURE(watchdog);
        CAPTURE(recovery);
        Link link;
        if (watchdog)
        {
            link.a->SetAttribute("PfcWatchdogTime", TimeValue(MilliSeconds(1)));
            link.a->SetAttribute("PfcWatchdogRecovery", TimeValue(recovery));
        }
        std::vector<Time> storms;
        link.a->TraceConnectWithoutContext("PfcStorm",
                                           MakeCallback(+[](std::vector<Time>* s, uint8_t, Time d) {
                                               s->push_back(d);
                                           }).Bind(&storms));
        uint32_t ignored = 0;
        link.a->TraceConnectWithoutContext(
            "PfcPauseIgnored",
            MakeCallback(+[](uint32_t* n, uint8_t, uint16_t) { ++*n; }).Bind(&ignored));
        link.Backlog(3, 100);
        // A storm: pauses of 2000 quanta (10.24 us) refreshed every 5 us for 3 ms.
        for (int i = 0; i < 600; ++i)
        {
            Simulator::Schedule(MicroSeconds(1 + 5 * i), &RoceNetDevice::SendPause, link.b, 3,
                                2000);
        }
        Simulator::Run();
        if (watchdog)
        {
            // Detected at the first pause after 1 ms of being paused (they come every 5 us).
            REQUIRE(storms.size() == 1);
            CHECK(storms[0] >= MilliSeconds(1));
            CHECK(storms[0] < MilliSeconds(1) + MicroSeconds(10));
            CHECK(link.a->GetPfcStorms() == 1);
        }
        else
        {
            CHECK(storms.empty());
        }
        if (recovery.IsStrictlyPositive())
        {
            // The rest of the storm's pauses are not honoured: the backlog leaves at once.
            CHECK(link.txAtA.back().first < MilliSeconds(1) + MicroSeconds(30));
            CHECK(ignored >= 399); // the pauses after it fired
        }
        else
        {
            // Held until the storm's last pause runs out (3 ms + 10.24 us).
            CHECK(link.txAtA.back().first > MilliSeconds(3));
            CHECK(ignored == 0);
        }
        CHECK(link.txAtA.size() == 100); // the backlog leaves either way
        Simulator::Destroy();
    }
}

TEST_CASE("a NIC's pause storm holds its peer paused for as long as it lasts")
{
    Link link;
    link.Backlog(3, 50);
    link.b->StartPauseStorm(MilliSeconds(2));
    // Overlapping storms last until the later ends: one of 1 ms at 500 us does not cut
    // this 2 ms one short.
    Simulator::Schedule(MicroSeconds(500), &RoceNetDevice::StartPauseStorm, link.b,
                        MilliSeconds(1));
    Simulator::Run();
    // Pauses of 65535 quanta (335.5 us at 100 Gb/s) refreshed at half that: once the first
    // is in, the peer sends nothing until the last one, sent before 2 ms, runs out.
    REQUIRE(link.txAtA.size() == 50);
    CHECK(link.txAtA.back().first > MilliSeconds(2));
    CHECK(link.txAtA.back().first < MilliSeconds(2) + MicroSeconds(340));
    Simulator::Destroy();
}

TEST_CASE("pauses with breaks between them are not a storm")
{
    Link link;
    link.a->SetAttribute("PfcWatchdogTime", TimeValue(MilliSeconds(1)));
    link.Backlog(3, 2000);
    // 10.24 us pauses every 20 us: each runs out before the next.
    for (int i = 0; i < 150; ++i)
    {
        Simulator::Schedule(MicroSeconds(1 + 20 * i), &RoceNetDevice::SendPause, link.b, 3, 2000);
    }
    Simulator::Run();
    CHECK(link.a->GetPfcStorms() == 0);
}

TEST_CASE("the PFC watchdog's Drop action empties the queue and drops what comes until recovery")
{
    Link link;
    std::vector<Time> dropped;
    link.a->TraceConnectWithoutContext(
        "PfcWatchdogDrop", MakeCallback(+[](std::vector<Time>* d, Ptr<const Packet>, uint8_t prio) {
                               CHECK(prio == 3);
                               d->push_back(Simulator::Now());
                           }).Bind(&dropped));
    uint32_t dequeued = 0; // what the owner (a switch) is told has left the queue
    link.a->SetDequeueCallback(
        MakeCallback(+[](uint32_t* n, Ptr<RoceNetDevice>, Ptr<const Packet>, uint8_t) {
            ++*n;
        }).Bind(&dequeued));
    link.Backlog(3, 100);
    link.DropOnStorm(); // a storm as above, pauses refreshed every 5 us, for 2.2 ms
    // 10 frames arrive during the recovery (1.5 ms), 10 after it and the storm (2.5 ms).
    Simulator::Schedule(MicroSeconds(1500), &Link::Backlog, &link, 3, 10, 1000u, uint16_t{0});
    Simulator::Schedule(MicroSeconds(2500), &Link::Backlog, &link, 3, 10, 1000u, uint16_t{0});
    Simulator::Run();
    // Some of the backlog left before the first pause came (at line rate, in ~2 us); the
    // rest waited. Fired once at 1 ms (+ one refresh): what waited is dropped then, the 10
    // of the recovery as they come; the 10 after it leave as usual.
    size_t sentFirst = 0;
    while (sentFirst < link.txAtA.size() && link.txAtA[sentFirst].first < MicroSeconds(10))
    {
        ++sentFirst;
    }
    CHECK(sentFirst > 0);
    CHECK(sentFirst < 100);
    const size_t waited = 100 - sentFirst;
    REQUIRE(dropped.size() == waited + 10);
    CHECK(dropped.front() >= MilliSeconds(1));
    CHECK(dropped[waited - 1] < MilliSeconds(1) + MicroSeconds(10));
    CHECK(dropped[waited] == MicroSeconds(1500));
    CHECK(dropped.back() == MicroSeconds(1500));
    CHECK(link.a->GetWatchdogDrops() == waited + 10);
    CHECK(link.a->GetPfcStorms() == 1);
    REQUIRE(link.txAtA.size() == sentFirst + 10);
    CHECK(link.txAtA[sentFirst].first >= MicroSeconds(2500));
    CHECK(dequeued == 120); // every frame's buffer freed: waited + 10 dropped, sentFirst + 10 sent
    Simulator::Destroy();
}

namespace
{

/// An owner that records its calls: (what, port, when, the frame's from where there is one).
struct RecordingOwner : public RocePortOwner
{
    // 'r'eceived, 'b'efore transmit, 'd'equeued, 'w'atchdog dropped
    std::vector<std::tuple<char, uint32_t, Time, int>> calls;

    void FrameReceived(uint32_t port, Ptr<Packet>, const ParsedFrame& f) override
    {
        CHECK(f.kind == FrameKind::Roce);
        calls.emplace_back('r', port, Simulator::Now(), -1);
    }

    void BeforeTransmit(uint32_t port, Ptr<Packet>, uint8_t prio) override
    {
        CHECK(prio == 3);
        calls.emplace_back('b', port, Simulator::Now(), -1);
    }

    void FrameDequeued(uint32_t port, Ptr<const Packet>, uint8_t prio, uint16_t from) override
    {
        CHECK(prio == 3);
        calls.emplace_back('d', port, Simulator::Now(), from);
    }

    void WatchdogDropped(uint32_t port, Ptr<const Packet>, uint8_t prio, uint16_t from) override
    {
        CHECK(prio == 3);
        calls.emplace_back('w', port, Simulator::Now(), from);
    }
};

} // namespace

TEST_CASE("a port with an owner calls it with the owner's index, in place of its callbacks")
{
    Link link;
    RecordingOwner sender;
    RecordingOwner receiver;
    link.a->SetOwner(&sender, 7);
    link.b->SetOwner(&receiver, 11);
    uint32_t dequeueCallbacks = 0;
    link.a->SetDequeueCallback(
        MakeCallback(+[](uint32_t* n, Ptr<RoceNetDevice>, Ptr<const Packet>, uint8_t) {
            ++*n;
        }).Bind(&dequeueCallbacks));
    link.Backlog(3, 2, 1000, 40);
    Simulator::Run();
    // The sender's owner: each frame before it goes on the wire, then as it has left,
    // with what it was enqueued with.
    REQUIRE(sender.calls.size() == 4);
    for (size_t i = 0; i < 4; ++i)
    {
        CHECK(std::get<0>(sender.calls[i]) == (i % 2 == 0 ? 'b' : 'd'));
        CHECK(std::get<1>(sender.calls[i]) == 7);
    }
    CHECK(std::get<3>(sender.calls[1]) == 40);
    CHECK(std::get<3>(sender.calls[3]) == 41);
    // The receiver's owner has both frames, one wire time apart; its callback has nothing.
    REQUIRE(receiver.calls.size() == 2);
    CHECK(std::get<0>(receiver.calls[0]) == 'r');
    CHECK(std::get<1>(receiver.calls[1]) == 11);
    CHECK(std::get<2>(receiver.calls[1]) - std::get<2>(receiver.calls[0]) ==
          link.a->WireTime(Link::Frame(1000, 3)->GetSize()));
    CHECK(link.arrivalsAtB.empty());
    CHECK(dequeueCallbacks == 0);

    // Without an owner, the callbacks again.
    link.a->SetOwner(nullptr, 0);
    link.b->SetOwner(nullptr, 0);
    link.Backlog(3, 1);
    Simulator::Run();
    CHECK(sender.calls.size() == 4);
    CHECK(receiver.calls.size() == 2);
    CHECK(link.arrivalsAtB.size() == 1);
    CHECK(dequeueCallbacks == 1);
}

TEST_CASE("a frame the watchdog drops is told to the owner, with its from, then dequeued")
{
    Link link;
    RecordingOwner owner;
    link.a->SetOwner(&owner, 2);
    link.Backlog(3, 100, 1000, 500); // from = 500 ... 599
    link.DropOnStorm();
    // One more during the recovery: dropped as it comes, with its own from.
    Simulator::Schedule(MicroSeconds(1500), &Link::Backlog, &link, 3, 1, 1000u, uint16_t{7});
    Simulator::Run();
    std::vector<int> dequeued;
    std::vector<int> dropped;
    for (size_t i = 0; i < owner.calls.size(); ++i)
    {
        const auto& [what, port, at, from] = owner.calls[i];
        CHECK(port == 2);
        if (what == 'd')
        {
            dequeued.push_back(from);
        }
        if (what == 'w')
        {
            dropped.push_back(from);
            // Told first, then dequeued (which frees its buffer at a switch).
            REQUIRE(i + 1 < owner.calls.size());
            CHECK(std::get<0>(owner.calls[i + 1]) == 'd');
            CHECK(std::get<3>(owner.calls[i + 1]) == from);
        }
    }
    // Every frame leaves once, in the order it came, with what it was enqueued with.
    REQUIRE(dequeued.size() == 101);
    for (int i = 0; i < 100; ++i)
    {
        CHECK(dequeued[i] == 500 + i);
    }
    CHECK(dequeued[100] == 7);
    // The dropped ones: those that waited, then the one of the recovery.
    REQUIRE(dropped.size() == link.a->GetWatchdogDrops());
    REQUIRE(dropped.size() >= 2);
    CHECK(dropped.size() < 101);
    CHECK(dropped.back() == 7);
    CHECK(dropped[dropped.size() - 2] == 599);
    CHECK(dropped.front() == 500 + static_cast<int>(101 - dropped.size()));
}
