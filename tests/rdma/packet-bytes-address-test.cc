// PacketBytesAddress points at a packet's first byte, wherever ns-3's buffer keeps it.
#include "ns3/byte-header.h"
#include "ns3/packet-bytes-address.h"
#include "ns3/packet.h"

#include <doctest/doctest.h>

#include <cstring>
#include <vector>

using namespace ns3;

namespace
{

/// The first \p n bytes of \p p as the Packet API copies them.
std::vector<uint8_t>
FirstBytes(Ptr<const Packet> p, uint32_t n)
{
    std::vector<uint8_t> out(n);
    REQUIRE(p->CopyData(out.data(), n) == n);
    return out;
}

/// Whether the memory at PacketBytesAddress(p) holds p's first \p n bytes.
bool
PointsAtFirstBytes(Ptr<const Packet> p, uint32_t n)
{
    const std::vector<uint8_t> want = FirstBytes(p, n);
    return std::memcmp(PacketBytesAddress(*p), want.data(), n) == 0;
}

ByteHeader
Bytes(uint32_t n, uint8_t seed)
{
    ByteHeader h(n);
    for (uint32_t i = 0; i < n; ++i)
    {
        h.Data()[i] = static_cast<uint8_t>(seed + 7 * i);
    }
    return h;
}

} // namespace

TEST_CASE("PacketBytesAddress is the first header's bytes, before a simulated payload")
{
    Ptr<Packet> p = Create<Packet>(1000000); // a zero area: no real bytes
    p->AddHeader(Bytes(58, 1));
    CHECK(PointsAtFirstBytes(p, 58));

    // Headers added in front move the first byte; the address follows.
    const void* before = PacketBytesAddress(*p);
    p->AddHeader(Bytes(18, 100));
    CHECK(PacketBytesAddress(*p) != before);
    CHECK(PointsAtFirstBytes(p, 18 + 58));

    // Bytes removed from the front: the address moves on by as many.
    const auto* at = static_cast<const uint8_t*>(PacketBytesAddress(*p));
    p->RemoveAtStart(18);
    CHECK(PacketBytesAddress(*p) == at + 18);
    CHECK(PointsAtFirstBytes(p, 58));
}

TEST_CASE("PacketBytesAddress of a copy is its original's, and each follows its own headers")
{
    Ptr<Packet> p = Create<Packet>(4096);
    p->AddHeader(Bytes(40, 9));
    Ptr<Packet> copy = p->Copy();
    CHECK(PacketBytesAddress(*copy) == PacketBytesAddress(*p)); // the buffer is shared
    copy->AddHeader(Bytes(14, 50)); // in place or in a buffer of its own: ns-3 decides
    CHECK(PointsAtFirstBytes(copy, 14 + 40));
    CHECK(PointsAtFirstBytes(p, 40));
}
