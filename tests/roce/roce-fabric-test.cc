#include "ns3/boolean.h"
#include "ns3/config.h"
#include "ns3/pointer.h"
#include "ns3/rdma-workload.h"
#include "ns3/roce-fabric-helper.h"
#include "ns3/roce-packet.h"
#include "ns3/roce-recorders.h"
#include "ns3/simulator.h"
#include "ns3/string.h"
#include "ns3/uinteger.h"

#include <doctest/doctest.h>

#include <sstream>

using namespace ns3;

TEST_CASE("ECMP spreads flows between two leaves over both spines")
{
    Config::Reset();
    RoceFabricHelper fabric;
    fabric.Install(TopologySpec::LeafSpine(2, 2, 4, LinkParams{}, LinkParams{}));
    // Leaf 0 is switch 0, with ports 0 and 1 toward the spines.
    Ptr<RoceSwitch> leaf = fabric.GetSwitches().at(0);
    std::array<uint64_t, 2> up{};
    for (uint32_t port = 0; port < 2; ++port)
    {
        leaf->GetPort(port)->TraceConnectWithoutContext(
            "MacTx",
            MakeCallback(+[](uint64_t* n, Ptr<const Packet>, uint8_t) { ++*n; }).Bind(&up[port]));
    }
    FlowRunner runner(fabric);
    for (int i = 0; i < 64; ++i)
    {
        runner.Add(workload::Bulk(i % 4, 4 + (i / 4) % 4, 10'000, MicroSeconds(i)));
    }
    runner.Start();
    Simulator::Run();
    CHECK(runner.Pending() == 0);
    const double share = static_cast<double>(up[0]) / (up[0] + up[1]);
    CHECK(share > 0.3);
    CHECK(share < 0.7);
    Simulator::Destroy();
}

TEST_CASE("PFC on one priority holds only the QPs of that priority")
{
    Config::Reset();
    RoceFabricHelper fabric;
    fabric.Install(TopologySpec::Star(3, LinkParams{}));
    // h1 and h2 each send to h0; h1's QP on priority 3 (lossless), h2's on priority 1.
    const auto c1 = fabric.Connect(1, 0);
    const auto c2 = fabric.Connect(2, 0);
    fabric.GetNic(2)->SetQpPriority(DynamicCast<RdmaQueuePair>(c2.requester), 1);
    fabric.GetNic(0)->SetQpPriority(DynamicCast<RdmaQueuePair>(c2.responder), 1);
    // Pause priority 3 on h1's port for good: its QP may send nothing meanwhile.
    Ptr<RoceSwitch> sw = fabric.GetSwitches().at(0);
    for (int i = 0; i < 20; ++i)
    {
        Simulator::Schedule(MicroSeconds(100 * i), &RoceNetDevice::SendPause, sw->GetPort(1), 3,
                            0xffff);
    }
    for (const auto& c : {c1, c2})
    {
        RdmaWorkRequest wr;
        wr.bytes = 1'000'000;
        c.requester->PostSend(wr);
    }
    Simulator::Stop(MilliSeconds(1));
    Simulator::Run();
    // Only what h1 had sent before the first pause reached it (1 us of cable, about
    // 12 frames at 100 Gb/s) gets through; then nothing for the rest of the run.
    CHECK(c1.responder->GetBytesReceived() <= 16 * 1024);
    CHECK(c2.responder->GetBytesReceived() == 1'000'000);
    CHECK(fabric.GetNic(1)->GetDevice()->GetQueueFrames(3) == 1); // one frame waits, no pile
    Simulator::Destroy();
}

TEST_CASE("the rate log follows DCQCN's cuts and recoveries")
{
    Config::Reset();
    Config::SetDefault("ns3::RoceNic::CongestionControl", StringValue("ns3::DcqcnRateControl"));
    RoceFabricHelper fabric;
    fabric.Install(TopologySpec::Star(5, LinkParams{}));
    std::ostringstream log;
    RateLog rates(fabric, log);
    FlowRunner runner(fabric);
    runner.Add(workload::Incast(0, {1, 2, 3, 4}, 2'000'000, Time(0)));
    runner.Start();
    Simulator::Run();
    CHECK(runner.Pending() == 0);
    CHECK(rates.Changes() > 4);
    std::istringstream lines(log.str());
    long long t = 0;
    unsigned host = 0, qpn = 0;
    unsigned long long bps = 0;
    bool cut = false;
    while (lines >> t >> host >> qpn >> bps)
    {
        CHECK(bps <= 100'000'000'000ULL);
        if (host == 0)
        {
            // h0 only receives: its QPs' rate control is started at line rate, never cut.
            CHECK(bps == 100'000'000'000ULL);
        }
        cut = cut || bps < 100'000'000'000ULL;
    }
    CHECK(cut);
    Simulator::Destroy();
    Config::Reset();
}

TEST_CASE("helper: Set*Attribute reaches every object it creates; external hosts get a bare port")
{
    Config::Reset();
    Config::SetDefault("ns3::RoceNic::Dscp", UintegerValue(10)); // defaults still apply
    RoceFabricHelper fabric;
    fabric.SetNicAttribute("Priority", UintegerValue(5));
    fabric.SetDeviceAttribute("PfcEnabled", BooleanValue(false));
    fabric.SetSwitchAttribute("EcmpSeed", UintegerValue(7));
    fabric.SetExternalHosts({2});
    fabric.Install(TopologySpec::Star(3, LinkParams{}));
    for (uint32_t h : {0u, 1u})
    {
        UintegerValue prio;
        UintegerValue dscp;
        fabric.GetNic(h)->GetAttribute("Priority", prio);
        fabric.GetNic(h)->GetAttribute("Dscp", dscp);
        CHECK(prio.Get() == 5);
        CHECK(dscp.Get() == 10);
        CHECK(fabric.GetNic(h)->GetDevice() == fabric.GetPort(h));
    }
    for (const auto& dev : fabric.GetDevices())
    {
        BooleanValue pfc;
        dev->GetAttribute("PfcEnabled", pfc);
        CHECK_FALSE(pfc.Get());
    }
    UintegerValue seed;
    fabric.GetSwitches().at(0)->GetAttribute("EcmpSeed", seed);
    CHECK(seed.Get() == 7);
    CHECK(fabric.GetNHosts() == 3);
    // One NIC's notification point, through the attribute path, as ns-3 users set it.
    Config::Set("/NodeList/" + std::to_string(fabric.GetHost(0)->GetId()) +
                    "/$ns3::RoceNic/NotificationPoint/CnpInterval",
                TimeValue(MicroSeconds(7)));
    for (auto [h, want] : {std::pair{0u, MicroSeconds(7)}, std::pair{1u, MicroSeconds(50)}})
    {
        PointerValue np;
        fabric.GetNic(h)->GetAttribute("NotificationPoint", np);
        TimeValue interval;
        np.Get<DcqcnNotificationPoint>()->GetAttribute("CnpInterval", interval);
        CHECK(interval.Get() == want);
    }
    CHECK(fabric.GetNic(2) == nullptr); // nothing simulated answers for h2
    REQUIRE(fabric.GetPort(2) != nullptr);
    CHECK(fabric.GetPort(2)->GetNode() == fabric.GetHost(2));
    // Simulated hosts still talk; the external host's port is routed like any host's.
    FlowRunner runner(fabric);
    runner.Add({FlowSpec{0, 1, 100000, Time(0)}});
    runner.Start();
    Simulator::Run();
    REQUIRE(runner.Outcomes().size() == 1);
    CHECK(runner.Outcomes()[0].Completed());
    CHECK(fabric.TotalCnps() == 0);
    Simulator::Destroy();
}
