// The InfiniBand fabric against what theory and the specification say:
// payload efficiency on one link, the credit loop, a lossless incast with fair
// shares, and VL arbitration weights and the high-priority limit.
#include "ns3/boolean.h"
#include "ns3/config.h"
#include "ns3/ib-fabric-helper.h"
#include "ns3/ib-link.h"
#include "ns3/simulator.h"
#include "ns3/string.h"
#include "ns3/uinteger.h"

#include <doctest/doctest.h>

#include <numeric>

using namespace ns3;

namespace
{

/// Flows not yet complete; the run stops when it reaches 0 (FCP timers never stop).
size_t g_pending = 0;

struct Flow
{
    RdmaFabric::Connection conn;
    uint64_t bytes;
    Time done;
    bool ok{false};
};

/// Posts one WRITE of \p bytes on a new connection; its completion time goes into the flow.
Flow&
Write(std::vector<std::unique_ptr<Flow>>& flows, IbFabricHelper& f, uint32_t a, uint32_t b,
      uint64_t bytes, uint8_t sl = 0)
{
    flows.push_back(std::make_unique<Flow>());
    Flow& flow = *flows.back();
    flow.conn = f.Connect(a, b, sl);
    flow.bytes = bytes;
    flow.conn.requester->SetCompletionCallback(MakeCallback(+[](Flow* fl, const RdmaCompletion& c) {
                                                   fl->done = c.completed;
                                                   fl->ok =
                                                       c.status == RdmaCompletion::Status::Success;
                                                   if (--g_pending == 0)
                                                   {
                                                       Simulator::Stop();
                                                   }
                                               }).Bind(&flow));
    ++g_pending;
    RdmaWorkRequest wr;
    wr.op = RdmaWorkRequest::Op::Write;
    wr.bytes = bytes;
    flow.conn.requester->PostSend(wr);
    return flow;
}

void
Reset()
{
    g_pending = 0;
    Simulator::Destroy();
    Config::Reset();
}

/// Packet bytes on the wire for a full-MTU WRITE Middle packet: LRH, BTH, payload, ICRC, VCRC.
double
Efficiency(uint32_t mtu)
{
    return double(mtu) / (mtu + 8 + 12 + 4 + 2);
}

} // namespace

TEST_CASE("one 4x EDR link, MTU 4096: goodput is the payload efficiency of the link within 1%, GRH "
          "or not")
{
    // With a GRH on every packet (LNH 3) each carries 40 bytes more.
    for (bool grh : {false, true})
    {
        CAPTURE(grh);
        Reset();
        Config::SetDefault("ns3::RdmaQueuePair::Mtu", UintegerValue(4096));
        Config::SetDefault("ns3::IbHca::UseGrh", BooleanValue(grh));
        IbFabricHelper f;
        f.Install(TopologySpec::Star(2, LinkParams{IbLinkRate("EDR", 4), NanoSeconds(100)}));
        std::vector<std::unique_ptr<Flow>> flows;
        const uint64_t bytes = 40'000'000;
        Flow& fl = Write(flows, f, 0, 1, bytes);
        Simulator::Stop(Seconds(1));
        Simulator::Run();
        REQUIRE(fl.ok);
        const double goodput = bytes * 8.0 / fl.done.GetSeconds();
        const double expect =
            100e9 * 4096 / (4096 + 8 + (grh ? 40 : 0) + 12 + 4 + 2); // 99.37 Gb/s without
        CAPTURE(goodput);
        CHECK(goodput == doctest::Approx(expect).epsilon(0.01));
        CHECK(f.TotalOverflows() == 0);
        Reset();
    }
}

TEST_CASE("credit loop: a buffer below the bandwidth-delay product gives buffer / round trip")
{
    // MTU 256 keeps packets small against the buffer, so the granularity is fine.
    const uint32_t mtu = 256;
    const uint32_t packetBytes = mtu + 8 + 12 + 4 + 2;
    const uint32_t blocksPerPacket = IbPort::Blocks(packetBytes);
    const Time delay = MicroSeconds(10);
    const DataRate rate = IbLinkRate("EDR", 4);
    for (uint32_t buffer : {256u, 1024u, 16384u})
    {
        CAPTURE(buffer);
        Reset();
        Config::SetDefault("ns3::RdmaQueuePair::Mtu", UintegerValue(mtu));
        Config::SetDefault("ns3::IbPort::BufferBlocks", UintegerValue(buffer));
        IbFabricHelper f;
        f.Install(TopologySpec::Pair(LinkParams{rate, delay}));
        std::vector<std::unique_ptr<Flow>> flows;
        const uint64_t bytes = 20'000'000;
        Flow& fl = Write(flows, f, 0, 1, bytes);
        Simulator::Stop(Seconds(1));
        Simulator::Run();
        REQUIRE(fl.ok);
        const double goodput = bytes * 8.0 / fl.done.GetSeconds();
        // A block sent at t is free again when the packet's tail has arrived
        // (t + wire + delay) and its FCP has come back (+ FCP wire + delay).
        const double wire = packetBytes * 8.0 / rate.GetBitRate();
        const double loop = 2 * delay.GetSeconds() + wire + kIbFcpBytes * 8.0 / rate.GetBitRate();
        // FCCL runs at most 2048 blocks ahead of ABR (12-bit counters): a VL never
        // has more than 128 KB in flight, however large its buffer.
        const double window = double(std::min(buffer, 2048u) / blocksPerPacket) * mtu * 8.0;
        const double theory = std::min(window / loop, rate.GetBitRate() * Efficiency(mtu));
        CAPTURE(goodput);
        CAPTURE(theory);
        CHECK(goodput == doctest::Approx(theory).epsilon(0.05));
        CHECK(f.TotalCreditStalls() > 0);
        Reset();
    }
}

TEST_CASE("credit loop: with a buffer above the bandwidth-delay product the link runs at line rate")
{
    Reset();
    Config::SetDefault("ns3::RdmaQueuePair::Mtu", UintegerValue(256));
    Config::SetDefault("ns3::IbPort::BufferBlocks", UintegerValue(2048)); // 128 KB; BDP ~25 KB
    IbFabricHelper f;
    const DataRate rate = IbLinkRate("EDR", 4);
    f.Install(TopologySpec::Pair(LinkParams{rate, MicroSeconds(1)}));
    std::vector<std::unique_ptr<Flow>> flows;
    const uint64_t bytes = 20'000'000;
    Flow& fl = Write(flows, f, 0, 1, bytes);
    Simulator::Stop(Seconds(1));
    Simulator::Run();
    REQUIRE(fl.ok);
    const double goodput = bytes * 8.0 / fl.done.GetSeconds();
    CHECK(goodput == doctest::Approx(rate.GetBitRate() * Efficiency(256)).epsilon(0.01));
    Reset();
}

TEST_CASE("wrap-around: 200 MB through a switch wraps every 12-bit counter hundreds of times, no "
          "stall, no overflow")
{
    Reset();
    const uint32_t mtu = 2048;
    Config::SetDefault("ns3::RdmaQueuePair::Mtu", UintegerValue(mtu));
    Config::SetDefault("ns3::IbPort::BufferBlocks", UintegerValue(2048)); // well above the BDP
    IbFabricHelper f;
    const DataRate rate = IbLinkRate("EDR", 4);
    f.Install(TopologySpec::Star(2, LinkParams{rate, NanoSeconds(500)}));
    std::vector<std::unique_ptr<Flow>> flows;
    const uint64_t bytes = 200'000'000;
    Flow& fl = Write(flows, f, 0, 1, bytes);
    // Payload delivered in each millisecond: every one at line rate.
    std::vector<uint64_t> delivered;
    Ptr<RdmaQp> rx = fl.conn.responder;
    for (int ms = 1; ms <= 15; ++ms)
    {
        Simulator::Schedule(MilliSeconds(ms),
                            [&delivered, rx]() { delivered.push_back(rx->GetBytesReceived()); });
    }
    // Stalls once running (the first packets may wait for the first flow-control packet).
    uint64_t stallsAfterStart = 0;
    Simulator::Schedule(MilliSeconds(1),
                        [&stallsAfterStart, &f]() { stallsAfterStart = f.TotalCreditStalls(); });
    // The buffer trace sees every change, so the test also watches for an excess.
    uint32_t worst = 0;
    for (const auto& port : f.GetPorts())
    {
        port->TraceConnectWithoutContext("BufferDepth",
                                         MakeCallback(+[](uint32_t* w, uint8_t, uint32_t blocks) {
                                             *w = std::max(*w, blocks);
                                         }).Bind(&worst));
    }
    Simulator::Stop(Seconds(1));
    Simulator::Run();
    REQUIRE(fl.ok);
    const double line = rate.GetBitRate() * Efficiency(mtu) / 8 / 1000; // bytes per ms
    REQUIRE(delivered.size() == 15);
    for (size_t i = 1; i < delivered.size(); ++i)
    {
        CAPTURE(i);
        CHECK(double(delivered[i] - delivered[i - 1]) == doctest::Approx(line).epsilon(0.01));
    }
    // Each link's counters advanced by the whole transfer in 64-byte blocks, mod 4096.
    const double wraps = double(bytes) / kIbCreditBytes / 4096;
    CHECK(wraps > 700);
    CHECK(f.TotalCreditStalls() == stallsAfterStart);
    CHECK(f.TotalOverflows() == 0);
    CHECK(worst > 0);
    CHECK(worst <= 2048);
    Reset();
}

TEST_CASE("the HCA's SL-to-VL table puts an SL on the VL it names; unset SLs take SL mod VLs")
{
    Reset();
    Config::SetDefault("ns3::IbPort::NumDataVls", UintegerValue(4));
    IbFabricHelper f;
    f.Install(TopologySpec::Pair(LinkParams{IbLinkRate("EDR", 4), NanoSeconds(100)}));
    f.GetHca(0)->SetSl2Vl(5, 3); // SL 5 -> VL 3 (SL mod 4 would be VL 1)
    CHECK(f.GetHca(0)->VlOf(5) == 3);
    CHECK(f.GetHca(0)->VlOf(6) == 2);
    f.GetHca(0)->SetSl2Vl(7, 9); // a VL the port lacks: falls back to SL mod VLs
    CHECK(f.GetHca(0)->VlOf(7) == 3);
    std::vector<std::unique_ptr<Flow>> flows;
    Flow& a = Write(flows, f, 0, 1, 100'000, 5);
    Flow& b = Write(flows, f, 0, 1, 100'000, 6);
    Simulator::Stop(MilliSeconds(10));
    Simulator::Run();
    CHECK(a.ok);
    CHECK(b.ok);
    Ptr<IbPort> port = f.GetHca(0)->GetPort();
    CHECK(port->GetBytesSent(3) > 100'000);
    CHECK(port->GetBytesSent(2) > 100'000);
    CHECK(port->GetBytesSent(1) == 0);
    Reset();
}

TEST_CASE("16:1 incast: lossless, every byte delivered, fair shares, no buffer ever over its size")
{
    Reset();
    Config::SetDefault("ns3::RdmaQueuePair::Mtu", UintegerValue(2048));
    Config::SetDefault("ns3::IbPort::BufferBlocks", UintegerValue(256));
    IbFabricHelper f;
    const DataRate rate = IbLinkRate("EDR", 4);
    f.Install(TopologySpec::Star(17, LinkParams{rate, NanoSeconds(200)}));
    std::vector<std::unique_ptr<Flow>> flows;
    const uint64_t bytes = 2'000'000;
    for (uint32_t s = 1; s <= 16; ++s)
    {
        Write(flows, f, s, 0, bytes);
    }
    Simulator::Stop(Seconds(1));
    Simulator::Run();
    const double fair = rate.GetBitRate() * Efficiency(2048) / 16;
    uint64_t delivered = 0;
    for (const auto& fl : flows)
    {
        REQUIRE(fl->ok);
        delivered += fl->conn.responder->GetBytesReceived();
        const double share = bytes * 8.0 / fl->done.GetSeconds();
        CAPTURE(share / fair);
        CHECK(share == doctest::Approx(fair).epsilon(0.10));
    }
    CHECK(delivered == 16 * bytes);
    CHECK(f.TotalNoRouteDrops() == 0);
    CHECK(f.TotalOverflows() == 0);
    for (const auto& p : f.GetPorts())
    {
        CHECK(p->GetPeakBlocks(0) <= p->GetBufferBlocks());
    }
    CHECK(f.TotalCreditStalls() > 0); // the senders did wait for credits
    Reset();
}

TEST_CASE("VL arbitration: low-priority weights 16:32:64 share a link 1/7, 2/7, 4/7")
{
    Reset();
    Config::SetDefault("ns3::RdmaQueuePair::Mtu", UintegerValue(1024));
    Config::SetDefault("ns3::IbPort::NumDataVls", UintegerValue(3));
    // Weights in 64-byte units: 1 KB, 2 KB and 4 KB per turn, one, two and four packets.
    Config::SetDefault("ns3::IbPort::VlArbLow", StringValue("0:16,1:32,2:64"));
    IbFabricHelper f;
    f.Install(TopologySpec::Pair(LinkParams{IbLinkRate("EDR", 4), NanoSeconds(100)}));
    std::vector<std::unique_ptr<Flow>> flows;
    for (uint8_t sl = 0; sl < 3; ++sl)
    {
        Write(flows, f, 0, 1, 1'000'000'000, sl); // saturated all through the run
    }
    Simulator::Stop(MilliSeconds(1));
    Simulator::Run();
    Ptr<IbPort> port = f.GetHca(0)->GetPort();
    std::vector<double> sent;
    for (uint8_t vl = 0; vl < 3; ++vl)
    {
        sent.push_back(double(port->GetBytesSent(vl)));
    }
    const double total = std::accumulate(sent.begin(), sent.end(), 0.0);
    CHECK(sent[0] / total == doctest::Approx(1.0 / 7).epsilon(0.05));
    CHECK(sent[1] / total == doctest::Approx(2.0 / 7).epsilon(0.05));
    CHECK(sent[2] / total == doctest::Approx(4.0 / 7).epsilon(0.05));
    Reset();
}

TEST_CASE("a high-priority VL is held to LimitOfHighPriority while low-priority packets wait")
{
    for (uint32_t limit : {1u, 255u})
    {
        CAPTURE(limit);
        Reset();
        Config::SetDefault("ns3::RdmaQueuePair::Mtu", UintegerValue(1024));
        Config::SetDefault("ns3::IbPort::NumDataVls", UintegerValue(2));
        Config::SetDefault("ns3::IbPort::VlArbHigh", StringValue("1:255"));
        Config::SetDefault("ns3::IbPort::VlArbLow", StringValue("0:255"));
        Config::SetDefault("ns3::IbPort::LimitOfHighPriority", UintegerValue(limit));
        IbFabricHelper f;
        f.Install(TopologySpec::Pair(LinkParams{IbLinkRate("EDR", 4), NanoSeconds(100)}));
        std::vector<std::unique_ptr<Flow>> flows;
        Write(flows, f, 0, 1, 1'000'000'000, 0);
        Write(flows, f, 0, 1, 1'000'000'000, 1);
        Simulator::Stop(MilliSeconds(1));
        Simulator::Run();
        Ptr<IbPort> port = f.GetHca(0)->GetPort();
        const double high = double(port->GetBytesSent(1));
        const double low = double(port->GetBytesSent(0));
        if (limit == 1)
        {
            // 4 KB of 1050-byte packets is four packets; then one low-priority packet.
            CHECK(high / (high + low) == doctest::Approx(4.0 / 5).epsilon(0.05));
        }
        else
        {
            CHECK(low / (high + low) < 0.01); // unbounded: high priority takes the link
        }
        Reset();
    }
}

namespace
{

/// Three hotspot flows into h4 and a victim h3 -> h5 that shares their path as far
/// as switch B's input; returns the victim's throughput over its 20 MB.
double
VictimThroughput(bool cc, uint64_t* fecn = nullptr, uint64_t* becn = nullptr)
{
    Reset();
    Config::SetDefault("ns3::RdmaQueuePair::Mtu", UintegerValue(2048));
    Config::SetDefault("ns3::IbSwitch::CcEnabled", BooleanValue(cc));
    IbFabricHelper f;
    const DataRate edge = IbLinkRate("EDR", 4);
    // h0..h3 on switch A, h4..h7 on switch B; the A-B link (12x) carries all four
    // senders at line rate, so only h4's port is congested and max-min fairness
    // gives the victim its whole 100 Gb/s.
    f.Install(TopologySpec::Dumbbell(8, LinkParams{edge, NanoSeconds(100)},
                                     LinkParams{IbLinkRate("EDR", 12), NanoSeconds(100)}));
    std::vector<std::unique_ptr<Flow>> flows;
    for (uint32_t s = 0; s < 3; ++s)
    {
        Write(flows, f, s, 4, 2'000'000'000); // never done within the run
    }
    Flow& victim = Write(flows, f, 3, 5, 20'000'000);
    g_pending = 1; // the run ends with the victim
    Simulator::Stop(Seconds(1));
    Simulator::Run();
    REQUIRE(victim.ok);
    if (fecn)
    {
        *fecn = f.TotalFecnMarks();
        *becn = f.TotalBecns();
    }
    const double rate = victim.bytes * 8.0 / victim.done.GetSeconds();
    Reset();
    return rate;
}

} // namespace

TEST_CASE("congestion spreading: a victim sharing the hotspot's path suffers; IB CC gives it back")
{
    const double fair = IbLinkRate("EDR", 4).GetBitRate() * Efficiency(2048);
    const double off = VictimThroughput(false);
    uint64_t fecn = 0;
    uint64_t becn = 0;
    const double on = VictimThroughput(true, &fecn, &becn);
    MESSAGE("victim at " << off / fair << " of its fair rate with CC off, " << on / fair
                         << " with CC on; " << fecn << " FECN marks, " << becn << " BECNs");
    CHECK(off < 0.6 * fair); // head-of-line blocking behind the hotspot's packets
    CHECK(on >= 0.8 * fair); // the bar: at least 80% of its fair rate
    CHECK(fecn > 0);
    CHECK(becn > 0);
}

TEST_CASE(
    "a ring: min-hop routes close a credit loop and deadlock; up/down routes deliver everything")
{
    // Five switches in a ring, a host on each; host i writes to host i+2, two switch hops
    // the same way round for everyone: each ring link's buffer waits on the next one's.
    for (auto routing : {IbFabricHelper::Routing::MinHop, IbFabricHelper::Routing::UpDown})
    {
        const bool upDown = routing == IbFabricHelper::Routing::UpDown;
        CAPTURE(upDown);
        Reset();
        Config::SetDefault("ns3::RdmaQueuePair::Mtu", UintegerValue(1024));
        Config::SetDefault("ns3::IbPort::BufferBlocks", UintegerValue(64)); // 4 KB per VL
        IbFabricHelper f;
        f.SetRouting(routing);
        const LinkParams link{IbLinkRate("EDR", 4), NanoSeconds(100)};
        f.Install(TopologySpec::Ring(5, 1, link, link));
        std::vector<std::unique_ptr<Flow>> flows;
        for (uint32_t i = 0; i < 5; ++i)
        {
            Write(flows, f, i, (i + 2) % 5, 2'000'000);
        }
        Simulator::Stop(MilliSeconds(20));
        Simulator::Run();
        size_t done = 0;
        for (const auto& fl : flows)
        {
            done += fl->ok;
        }
        if (upDown)
        {
            CHECK(done == 5);
        }
        else
        {
            CHECK(done == 0); // not one completes: the loop holds every ring buffer
        }
        CHECK(f.TotalOverflows() == 0);
        Reset();
    }
}

TEST_CASE("LMC: flows to one host take the paths of its several LIDs")
{
    for (uint8_t lmc : {0, 1})
    {
        CAPTURE(+lmc);
        Reset();
        Config::SetDefault("ns3::RdmaQueuePair::Mtu", UintegerValue(2048));
        IbFabricHelper f;
        f.SetLmc(lmc);
        const LinkParams link{IbLinkRate("EDR", 4), NanoSeconds(100)};
        f.Install(TopologySpec::LeafSpine(2, 2, 2, link, link)); // h0, h1 | h2, h3
        std::vector<std::unique_ptr<Flow>> flows;
        Write(flows, f, 0, 2, 4'000'000);
        Write(flows, f, 1, 2, 4'000'000);
        Simulator::Stop(Seconds(1));
        Simulator::Run();
        CHECK(flows[0]->ok);
        CHECK(flows[1]->ok);
        size_t busy = 0; // switch ports that carried a flow's data
        for (const auto& sw : f.GetSwitches())
        {
            for (uint32_t p = 0; p < sw->GetNPorts(); ++p)
            {
                busy += sw->GetPort(p)->GetBytesSent(0) > 1'000'000;
            }
        }
        // One spine: leaf0 up, spine down, leaf1 to h2. Both spines: two ports more.
        CHECK(busy == (lmc == 0 ? 3u : 5u));
        CHECK(f.GetHca(2)->GetLid() == (3 << lmc));
        Reset();
    }
}

TEST_CASE("helper: Set*Attribute reaches every object it creates; external hosts get a bare port")
{
    Config::Reset();
    IbFabricHelper fabric;
    fabric.SetPortAttribute("BufferBlocks", UintegerValue(96));
    fabric.SetHcaAttribute("UseGrh", BooleanValue(true));
    fabric.SetSwitchAttribute("SwitchingLatency", TimeValue(NanoSeconds(321)));
    fabric.SetExternalHosts({1});
    fabric.Install(TopologySpec::Star(3, LinkParams{}));
    for (const auto& port : fabric.GetPorts())
    {
        UintegerValue blocks;
        port->GetAttribute("BufferBlocks", blocks);
        CHECK(blocks.Get() == 96);
    }
    for (uint32_t h : {0u, 2u})
    {
        BooleanValue grh;
        fabric.GetHca(h)->GetAttribute("UseGrh", grh);
        CHECK(grh.Get());
        CHECK(fabric.GetHca(h)->GetPort() == fabric.GetPort(h));
        CHECK(fabric.GetHca(h)->GetLid() == fabric.GetLid(h));
    }
    TimeValue latency;
    fabric.GetSwitches().at(0)->GetAttribute("SwitchingLatency", latency);
    CHECK(latency.Get() == NanoSeconds(321));
    CHECK(fabric.GetNHosts() == 3);
    CHECK(fabric.GetHca(1) == nullptr); // h1's bare port: a gateway's to take
    CHECK(fabric.GetPort(1) != nullptr);
    CHECK(fabric.GetLid(1) == 2);
    Simulator::Destroy();
}
