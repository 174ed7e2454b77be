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

TEST_CASE("the ICRC over a payload of zeros equals the ICRC over those zeros written out")
{
    // A simulated frame's payload is zeros that are never written; its ICRC appends
    // their CRC by zlib's combine, kept per length. Lengths that share a slot of that
    // cache (1024 and 1032), lengths past the 4 KiB of zeros kept, and each twice.
    std::vector<uint8_t> headers;
    ParsedFrame f;
    for (const auto& frame : ReadPcapFrames(TestData("rxe-rc-write-ipv4.pcap")))
    {
        f = ParseEthernetFrame(frame.data(), frame.size(), false);
        if (f.kind == FrameKind::Roce && f.payloadLength > 0)
        {
            headers.assign(frame.begin() + f.l3Offset, frame.begin() + f.payloadOffset);
            break;
        }
    }
    REQUIRE(!headers.empty());
    for (int round = 0; round < 2; ++round)
    {
        for (size_t zeros : {0, 1, 4, 1024, 1032, 1028, 4096, 4100, 9000, 1024})
        {
            CAPTURE(round);
            CAPTURE(zeros);
            std::vector<uint8_t> whole(headers);
            whole.resize(headers.size() + zeros, 0);
            const auto written = ComputeRoceIcrc(whole.data(), whole.size());
            const auto combined = ComputeRoceIcrcWithZeros(headers.data(), headers.size(), zeros);
            REQUIRE(written.has_value());
            REQUIRE(combined.has_value());
            CHECK(*combined == *written);
        }
    }
    // The payload is covered: the same headers with 1024 and 1025 zeros differ.
    CHECK(*ComputeRoceIcrcWithZeros(headers.data(), headers.size(), 1024) !=
          *ComputeRoceIcrcWithZeros(headers.data(), headers.size(), 1025));
}
