// A real endpoint's RoCEv2 uplink on an external host's bare port, in plain
// simulation (no taps): frames cross bit-exact with their 802.1Q tag added and
// removed, CE marks earn the sender a CNP through the model's own notification
// point, that CNP cuts the sender's flow through the model's own pacer, and
// holding the fabric back pauses it with PFC until it is let go.
#include "emulator/edge/roce-uplink.h"

#include "ns3/config.h"
#include "ns3/roce-fabric-helper.h"
#include "ns3/roce-frame.h"
#include "ns3/simulator.h"

#include <doctest/doctest.h>

#include <memory>
#include <vector>

using namespace fabemu;
using namespace ns3;

namespace
{

constexpr uint32_t kDestQp = 0x11;

std::vector<uint8_t>
Frame(const RoceFabricHelper& fabric, uint32_t psn, uint8_t ecn, uint8_t opcode = 0x0a)
{
    RoceFrameSpec spec;
    spec.vlan = false; // as rxe sends
    spec.srcMac = {0x52, 0x54, 0, 0, 0, 1};
    spec.dstMac = {0x52, 0x54, 0, 0, 0, 2};
    spec.srcIpv4 = fabric.GetHostIpv4(0);
    spec.dstIpv4 = fabric.GetHostIpv4(1);
    spec.ecn = ecn;
    spec.transport.opcode = opcode; // by default RC RDMA WRITE Only
    spec.transport.psn = psn;
    spec.transport.destQp = kDestQp;
    spec.transport.payload = 1024;
    spec.payloadFill = static_cast<uint8_t>(psn);
    return BuildRoceV2Frame(spec);
}

struct Pair
{
    RoceFabricHelper fabric;
    std::unique_ptr<RoceUplink> a;
    std::unique_ptr<RoceUplink> b;
    std::vector<std::vector<uint8_t>> atB; ///< what the fabric delivered to endpoint B
    std::vector<Time> atBWhen;
    std::vector<uint64_t> rates; ///< A's flow, bit/s
};

void
Build(Pair& p, bool dcqcn)
{
    Config::Reset();
    Config::SetDefault("ns3::DcqcnNotificationPoint::CnpInterval", TimeValue(MicroSeconds(50)));
    p.fabric.SetExternalHosts({0, 1});
    p.fabric.Install(TopologySpec::Star(2, LinkParams{DataRate("10Gbps"), MicroSeconds(1)}));
    p.a = std::make_unique<RoceUplink>(p.fabric.GetPort(0), 3);
    p.b = std::make_unique<RoceUplink>(p.fabric.GetPort(1), 3);
    p.a->SetDeliver([](const std::vector<uint8_t>&) {});
    p.b->SetDeliver([&p](const std::vector<uint8_t>& f) {
        p.atB.push_back(f);
        p.atBWhen.push_back(Simulator::Now());
    });
    if (dcqcn)
    {
        for (auto* u : {p.a.get(), p.b.get()})
        {
            u->EnableDcqcn(DataRate("10Gbps"));
        }
        p.a->SetRateObserver([&p](uint32_t ip, uint32_t qp, uint64_t bps) {
            CHECK(ip == p.fabric.GetHostIpv4(1));
            CHECK(qp == kDestQp);
            p.rates.push_back(bps);
        });
    }
}

void
SendAt(Pair& p, Time at, const std::vector<uint8_t>& frame)
{
    Simulator::Schedule(at, [&p, bytes = frame]() mutable {
        const ParsedFrame f = ParseEthernetFrame(bytes.data(), bytes.size(), false);
        p.a->Send(bytes.data(), bytes.size(), f, 3);
    });
}

} // namespace

TEST_CASE("RoCEv2 uplink: bare ports, frames bit-exact across, CE marks cut the sender by CNP")
{
    Pair p;
    Build(p, true);
    CHECK(p.fabric.GetNic(0) == nullptr);
    CHECK(p.fabric.GetNic(1) == nullptr);
    std::vector<std::vector<uint8_t>> sent;
    for (uint32_t i = 0; i < 20; ++i)
    {
        sent.push_back(Frame(p.fabric, i, i < 10 ? 3 : 2)); // the first ten CE-marked
        SendAt(p, MicroSeconds(5 * i), sent.back());
    }
    Simulator::Stop(MilliSeconds(2));
    Simulator::Run();
    REQUIRE(p.atB.size() == sent.size());
    for (size_t i = 0; i < sent.size(); ++i)
    {
        CAPTURE(i);
        CHECK(p.atB[i] == sent[i]); // untagged again, every byte as sent
    }
    EdgeCounters ca;
    EdgeCounters cb;
    p.a->AddCounters(ca);
    p.b->AddCounters(cb);
    // Marks at 0..45 us, CnpInterval 50 us: one CNP from B's notification point.
    CHECK(cb.cnpsSent == 1);
    CHECK(ca.cnpsConsumed == 1);
    REQUIRE(p.rates.size() >= 2);
    CHECK(p.rates.front() == 10'000'000'000ull); // the flow starts at line rate
    CHECK(p.rates[1] < p.rates.front());         // the CNP cut it
    CHECK(ca.lowestRateBps < 10'000'000'000ull);
    p.a.reset();
    p.b.reset();
    Simulator::Destroy();
}

TEST_CASE("RoCEv2 uplink: without DCQCN no CNP; holding the fabric back pauses it by PFC")
{
    Pair p;
    Build(p, false);
    Simulator::Schedule(Time(0), [&p] { p.b->HoldFabric(true); });
    for (uint32_t i = 0; i < 5; ++i)
    {
        SendAt(p, MicroSeconds(10 + i), Frame(p.fabric, i, 3));
    }
    Simulator::Schedule(MicroSeconds(500), [&p] { p.b->HoldFabric(false); });
    Simulator::Stop(MilliSeconds(2));
    Simulator::Run();
    REQUIRE(p.atB.size() == 5);
    for (const Time& t : p.atBWhen)
    {
        CHECK(t >= MicroSeconds(500)); // none passed the pause
    }
    EdgeCounters cb;
    p.b->AddCounters(cb);
    CHECK(cb.pausesToFabric >= 1);
    CHECK(cb.cnpsSent == 0);
    CHECK(p.fabric.TotalDrops() == 0);
    p.a.reset();
    p.b.reset();
    Simulator::Destroy();
}

TEST_CASE("RoCEv2 uplink with DCQCN sends Not-ECT data ECT(0), its checksum fixed and ICRC intact")
{
    for (const bool dcqcn : {true, false})
    {
        CAPTURE(dcqcn);
        Pair p;
        Build(p, dcqcn);
        const auto sent = Frame(p.fabric, 7, 0); // Not-ECT, as rxe sends without --tclass
        SendAt(p, MicroSeconds(1), sent);
        Simulator::Stop(MilliSeconds(1));
        Simulator::Run();
        REQUIRE(p.atB.size() == 1);
        const auto got = ParseEthernetFrame(p.atB[0].data(), p.atB[0].size(), true);
        CHECK(got.ecn == (dcqcn ? 2 : 0));
        CHECK(got.error == FrameError::None); // the ICRC (checked) masks the TOS
        uint32_t sum = 0;                     // an IPv4 header with a right checksum sums to 0xffff
        for (size_t i = got.l3Offset; i < got.l3Offset + 20; i += 2)
        {
            sum += static_cast<uint32_t>(p.atB[0][i] << 8 | p.atB[0][i + 1]);
        }
        while (sum >> 16)
        {
            sum = (sum & 0xffff) + (sum >> 16);
        }
        CHECK(sum == 0xffff);
        // Nothing but the TOS byte and the IPv4 checksum changed.
        const size_t tos = got.l3Offset + 1;
        CHECK((sent[tos] != p.atB[0][tos]) == dcqcn);
        for (size_t i = 0; i < sent.size(); ++i)
        {
            CAPTURE(i);
            CHECK((sent[i] == p.atB[0][i] || i == tos || i == got.l3Offset + 10 ||
                   i == got.l3Offset + 11));
        }
        EdgeCounters ca;
        p.a->AddCounters(ca);
        CHECK(ca.framesMadeEct == (dcqcn ? 1u : 0u));
        p.a.reset();
        p.b.reset();
        Simulator::Destroy();
    }
    // An ACK is not paced data: it stays Not-ECT (a CE mark on it would slow the wrong
    // sender).
    Pair p;
    Build(p, true);
    SendAt(p, MicroSeconds(1), Frame(p.fabric, 9, 0, 0x11)); // RC Acknowledge
    Simulator::Stop(MilliSeconds(1));
    Simulator::Run();
    REQUIRE(p.atB.size() == 1);
    CHECK(ParseEthernetFrame(p.atB[0].data(), p.atB[0].size(), false).ecn == 0);
    EdgeCounters ca;
    p.a->AddCounters(ca);
    CHECK(ca.framesMadeEct == 0);
    p.a.reset();
    p.b.reset();
    Simulator::Destroy();
}
