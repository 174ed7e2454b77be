#include "ns3/ib-headers.h"

#include "ns3/ieee-crc32.h"

#include <algorithm>

namespace ns3
{

void
LrhHeader::Write(uint8_t* out) const
{
    out[0] = static_cast<uint8_t>((vl & 0xf) << 4 | (lver & 0xf));
    out[1] = static_cast<uint8_t>((sl & 0xf) << 4 | (lnh & 0x3));
    out[2] = static_cast<uint8_t>(dlid >> 8);
    out[3] = static_cast<uint8_t>(dlid);
    out[4] = static_cast<uint8_t>((pktLen >> 8) & 0x7);
    out[5] = static_cast<uint8_t>(pktLen);
    out[6] = static_cast<uint8_t>(slid >> 8);
    out[7] = static_cast<uint8_t>(slid);
}

LrhHeader
LrhHeader::Read(const uint8_t* in)
{
    LrhHeader h;
    h.vl = in[0] >> 4;
    h.lver = in[0] & 0xf;
    h.sl = in[1] >> 4;
    h.lnh = in[1] & 0x3;
    h.dlid = static_cast<uint16_t>(in[2] << 8 | in[3]);
    h.pktLen = static_cast<uint16_t>((in[4] & 0x7) << 8 | in[5]);
    h.slid = static_cast<uint16_t>(in[6] << 8 | in[7]);
    return h;
}

void
GrhHeader::Write(uint8_t* out) const
{
    out[0] = static_cast<uint8_t>(0x60 | tClass >> 4); // IPVer 6
    out[1] = static_cast<uint8_t>((tClass & 0xf) << 4 | ((flowLabel >> 16) & 0xf));
    out[2] = static_cast<uint8_t>(flowLabel >> 8);
    out[3] = static_cast<uint8_t>(flowLabel);
    out[4] = static_cast<uint8_t>(payLen >> 8);
    out[5] = static_cast<uint8_t>(payLen);
    out[6] = nxtHdr;
    out[7] = hopLmt;
    std::copy(sgid.begin(), sgid.end(), out + 8);
    std::copy(dgid.begin(), dgid.end(), out + 24);
}

GrhHeader
GrhHeader::Read(const uint8_t* in)
{
    GrhHeader h;
    h.tClass = static_cast<uint8_t>((in[0] & 0xf) << 4 | in[1] >> 4);
    h.flowLabel = uint32_t(in[1] & 0xf) << 16 | uint32_t(in[2]) << 8 | in[3];
    h.payLen = static_cast<uint16_t>(in[4] << 8 | in[5]);
    h.nxtHdr = in[6];
    h.hopLmt = in[7];
    std::copy(in + 8, in + 24, h.sgid.begin());
    std::copy(in + 24, in + 40, h.dgid.begin());
    return h;
}

std::array<uint8_t, 16>
IbGidOfLid(uint16_t lid)
{
    // fe80:: subnet prefix; GUID 0002:c903:00ff:LLLL (a vendor OUI, then the LID).
    return {0xfe,
            0x80,
            0,
            0,
            0,
            0,
            0,
            0,
            0x00,
            0x02,
            0xc9,
            0x03,
            0x00,
            0xff,
            static_cast<uint8_t>(lid >> 8),
            static_cast<uint8_t>(lid)};
}

void
FcpHeader::Write(uint8_t* out) const
{
    out[0] = static_cast<uint8_t>((op & 0xf) << 4 | ((fctbs >> 8) & 0xf));
    out[1] = static_cast<uint8_t>(fctbs);
    out[2] = static_cast<uint8_t>((vl & 0xf) << 4 | ((fccl >> 8) & 0xf));
    out[3] = static_cast<uint8_t>(fccl);
    const uint16_t crc = IbCrc16(out, 4);
    out[4] = static_cast<uint8_t>(crc >> 8);
    out[5] = static_cast<uint8_t>(crc);
}

bool
FcpHeader::Read(const uint8_t* in, FcpHeader& h)
{
    if (IbCrc16(in, 4) != static_cast<uint16_t>(in[4] << 8 | in[5]))
    {
        return false;
    }
    h.op = in[0] >> 4;
    h.fctbs = static_cast<uint16_t>((in[0] & 0xf) << 8 | in[1]);
    h.vl = in[2] >> 4;
    h.fccl = static_cast<uint16_t>((in[2] & 0xf) << 8 | in[3]);
    return true;
}

uint16_t
IbCrc16(const uint8_t* data, size_t len)
{
    // Polynomial x^16 + x^12 + x^3 + x + 1 (0x100B), bits in wire order (least
    // significant first), seeded with ones and complemented at the end.
    uint16_t crc = 0xffff;
    for (size_t i = 0; i < len; ++i)
    {
        crc ^= data[i];
        for (int b = 0; b < 8; ++b)
        {
            crc = (crc & 1) ? static_cast<uint16_t>((crc >> 1) ^ 0xd008)
                            : static_cast<uint16_t>(crc >> 1);
        }
    }
    return static_cast<uint16_t>(~crc);
}

uint32_t
IbIcrc(const uint8_t* packet, size_t len)
{
    const bool grh = len >= kIbLrhBytes && (packet[1] & 0x3) == kIbLnhGlobal;
    const size_t bth = kIbLrhBytes + (grh ? kIbGrhBytes : 0);
    if (len < bth + 12)
    {
        return 0;
    }
    std::array<uint8_t, kIbLrhBytes + kIbGrhBytes + 12> head{};
    std::copy(packet, packet + bth + 12, head.begin());
    head[0] |= 0xf0; // VL
    if (grh)
    {
        uint8_t* g = head.data() + kIbLrhBytes;
        g[0] |= 0x0f; // TClass high nibble
        g[1] = 0xff;  // TClass low nibble, FlowLabel
        g[2] = 0xff;
        g[3] = 0xff;
        g[7] = 0xff; // HopLmt
    }
    head[bth + 4] = 0xff; // resv8a: FECN, BECN and reserved bits
    return IeeeCrc32(IeeeCrc32(0, head.data(), bth + 12), packet + bth + 12, len - bth - 12);
}

void
IbFillCrcs(uint8_t* packet, size_t len)
{
    if (len < kIbLrhBytes + kIbIcrcBytes + kIbVcrcBytes)
    {
        return;
    }
    const size_t icrcAt = len - kIbIcrcBytes - kIbVcrcBytes;
    const uint32_t icrc = IbIcrc(packet, icrcAt);
    for (size_t i = 0; i < 4; ++i)
    {
        packet[icrcAt + i] = static_cast<uint8_t>(icrc >> (8 * i));
    }
    const uint16_t vcrc = IbCrc16(packet, len - kIbVcrcBytes);
    packet[len - 2] = static_cast<uint8_t>(vcrc >> 8);
    packet[len - 1] = static_cast<uint8_t>(vcrc);
}

} // namespace ns3
