// InfiniBand link-layer formats and link rates.
#include "ns3/ib-headers.h"
#include "ns3/ib-link.h"
#include "ns3/ib-port.h"

#include <doctest/doctest.h>

#include <array>

using namespace ns3;

TEST_CASE("LRH: every field where IBA puts it, and back")
{
    LrhHeader h;
    h.vl = 3;
    h.sl = 5;
    h.lnh = 2;
    h.dlid = 0x1234;
    h.slid = 0x00ab;
    h.pktLen = 0x40f;
    std::array<uint8_t, kIbLrhBytes> b{};
    h.Write(b.data());
    CHECK(b[0] == 0x30); // VL 3, LVer 0
    CHECK(b[1] == 0x52); // SL 5, LNH 2 (BTH next)
    CHECK(b[2] == 0x12);
    CHECK(b[3] == 0x34);
    CHECK(b[4] == 0x04); // 5 reserved bits, PktLen's top 3
    CHECK(b[5] == 0x0f);
    CHECK(b[7] == 0xab);
    const LrhHeader r = LrhHeader::Read(b.data());
    CHECK(r.vl == 3);
    CHECK(r.sl == 5);
    CHECK(r.dlid == 0x1234);
    CHECK(r.slid == 0xab);
    CHECK(r.pktLen == 0x40f);
}

TEST_CASE("GRH: IPv6's layout with next header 0x1B, GIDs from the subnet prefix and the LID")
{
    GrhHeader g;
    g.tClass = 0xa5;
    g.flowLabel = 0xbcdef;
    g.payLen = 1052;
    g.hopLmt = 64;
    g.sgid = IbGidOfLid(1);
    g.dgid = IbGidOfLid(0x1234);
    std::array<uint8_t, kIbGrhBytes> b{};
    g.Write(b.data());
    CHECK(b[0] == 0x6a); // IPVer 6, TClass high nibble
    CHECK(b[1] == 0x5b); // TClass low nibble, FlowLabel top 4 bits
    CHECK(b[2] == 0xcd);
    CHECK(b[3] == 0xef);
    CHECK(b[4] == 0x04); // PayLen 1052
    CHECK(b[5] == 0x1c);
    CHECK(b[6] == 0x1b); // next header: BTH
    CHECK(b[7] == 64);
    CHECK(b[8] == 0xfe); // fe80:: subnet prefix
    CHECK(b[9] == 0x80);
    CHECK(b[23] == 0x01);
    CHECK(b[38] == 0x12);
    CHECK(b[39] == 0x34);
    const GrhHeader r = GrhHeader::Read(b.data());
    CHECK(r.tClass == 0xa5);
    CHECK(r.flowLabel == 0xbcdef);
    CHECK(r.payLen == 1052);
    CHECK(r.dgid == g.dgid);
    CHECK(r.sgid == g.sgid);
}

TEST_CASE("FCP: 6 bytes, 12-bit counters, a corrupted one is refused")
{
    FcpHeader h;
    h.op = 1;
    h.fctbs = 0xabc;
    h.vl = 7;
    h.fccl = 0x123;
    std::array<uint8_t, kIbFcpBytes> b{};
    h.Write(b.data());
    CHECK(b[0] == 0x1a);
    CHECK(b[1] == 0xbc);
    CHECK(b[2] == 0x71);
    CHECK(b[3] == 0x23);
    FcpHeader r;
    REQUIRE(FcpHeader::Read(b.data(), r));
    CHECK(r.fctbs == 0xabc);
    CHECK(r.fccl == 0x123);
    CHECK(r.vl == 7);
    CHECK(r.op == 1);
    for (size_t i = 0; i < b.size(); ++i)
    {
        auto bad = b;
        bad[i] ^= 0x10;
        CHECK_FALSE(FcpHeader::Read(bad.data(), r));
    }
}

TEST_CASE("link data rates after encoding, not signalling rates")
{
    CHECK(IbLinkRate("SDR", 4).GetBitRate() == 8'000'000'000ULL);   // 10 Gb/s signalling, 8b/10b
    CHECK(IbLinkRate("QDR", 4).GetBitRate() == 32'000'000'000ULL);  // 40 signalling
    CHECK(IbLinkRate("FDR", 4).GetBitRate() == 54'545'454'544ULL);  // 56 signalling, 64b/66b
    CHECK(IbLinkRate("EDR", 4).GetBitRate() == 100'000'000'000ULL); // 103.125 signalling
    CHECK(IbLinkRate("HDR", 4).GetBitRate() == 200'000'000'000ULL);
    CHECK(IbLinkRate("NDR", 1).GetBitRate() == 100'000'000'000ULL);
    CHECK(IbLaneDataRate("XYZ") == 0);
    CHECK(IbPort::Blocks(4122) == 65); // a 4 KB-MTU packet: 64 credits and a bit
    CHECK(IbPort::Blocks(64) == 1);
}
