#include "../pcap-frames.h"

#include "ns3/roce-frame.h"
#include "ns3/roce-icrc.h"

#include <doctest/doctest.h>

using namespace ns3;

namespace
{

struct CaptureCount
{
    int roce = 0;
    int icrcOk = 0;
};

CaptureCount
CheckCapture(const std::string& name)
{
    CaptureCount c;
    for (const auto& frame : ReadPcapFrames(TestData(name)))
    {
        const ParsedFrame f = ParseEthernetFrame(frame.data(), frame.size(), false);
        if (f.kind != FrameKind::Roce)
        {
            continue;
        }
        ++c.roce;
        const size_t end = frame.size(); // these captures carry no Ethernet padding after RoCE
        const auto icrc = ComputeRoceIcrc(frame.data() + f.l3Offset, end - kIcrcSize - f.l3Offset);
        REQUIRE(icrc.has_value());
        if (*icrc == ReadIcrc(frame.data() + end - kIcrcSize))
        {
            ++c.icrcOk;
        }
    }
    return c;
}

} // namespace

TEST_CASE("the ICRC of every frame rxe sent over IPv4 matches ours")
{
    for (const char* name : {"rxe-rc-write-ipv4.pcap", "rxe-rping-rdmacm-ipv4.pcap"})
    {
        CAPTURE(name);
        const auto c = CheckCapture(name);
        CHECK(c.roce > 20);
        CHECK(c.icrcOk == c.roce);
    }
}

TEST_CASE("the ICRC of every frame rxe sent over IPv6 matches ours")
{
    const auto c = CheckCapture("rxe-rc-send-ipv6.pcap");
    CHECK(c.roce > 20);
    CHECK(c.icrcOk == c.roce);
}

TEST_CASE("the ICRC ignores the fields switches rewrite and covers everything else")
{
    const auto frames = ReadPcapFrames(TestData("rxe-rc-write-ipv4.pcap"));
    std::vector<uint8_t> frame;
    ParsedFrame f;
    for (const auto& candidate : frames)
    {
        f = ParseEthernetFrame(candidate.data(), candidate.size(), true);
        if (f.kind == FrameKind::Roce && f.payloadLength > 0)
        {
            frame = candidate;
            break;
        }
    }
    REQUIRE(!frame.empty());

    SUBCASE("ECN CE, TTL and IP checksum rewritten: still valid")
    {
        frame[f.l3Offset + 1] |= 0x03; // CE
        frame[f.l3Offset + 8] -= 1;    // TTL
        FixIpv4Checksum(frame.data() + f.l3Offset);
        frame[f.bthOffset + 4] |= 0x80; // FECN
        CHECK(ParseEthernetFrame(frame.data(), frame.size()).kind == FrameKind::Roce);
    }
    SUBCASE("one payload bit flipped: rejected as bad_icrc")
    {
        frame[f.payloadOffset] ^= 0x01;
        const auto bad = ParseEthernetFrame(frame.data(), frame.size());
        CHECK(bad.kind == FrameKind::Malformed);
        CHECK(bad.error == FrameError::BadIcrc);
    }
    SUBCASE("destination QP changed: rejected")
    {
        frame[f.bthOffset + 7] ^= 0x01;
        CHECK(ParseEthernetFrame(frame.data(), frame.size()).error == FrameError::BadIcrc);
    }
    SUBCASE("source address changed: rejected")
    {
        frame[f.l3Offset + 15] ^= 0x01;
        FixIpv4Checksum(frame.data() + f.l3Offset);
        CHECK(ParseEthernetFrame(frame.data(), frame.size()).error == FrameError::BadIcrc);
    }
}
