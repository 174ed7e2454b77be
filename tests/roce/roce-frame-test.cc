#include "../pcap-frames.h"

#include "ns3/bth-header.h"
#include "ns3/buffer.h"
#include "ns3/ib-extension-headers.h"
#include "ns3/ib-opcode.h"
#include "ns3/roce-frame.h"

#include <doctest/doctest.h>

#include <map>

using namespace ns3;

TEST_CASE("the parser reads rxe's RDMA WRITE stream field by field")
{
    std::map<uint8_t, int> opcodes;
    ParsedFrame first;
    for (const auto& frame : ReadPcapFrames(TestData("rxe-rc-write-ipv4.pcap")))
    {
        const auto f = ParseEthernetFrame(frame.data(), frame.size());
        if (f.kind == FrameKind::Roce)
        {
            if (opcodes.empty())
            {
                first = f;
            }
            ++opcodes[f.opcode];
            CHECK(f.ipVersion == 4);
            CHECK(f.dstPort == kRoceV2UdpPort);
            CHECK(f.payloadLength <= 1024); // path MTU 1024 on a 1500-byte netdev
        }
    }
    // ib_write_bw -s 4096 with MTU 1024: WRITE First, Middle, Last, and ACKs.
    CHECK(opcodes[0x06] > 0);
    CHECK(opcodes[0x07] > 0);
    CHECK(opcodes[0x08] > 0);
    CHECK(opcodes[0x11] > 0);
    CHECK(opcodes[0x06] == opcodes[0x08]);
    CHECK(first.srcIp[0] == 10);
}

TEST_CASE("the parser sees IPv6 RoCE, perftest's TCP and ARP for what they are")
{
    int roce6 = 0;
    for (const auto& frame : ReadPcapFrames(TestData("rxe-rc-send-ipv6.pcap")))
    {
        const auto f = ParseEthernetFrame(frame.data(), frame.size());
        roce6 += f.kind == FrameKind::Roce && f.ipVersion == 6;
    }
    CHECK(roce6 > 20);

    std::map<FrameKind, int> kinds;
    for (const auto& frame : ReadPcapFrames(TestData("rxe-rc-write-ipv4.pcap")))
    {
        ++kinds[ParseEthernetFrame(frame.data(), frame.size()).kind];
    }
    CHECK(kinds[FrameKind::Ip] > 0); // the out-of-band TCP exchange
    CHECK(kinds[FrameKind::Malformed] == 0);
}

TEST_CASE("a built frame is what rxe would send: it parses back with a valid ICRC")
{
    RoceFrameSpec spec;
    spec.srcMac = {0x52, 0x54, 0, 0, 0, 1};
    spec.dstMac = {0x52, 0x54, 0, 0, 0, 2};
    spec.srcIpv4 = 0x0a000001;
    spec.dstIpv4 = 0x0a000002;
    spec.pcp = 5;
    spec.vid = 7;
    spec.transport.opcode = IbOpcode(IbTransport::RC, IbOperation::WriteFirst);
    spec.transport.destQp = 0x11;
    spec.transport.psn = 0xfffff0;
    spec.transport.reth.dmaLength = 3000;
    spec.transport.payload = 1021; // needs three bytes of pad

    const auto frame = BuildRoceV2Frame(spec);
    CHECK(frame.size() == 18 + 20 + 8 + 12 + 16 + 1021 + 3 + 4);
    const auto f = ParseEthernetFrame(frame.data(), frame.size());
    REQUIRE(f.kind == FrameKind::Roce);
    CHECK(f.vlan);
    CHECK(f.pcp == 5);
    CHECK(f.vid == 7);
    CHECK(f.dscp == 26);
    CHECK(f.ecn == 2);
    CHECK(f.opcode == 0x06);
    CHECK(f.destQp == 0x11);
    CHECK(f.psn == 0xfffff0);
    CHECK(f.payloadLength == 1021);
}

TEST_CASE("malformed frames are named, never read past their end")
{
    RoceFrameSpec spec;
    spec.transport.opcode = IbOpcode(IbTransport::RC, IbOperation::SendOnly);
    spec.transport.payload = 64;
    const auto good = BuildRoceV2Frame(spec);

    CHECK(ParseEthernetFrame(good.data(), 10).error == FrameError::Runt);
    CHECK(ParseEthernetFrame(good.data(), 16).error == FrameError::TruncatedVlan);
    CHECK(ParseEthernetFrame(good.data(), 30).error == FrameError::TruncatedIp);
    // Every truncation is an error, whatever the length: no partial frame is taken as good.
    for (size_t len = 0; len < good.size(); ++len)
    {
        CAPTURE(len);
        const auto f = ParseEthernetFrame(good.data(), len);
        CHECK(f.kind == FrameKind::Malformed);
        CHECK(f.error != FrameError::None);
    }

    auto badOpcode = good;
    badOpcode[18 + 20 + 8] = 0x1f;
    CHECK(ParseEthernetFrame(badOpcode.data(), badOpcode.size()).error ==
          FrameError::UnknownOpcode);

    auto badVersion = good;
    badVersion[18] = 0x55;
    CHECK(ParseEthernetFrame(badVersion.data(), badVersion.size()).error ==
          FrameError::BadIpHeader);

    auto lldp = good;
    lldp[16] = 0x88;
    lldp[17] = 0xcc;
    CHECK(ParseEthernetFrame(lldp.data(), lldp.size()).error == FrameError::UnsupportedEtherType);
}
