#include "ns3/ethernet-header.h"
#include "ns3/packet.h"
#include "ns3/pfc-header.h"
#include "ns3/roce-frame.h"

#include <doctest/doctest.h>

using namespace ns3;

TEST_CASE("a PFC frame is a 64-byte MAC control frame with opcode 0x0101")
{
    PfcHeader pfc;
    pfc.SetPause(3, 0xffff);
    pfc.SetPause(5, 0); // resume

    Ptr<Packet> p = Create<Packet>();
    p->AddHeader(pfc);
    EthernetHeader eth(false);
    eth.SetDestination(PfcHeader::DestinationAddress());
    eth.SetSource(Mac48Address("52:54:00:00:00:01"));
    eth.SetLengthType(kEtherTypeMacControl);
    p->AddHeader(eth);
    CHECK(p->GetSize() + 4 == 64); // with the FCS, the minimum Ethernet frame

    std::vector<uint8_t> raw(p->GetSize());
    p->CopyData(raw.data(), raw.size());
    CHECK(raw[0] == 0x01);
    CHECK(raw[5] == 0x01);
    const auto f = ParseEthernetFrame(raw.data(), raw.size());
    REQUIRE(f.kind == FrameKind::Pfc);
    CHECK(f.pfcClassEnable == 0x28);
    CHECK(f.pfcQuanta[3] == 0xffff);
    CHECK(f.pfcQuanta[5] == 0);

    p->RemoveHeader(eth);
    PfcHeader back;
    p->RemoveHeader(back);
    CHECK(back.IsValid());
    CHECK(back.IsEnabled(3));
    CHECK(back.IsEnabled(5));
    CHECK_FALSE(back.IsEnabled(0));
    CHECK(back.GetQuanta(3) == 0xffff);
}

TEST_CASE("a pause quantum is 512 bit times of the link")
{
    // 802.1Qbb: 5.12 ns per quantum at 100 Gb/s, 51.2 ns at 10 Gb/s.
    CHECK(PfcHeader::QuantaToTime(1, DataRate("100Gbps")).GetPicoSeconds() == 5120);
    CHECK(PfcHeader::QuantaToTime(0xffff, DataRate("100Gbps")).GetNanoSeconds() ==
          doctest::Approx(65535 * 5.12).epsilon(1e-6));
    CHECK(PfcHeader::QuantaToTime(10, DataRate("10Gbps")).GetNanoSeconds() == 512);
}
