// The InfiniBand edge gateway on real rxe traffic (tests/data captures): each
// RoCEv2 frame becomes the IB packet an HCA would send (LRH, GRH, the frame's own
// BTH and payload, ICRC, VCRC), other IP goes as IPoIB, and every frame comes out
// of the far gateway bit-exact, in order, after crossing the credit-controlled model.
#include "../pcap-frames.h"
#include "emulator/edge/ib-gateway.h"

#include "ns3/config.h"
#include "ns3/ib-fabric-helper.h"
#include "ns3/simulator.h"

#include <doctest/doctest.h>

using namespace fabemu;
using namespace ns3;

namespace
{

std::vector<EndpointAddress>
Directory()
{
    // The capture's two VMs.
    EndpointAddress a;
    a.ipv4 = 0x0a000001;
    a.mac = {0x52, 0x54, 0, 0, 0, 0x01};
    EndpointAddress b;
    b.ipv4 = 0x0a000002;
    b.mac = {0x52, 0x54, 0, 0, 0, 0x02};
    return {a, b};
}

struct Pair
{
    IbFabricHelper fabric;
    std::shared_ptr<IbTunnel> tunnel = std::make_shared<IbTunnel>();
    std::unique_ptr<IbGateway> g[2];
    std::vector<std::vector<uint8_t>> delivered[2];

    Pair()
    {
        fabric.SetExternalHosts({0, 1});
        fabric.Install(TopologySpec::Star(2, LinkParams{DataRate("100Gbps"), NanoSeconds(100)}));
        const std::vector<uint16_t> lids{fabric.GetLid(0), fabric.GetLid(1)};
        for (uint32_t i = 0; i < 2; ++i)
        {
            g[i] = std::make_unique<IbGateway>(fabric.GetPort(i), i, lids[i], tunnel, Directory(),
                                               lids);
            g[i]->SetDeliver(
                [this, i](const std::vector<uint8_t>& f) { delivered[i].push_back(f); });
        }
    }
};

} // namespace

TEST_CASE("a RoCEv2 frame becomes LRH + GRH + its own BTH..payload + ICRC + VCRC")
{
    Simulator::Destroy();
    Config::Reset();
    Pair p;
    size_t roce = 0;
    for (const auto& frame : ReadPcapFrames(TestData("rxe-rc-write-ipv4.pcap")))
    {
        const ParsedFrame f = ParseEthernetFrame(frame.data(), frame.size(), false);
        if (f.kind != FrameKind::Roce || f.ipVersion != 4)
        {
            continue;
        }
        ++roce;
        const uint16_t dlid = p.g[0]->LidFor(f);
        REQUIRE(dlid != 0);
        const auto pkt = p.g[0]->Encapsulate(frame, f, 3, dlid);
        const size_t ipEnd =
            f.l3Offset + (size_t(frame[f.l3Offset + 2]) << 8 | frame[f.l3Offset + 3]);
        const size_t transport = ipEnd - f.bthOffset; // BTH through the ICRC
        REQUIRE(pkt.size() == kIbLrhBytes + kIbGrhBytes + transport + kIbVcrcBytes);
        const LrhHeader lrh = LrhHeader::Read(pkt.data());
        CHECK(lrh.lnh == kIbLnhGlobal);
        CHECK(lrh.sl == 3);
        CHECK(lrh.pktLen * 4u == pkt.size() - kIbVcrcBytes);
        CHECK(lrh.dlid == (f.dstIp[3] == 1 ? 1 : 2)); // 10.0.0.1 is h0, LID 1
        const GrhHeader grh = GrhHeader::Read(pkt.data() + kIbLrhBytes);
        CHECK(grh.nxtHdr == 0x1b);
        CHECK(grh.payLen == transport);
        CHECK(grh.dgid[10] == 0xff); // ::ffff:10.0.0.x
        CHECK(grh.dgid[15] == f.dstIp[3]);
        // The transport bytes are the frame's own, up to the ICRC (recomputed for IB).
        CHECK(std::equal(pkt.begin() + kIbLrhBytes + kIbGrhBytes,
                         pkt.end() - kIbVcrcBytes - kIbIcrcBytes, frame.begin() + f.bthOffset));
        const size_t icrcAt = pkt.size() - kIbVcrcBytes - kIbIcrcBytes;
        const uint32_t icrc = uint32_t(pkt[icrcAt]) | uint32_t(pkt[icrcAt + 1]) << 8 |
                              uint32_t(pkt[icrcAt + 2]) << 16 | uint32_t(pkt[icrcAt + 3]) << 24;
        CHECK(icrc == IbIcrc(pkt.data(), icrcAt));
    }
    CHECK(roce > 20);
    Simulator::Destroy();
}

TEST_CASE(
    "every frame of a real rxe session crosses the IB model and comes out bit-exact, in order")
{
    Simulator::Destroy();
    Config::Reset();
    Pair p;
    std::vector<std::vector<uint8_t>> sent[2]; // by destination gateway
    size_t ipoib = 0;
    Time at = MicroSeconds(1);
    for (const auto& frame : ReadPcapFrames(TestData("rxe-rc-write-ipv4.pcap")))
    {
        const ParsedFrame f = ParseEthernetFrame(frame.data(), frame.size(), false);
        if (f.ipVersion != 4)
        {
            continue; // ARP and IPv6 multicast stay at the edge
        }
        const uint32_t from = f.srcIp[3] == 1 ? 0 : 1;
        sent[1 - from].push_back(frame);
        ipoib += f.kind != FrameKind::Roce;
        const uint8_t prio = f.kind == FrameKind::Roce ? 3 : 0;
        Simulator::Schedule(at, [gateway = p.g[from].get(), bytes = frame, f, prio]() mutable {
            gateway->Send(bytes.data(), bytes.size(), f, prio);
        });
        at += NanoSeconds(50); // faster than the link: the frames queue and wait for credit
    }
    Simulator::Stop(MilliSeconds(5));
    Simulator::Run();
    CHECK(ipoib > 5); // perftest's TCP handshake went as IPoIB
    for (int i = 0; i < 2; ++i)
    {
        CAPTURE(i);
        CHECK(p.delivered[i] == sent[i]);
        EdgeCounters c;
        p.g[i]->AddCounters(c);
        CHECK(c.drops.empty());
    }
    CHECK(p.tunnel->InFlight() == 0);
    CHECK(p.fabric.TotalOverflows() == 0);
    Simulator::Destroy();
}
