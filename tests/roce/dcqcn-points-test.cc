// The two halves of DCQCN that ns3::RoceNic and the emulator's RoCEv2 uplink share:
// the notification point's CNP spacing per flow and the pacer's frame spacing.
#include "ns3/config.h"
#include "ns3/dcqcn-notification-point.h"
#include "ns3/flow-pacer.h"
#include "ns3/roce-net-device.h"
#include "ns3/simulator.h"

#include <doctest/doctest.h>

#include <vector>

using namespace ns3;

TEST_CASE("notification point: one CNP per flow per CnpInterval, flows apart, Forget restarts")
{
    Config::Reset();
    Config::SetDefault("ns3::DcqcnNotificationPoint::CnpInterval", TimeValue(MicroSeconds(50)));
    Ptr<DcqcnNotificationPoint> np = CreateObject<DcqcnNotificationPoint>();
    std::vector<uint64_t> traced;
    np->TraceConnectWithoutContext("CnpDue",
                                   MakeCallback(+[](std::vector<uint64_t>* v, uint64_t flow) {
                                       v->push_back(flow);
                                   }).Bind(&traced));
    std::vector<std::pair<int64_t, uint64_t>> due; // (us, flow)
    auto mark = [&](int64_t us, uint64_t flow) {
        Simulator::Schedule(MicroSeconds(us), [&, us, flow] {
            if (np->OnMarked(flow))
            {
                due.emplace_back(us, flow);
            }
        });
    };
    mark(0, 7);  // due: the flow's first mark
    mark(10, 7); // within 50 us of the last CNP
    mark(20, 9); // another flow: its own interval
    mark(49, 7); // still within
    mark(50, 7); // 50 us on: due
    mark(60, 9); // within flow 9's
    Simulator::Schedule(MicroSeconds(70), [&] { np->Forget(9); });
    mark(71, 9); // forgotten: due at once
    Simulator::Run();
    Simulator::Destroy();
    const std::vector<std::pair<int64_t, uint64_t>> want{{0, 7}, {20, 9}, {50, 7}, {71, 9}};
    CHECK(due == want);
    CHECK(np->GetCnpsDue() == 4);
    CHECK(traced == std::vector<uint64_t>{7, 9, 7, 9});
}

TEST_CASE("notification point: CnpInterval 0 answers every mark; CNP priority and DSCP are "
          "attributes")
{
    Config::Reset();
    Config::SetDefault("ns3::DcqcnNotificationPoint::CnpInterval", TimeValue(Time(0)));
    Config::SetDefault("ns3::DcqcnNotificationPoint::CnpPriority", UintegerValue(5));
    Config::SetDefault("ns3::DcqcnNotificationPoint::CnpDscp", UintegerValue(40));
    Ptr<DcqcnNotificationPoint> np = CreateObject<DcqcnNotificationPoint>();
    CHECK(np->OnMarked(1));
    CHECK(np->OnMarked(1));
    CHECK(np->GetCnpPriority() == 5);
    CHECK(np->GetCnpDscp() == 40);
    Config::Reset();
}

TEST_CASE("pacer: frames leave a wire time apart at the line rate, then at DCQCN's cut rate")
{
    Config::Reset();
    Ptr<FlowPacer> pacer = CreateObject<FlowPacer>();
    pacer->SetLineRate(DataRate("10Gbps"));
    CHECK(pacer->GetRateControl() == nullptr);
    CHECK(pacer->GetNextSend() == Time(0));
    // 1000 bytes + preamble, FCS and gap (24) at 10 Gb/s: 819.2 ns.
    const uint32_t wire = RoceNetDevice::WireBytes(1000);
    REQUIRE(wire == 1024);
    pacer->OnSent(1000);
    CHECK(pacer->GetNextSend() == NanoSeconds(819) + PicoSeconds(200));
    pacer->OnSent(1000); // back to back: the second gap starts where the first ended
    CHECK(pacer->GetNextSend() == NanoSeconds(1638) + PicoSeconds(400));
    pacer->OnCnp(); // no congestion control: nothing to cut
    CHECK(pacer->GetRate() == DataRate("10Gbps"));

    Ptr<DcqcnRateControl> cc = CreateObject<DcqcnRateControl>();
    pacer->SetRateControl(cc);
    CHECK(cc->GetRate() == DataRate("10Gbps"));
    pacer->OnCnp();
    const DataRate cut = pacer->GetRate();
    CHECK(cut.GetBitRate() < DataRate("10Gbps").GetBitRate());
    CHECK(cut == cc->GetRate());
    const Time before = pacer->GetNextSend();
    pacer->OnSent(1000);
    CHECK(pacer->GetNextSend() == before + cut.CalculateBytesTxTime(wire));
    pacer->Dispose();
    Simulator::Destroy();
}
