// Where the model's switch behaviour decides the numbers researchers compare:
// when a frame is ECN-marked, and when a pause ends.
#include "ns3/boolean.h"
#include "ns3/config.h"
#include "ns3/double.h"
#include "ns3/enum.h"
#include "ns3/roce-fabric-helper.h"
#include "ns3/roce-packet.h"
#include "ns3/simulator.h"
#include "ns3/string.h"
#include "ns3/uinteger.h"

#include <doctest/doctest.h>

#include <cmath>
#include <vector>

using namespace ns3;

namespace
{

/// h0 -> s0 at 100 Gb/s, s0 -> s1 at 10 Gb/s, s1 -> h1: one flow of \p bytes from h0
/// to h1 queues at s0's port toward s1. Returns after the flow completes.
struct Bottleneck
{
    RoceFabricHelper fabric;
    Ptr<RoceSwitch> s0;
    Ptr<RoceNetDevice> out; ///< s0's port toward s1
    bool done{false};

    explicit Bottleneck(uint64_t bytes)
    {
        fabric.Install(TopologySpec::Dumbbell(2, LinkParams{DataRate("100Gbps"), MicroSeconds(1)},
                                              LinkParams{DataRate("10Gbps"), MicroSeconds(1)}));
        s0 = fabric.GetSwitches().at(0);
        for (uint32_t i = 0; i < s0->GetNPorts(); ++i)
        {
            if (s0->GetPort(i)->GetDataRate() == DataRate("10Gbps"))
            {
                out = s0->GetPort(i);
            }
        }
        REQUIRE(out);
        const auto conn = fabric.Connect(0, 1);
        conn.requester->SetCompletionCallback(MakeCallback(+[](bool* d, const RdmaCompletion& c) {
                                                  *d = c.status == RdmaCompletion::Status::Success;
                                              }).Bind(&done));
        RdmaWorkRequest wr;
        wr.op = RdmaWorkRequest::Op::Write;
        wr.bytes = bytes;
        conn.requester->PostSend(wr);
    }

    void Run()
    {
        Simulator::Stop(MilliSeconds(20));
        Simulator::Run();
        CHECK(done);
    }

    ~Bottleneck() { Simulator::Destroy(); }
};

/// Each data frame leaving the bottleneck port: marked CE, and the queue it left behind.
struct Departure
{
    bool ce;
    uint64_t queueBehind;
};

std::vector<Departure>
Departures(const std::string& markingPoint)
{
    Config::Reset();
    Config::SetDefault("ns3::RoceSwitch::EcnMarkingPoint", StringValue(markingPoint));
    // Mark every ECN-capable frame above 50 KB, none below.
    Config::SetDefault("ns3::SwitchMmu::Kmin", UintegerValue(50'000));
    Config::SetDefault("ns3::SwitchMmu::Kmax", UintegerValue(50'000));
    Config::SetDefault("ns3::SwitchMmu::Pmax", DoubleValue(1.0));
    Bottleneck b(400'000);
    std::vector<Departure> seen;
    b.out->TraceConnectWithoutContext(
        "MacTx", MakeCallback(+[](std::vector<Departure>* v, RoceNetDevice* dev,
                                  Ptr<const Packet> p, uint8_t prio) {
                     const auto f = PeekFrame(p);
                     if (f.kind == FrameKind::Roce && f.payloadLength > 0)
                     {
                         v->push_back(Departure{f.ecn == 3, dev->GetQueueBytes(prio)});
                     }
                 }).Bind(&seen, PeekPointer(b.out))); // not a Ptr: the device would hold itself
    b.Run();
    return seen;
}

} // namespace

TEST_CASE("ECN at dequeue marks exactly the frames that leave a queue above K; at enqueue, "
          "the marks lag one queueing delay")
{
    const auto dequeue = Departures("Dequeue");
    REQUIRE(dequeue.size() > 300);
    size_t marked = 0;
    for (const auto& d : dequeue)
    {
        CHECK(d.ce == (d.queueBehind > 50'000));
        marked += d.ce;
    }
    CHECK(marked > 100);

    // At enqueue a frame is marked for the queue it found: as the queue drains, frames
    // that joined it above K leave it below K still carrying a mark.
    const auto enqueue = Departures("Enqueue");
    size_t lateMarks = 0;
    size_t unmarkedAbove = 0;
    for (const auto& d : enqueue)
    {
        lateMarks += d.ce && d.queueBehind <= 50'000;
        unmarkedAbove += !d.ce && d.queueBehind > 50'000;
    }
    MESSAGE("enqueue marking: " << lateMarks << " marked frames left a queue under K, "
                                << unmarkedAbove << " unmarked left one above");
    // About K / frame (50,000 / 1086 = 46) frames each way.
    CHECK(lateMarks >= 40);
    CHECK(unmarkedAbove >= 40);
}

TEST_CASE("a PFC pause lasts as long as the drain arithmetic says, to within one frame time")
{
    Config::Reset();
    Config::SetDefault("ns3::SwitchMmu::EcnEnabled", BooleanValue(false));
    Config::SetDefault("ns3::SwitchMmu::StaticThreshold", BooleanValue(true));
    const uint64_t xoff = 200'000;
    const uint64_t offset = 2 * 1086;
    Config::SetDefault("ns3::SwitchMmu::StaticXoff", UintegerValue(xoff));
    Config::SetDefault("ns3::SwitchMmu::ResumeOffset", UintegerValue(offset));
    Bottleneck b(3'000'000);

    struct Pause
    {
        Time xoff;
        Time xon;
        uint64_t sharedAtXoff{0};
        uint64_t headroomAtXoff{0};
        uint64_t arrivedWhilePaused{0}; ///< bytes into the paused PG after XOFF
        uint32_t port{0};
        bool open{false};
    };
    std::vector<Pause> pauses;
    Ptr<SwitchMmu> mmu = b.s0->GetMmu();
    b.s0->TraceConnectWithoutContext("Pfc",
                                     MakeCallback(+[](std::vector<Pause>* v, Ptr<SwitchMmu> m,
                                                      uint32_t port, uint8_t prio, bool pause) {
                                         if (pause)
                                         {
                                             Pause p;
                                             p.xoff = Simulator::Now();
                                             p.sharedAtXoff = m->GetSharedUsed(port, prio);
                                             p.headroomAtXoff = m->GetHeadroomUsed(port, prio);
                                             p.port = port;
                                             p.open = true;
                                             v->push_back(p);
                                         }
                                         else if (!v->empty() && v->back().open)
                                         {
                                             v->back().xon = Simulator::Now();
                                             v->back().open = false;
                                             CHECK(m->GetHeadroomUsed(port, prio) == 0);
                                         }
                                     }).Bind(&pauses, mmu));
    for (uint32_t i = 0; i < b.s0->GetNPorts(); ++i)
    {
        b.s0->GetPort(i)->TraceConnectWithoutContext(
            "MacRx", MakeCallback(+[](std::vector<Pause>* v, uint32_t port, Ptr<const Packet> p) {
                         if (!v->empty() && v->back().open && v->back().port == port &&
                             PeekFrame(p).kind == FrameKind::Roce)
                         {
                             v->back().arrivedWhilePaused += p->GetSize();
                         }
                     }).Bind(&pauses, i));
    }
    b.Run();
    REQUIRE(pauses.size() >= 3);
    const uint32_t frame = 1086; // a middle packet of a 1024-byte path MTU
    const Time frameTime = b.out->WireTime(frame);
    for (size_t i = 0; i + 1 < pauses.size(); ++i) // the last may be cut short by the end
    {
        const Pause& p = pauses[i];
        REQUIRE_FALSE(p.open);
        // XON once headroom is empty and the shared count is at most XOFF - offset: the
        // shared bytes to drain are the frames between there and the count at XOFF.
        const uint64_t sharedToDrain =
            static_cast<uint64_t>(std::ceil(double(p.sharedAtXoff - (xoff - offset)) / frame)) *
            frame;
        const uint64_t drain = p.headroomAtXoff + p.arrivedWhilePaused + sharedToDrain;
        const double want = double(drain) / frame * frameTime.GetSeconds();
        const double got = (p.xon - p.xoff).GetSeconds();
        if (i < 3)
        {
            MESSAGE("pause " << i << ": " << got * 1e6 << " us, drain arithmetic " << want * 1e6
                             << " us (" << drain << " bytes at 10 Gb/s)");
        }
        CHECK(std::abs(got - want) <= frameTime.GetSeconds());
    }
}
