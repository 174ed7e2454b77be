#include "ns3/roce-frame.h"

#include "ns3/bth-header.h"
#include "ns3/ib-opcode.h"
#include "ns3/roce-icrc.h"

#include <cstring>

namespace ns3
{

namespace
{

uint16_t
Be16(const uint8_t* p)
{
    return static_cast<uint16_t>(p[0] << 8 | p[1]);
}

void
PutBe16(uint8_t* p, uint16_t v)
{
    p[0] = v >> 8;
    p[1] = v & 0xff;
}

constexpr uint16_t kPfcOpcode = 0x0101;
constexpr size_t kPfcBody = 2 + 2 + 16;

// The parser fills one ParsedFrame in place, from the frame's start to its end: passed by
// value from step to step, its 170 bytes were copied some five times per frame.
void
Fail(ParsedFrame& f, FrameError e)
{
    f.kind = FrameKind::Malformed;
    f.error = e;
}

/// Parses UDP 4791 onwards; \p l4 is the UDP header, \p end one past the IP payload.
void
ParseRoce(ParsedFrame& f, const uint8_t* frame, size_t avail, size_t udpOffset, size_t l3End,
          bool checkIcrc)
{
    f.bthOffset = udpOffset + 8;
    if (l3End < f.bthOffset + BthHeader::kSize + kIcrcSize)
    {
        return Fail(f, FrameError::TruncatedBth);
    }
    if (avail < f.bthOffset + BthHeader::kSize)
    {
        return Fail(f, FrameError::TruncatedBth); // the caller's prefix is too short
    }
    const uint8_t* bth = frame + f.bthOffset;
    f.opcode = bth[0];
    const uint8_t pad = (bth[1] >> 4) & 3;
    f.fecn = bth[4] & 0x80;
    f.becn = bth[4] & 0x40;
    f.destQp = static_cast<uint32_t>(bth[5]) << 16 | Be16(bth + 6);
    f.psn = static_cast<uint32_t>(bth[9]) << 16 | Be16(bth + 10);
    const auto info = LookupIbOpcode(f.opcode);
    if (!info)
    {
        return Fail(f, FrameError::UnknownOpcode);
    }
    f.payloadOffset = f.bthOffset + BthHeader::kSize + info->ExtensionBytes();
    if (l3End < f.payloadOffset + pad + kIcrcSize)
    {
        return Fail(f, FrameError::TruncatedBth);
    }
    f.payloadLength = l3End - f.payloadOffset - pad - kIcrcSize;
    if (avail >= l3End)
    {
        f.icrc = ReadIcrc(frame + l3End - kIcrcSize);
    }
    if (checkIcrc && avail >= l3End)
    {
        const auto want = ComputeRoceIcrc(frame + f.l3Offset, l3End - kIcrcSize - f.l3Offset);
        if (!want || *want != f.icrc)
        {
            return Fail(f, FrameError::BadIcrc);
        }
    }
    f.kind = FrameKind::Roce;
}

void
ParseIp(ParsedFrame& f, const uint8_t* frame, size_t readable, size_t len, bool checkIcrc)
{
    const uint8_t* ip = frame + f.l3Offset;
    const size_t avail = len - f.l3Offset;
    const size_t headerRoom = readable - f.l3Offset; // IP and L4 headers must be readable
    if (avail < 1 || headerRoom < 1)
    {
        return Fail(f, FrameError::TruncatedIp);
    }
    size_t l4Offset = 0;
    size_t l3End = 0;
    f.ipVersion = ip[0] >> 4;
    if (f.etherType == kEtherTypeIpv4)
    {
        if (f.ipVersion != 4)
        {
            return Fail(f, FrameError::BadIpHeader);
        }
        if (avail < 20 || headerRoom < 20)
        {
            return Fail(f, FrameError::TruncatedIp);
        }
        const size_t ihl = static_cast<size_t>(ip[0] & 0x0f) * 4;
        const size_t total = Be16(ip + 2);
        if (ihl < 20 || total < ihl)
        {
            return Fail(f, FrameError::BadIpHeader);
        }
        if (headerRoom < ihl)
        {
            return Fail(f, FrameError::TruncatedIp);
        }
        if (avail < total)
        {
            return Fail(f, FrameError::TruncatedIp);
        }
        f.dscp = ip[1] >> 2;
        f.ecn = ip[1] & 3;
        f.ipProtocol = ip[9];
        std::memcpy(f.srcIp.data(), ip + 12, 4);
        std::memcpy(f.dstIp.data(), ip + 16, 4);
        l4Offset = f.l3Offset + ihl;
        l3End = f.l3Offset + total; // Ethernet padding after the datagram is ignored
    }
    else
    {
        if (f.ipVersion != 6)
        {
            return Fail(f, FrameError::BadIpHeader);
        }
        if (avail < 40 || headerRoom < 40)
        {
            return Fail(f, FrameError::TruncatedIp);
        }
        const size_t payload = Be16(ip + 4);
        if (avail < 40 + payload)
        {
            return Fail(f, FrameError::TruncatedIp);
        }
        const uint8_t tclass = static_cast<uint8_t>((ip[0] & 0x0f) << 4 | ip[1] >> 4);
        f.dscp = tclass >> 2;
        f.ecn = tclass & 3;
        f.ipProtocol = ip[6]; // extension headers are not followed: RoCEv2 uses none
        std::memcpy(f.srcIp.data(), ip + 8, 16);
        std::memcpy(f.dstIp.data(), ip + 24, 16);
        l4Offset = f.l3Offset + 40;
        l3End = l4Offset + payload;
    }

    f.l4Offset = l4Offset;
    constexpr uint8_t kUdp = 17;
    constexpr uint8_t kTcp = 6;
    if (f.ipProtocol == kUdp || f.ipProtocol == kTcp)
    {
        const size_t need = f.ipProtocol == kUdp ? 8 : 20;
        if (l3End < l4Offset + need || readable < l4Offset + 4)
        {
            return Fail(f,
                        f.ipProtocol == kUdp ? FrameError::TruncatedUdp : FrameError::TruncatedIp);
        }
        f.srcPort = Be16(frame + l4Offset);
        f.dstPort = Be16(frame + l4Offset + 2);
        if (f.ipProtocol == kUdp && f.dstPort == kRoceV2UdpPort)
        {
            return ParseRoce(f, frame, readable, l4Offset, l3End, checkIcrc);
        }
    }
    f.kind = FrameKind::Ip;
}

void
ParseMacControl(ParsedFrame& f, const uint8_t* frame, size_t len)
{
    const uint8_t* body = frame + f.l3Offset;
    if (len < f.l3Offset + kPfcBody || Be16(body) != kPfcOpcode || body[2] != 0)
    {
        return Fail(f, FrameError::BadMacControl);
    }
    f.pfcClassEnable = Be16(body + 2);
    for (size_t c = 0; c < 8; ++c)
    {
        f.pfcQuanta[c] = Be16(body + 4 + 2 * c);
    }
    f.kind = FrameKind::Pfc;
}

} // namespace

const char*
FrameErrorName(FrameError e)
{
    switch (e)
    {
    case FrameError::None:
        return "none";
    case FrameError::Runt:
        return "runt";
    case FrameError::UnsupportedEtherType:
        return "unsupported_ethertype";
    case FrameError::TruncatedVlan:
        return "truncated_vlan";
    case FrameError::TruncatedIp:
        return "truncated_ip";
    case FrameError::BadIpHeader:
        return "bad_ip_header";
    case FrameError::TruncatedUdp:
        return "truncated_udp";
    case FrameError::TruncatedBth:
        return "truncated_bth";
    case FrameError::UnknownOpcode:
        return "unknown_opcode";
    case FrameError::BadIcrc:
        return "bad_icrc";
    case FrameError::BadMacControl:
        return "bad_mac_control";
    }
    return "unknown";
}

ParsedFrame
ParseEthernetFrame(const uint8_t* frame, size_t len, bool checkIcrc)
{
    return ParseFrameHeaders(frame, len, len, checkIcrc);
}

ParsedFrame
ParseFrameHeaders(const uint8_t* frame, size_t readable, size_t len, bool checkIcrc)
{
    ParsedFrame f;
    if (readable > len)
    {
        readable = len;
    }
    if (len < kEthernetHeaderSize)
    {
        Fail(f, FrameError::Runt);
        return f;
    }
    f.etherType = Be16(frame + 12);
    f.l3Offset = kEthernetHeaderSize;
    if (readable < kEthernetHeaderSize)
    {
        Fail(f, FrameError::Runt);
        return f;
    }
    if (f.etherType == kEtherTypeVlan)
    {
        if (readable < kEthernetHeaderSize + kVlanTagSize)
        {
            Fail(f, FrameError::TruncatedVlan);
            return f;
        }
        const uint16_t tci = Be16(frame + 14);
        f.vlan = true;
        f.pcp = tci >> 13;
        f.vid = tci & 0x0fff;
        f.etherType = Be16(frame + 16);
        f.l3Offset += kVlanTagSize;
    }
    switch (f.etherType)
    {
    case kEtherTypeIpv4:
    case kEtherTypeIpv6:
        ParseIp(f, frame, readable, len, checkIcrc);
        return f;
    case kEtherTypeArp:
        f.kind = FrameKind::Arp;
        return f;
    case kEtherTypeMacControl:
        ParseMacControl(f, frame, readable);
        return f;
    default:
        Fail(f, FrameError::UnsupportedEtherType);
        return f;
    }
}

void
FixIpv4Checksum(uint8_t* ip)
{
    const size_t ihl = static_cast<size_t>(ip[0] & 0x0f) * 4;
    ip[10] = ip[11] = 0;
    uint32_t sum = 0;
    for (size_t i = 0; i < ihl; i += 2)
    {
        sum += Be16(ip + i);
    }
    while (sum >> 16)
    {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    PutBe16(ip + 10, static_cast<uint16_t>(~sum));
}

size_t
RoceV2HeaderBytes(const RoceFrameSpec& s)
{
    const auto info = LookupIbOpcode(s.transport.opcode);
    return kEthernetHeaderSize + (s.vlan ? kVlanTagSize : 0) + 20 + 8 + BthHeader::kSize +
           (info ? info->ExtensionBytes() : 0);
}

uint32_t
RoceV2WriteFrameBytes(uint32_t payload, bool vlan, bool first)
{
    constexpr uint32_t kReth = 16;
    return static_cast<uint32_t>(kEthernetHeaderSize + (vlan ? kVlanTagSize : 0) + 20 + 8 +
                                 BthHeader::kSize + (first ? kReth : 0) + payload +
                                 BthPadFor(payload) + kIcrcSize);
}

void
WriteRoceV2Headers(const RoceFrameSpec& s, uint8_t* out)
{
    const uint32_t payload = s.transport.payload;
    const uint8_t pad = BthPadFor(payload);
    const size_t l2 = kEthernetHeaderSize + (s.vlan ? kVlanTagSize : 0);
    const size_t headers = RoceV2HeaderBytes(s) - l2 - 20 - 8;
    const size_t transport = headers + payload + pad + kIcrcSize;
    const size_t udpLen = 8 + transport;
    const size_t ipLen = 20 + udpLen;

    uint8_t* p = out;
    std::memcpy(p, s.dstMac.data(), 6);
    std::memcpy(p + 6, s.srcMac.data(), 6);
    if (s.vlan)
    {
        PutBe16(p + 12, kEtherTypeVlan);
        PutBe16(p + 14, static_cast<uint16_t>(s.pcp << 13 | (s.vid & 0x0fff)));
        PutBe16(p + 16, kEtherTypeIpv4);
    }
    else
    {
        PutBe16(p + 12, kEtherTypeIpv4);
    }

    uint8_t* ip = p + l2;
    ip[0] = 0x45;
    ip[1] = static_cast<uint8_t>(s.dscp << 2 | (s.ecn & 3));
    PutBe16(ip + 2, static_cast<uint16_t>(ipLen));
    PutBe16(ip + 4, s.ipId);
    PutBe16(ip + 6, 0x4000); // don't fragment, as rxe sets it
    ip[8] = s.ttl;
    ip[9] = 17;
    for (int i = 0; i < 4; ++i)
    {
        ip[12 + i] = (s.srcIpv4 >> (24 - 8 * i)) & 0xff;
        ip[16 + i] = (s.dstIpv4 >> (24 - 8 * i)) & 0xff;
    }
    FixIpv4Checksum(ip);

    uint8_t* udp = ip + 20;
    PutBe16(udp, s.srcPort);
    PutBe16(udp + 2, kRoceV2UdpPort);
    PutBe16(udp + 4, static_cast<uint16_t>(udpLen));
    // UDP checksum stays 0, as rxe sends it.

    WriteTransportHeaders(s.transport, pad, udp + 8);
}

std::vector<uint8_t>
BuildRoceV2Frame(const RoceFrameSpec& s)
{
    const size_t headers = RoceV2HeaderBytes(s);
    const uint32_t payload = s.transport.payload;
    const uint8_t pad = BthPadFor(payload);
    std::vector<uint8_t> f(headers + payload + pad + kIcrcSize, 0);
    WriteRoceV2Headers(s, f.data());
    std::memset(f.data() + headers, s.payloadFill, payload);
    const size_t l3 = kEthernetHeaderSize + (s.vlan ? kVlanTagSize : 0);
    uint8_t* icrcAt = f.data() + headers + payload + pad;
    const auto icrc = ComputeRoceIcrc(f.data() + l3, static_cast<size_t>(icrcAt - f.data() - l3));
    WriteIcrc(icrcAt, *icrc);
    return f;
}

} // namespace ns3
