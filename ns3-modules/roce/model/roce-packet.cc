#include "ns3/roce-packet.h"

#include "ns3/abort.h"
#include "ns3/bth-header.h"
#include "ns3/roce-icrc.h"

#include <algorithm>
#include <cstring>

namespace ns3
{

ParsedFrame
PeekFrame(Ptr<const Packet> p)
{
    std::array<uint8_t, kFrameHeaderPrefix> prefix;
    const uint32_t size = p->GetSize();
    const uint32_t n = p->CopyData(prefix.data(), std::min<uint32_t>(size, prefix.size()));
    return ParseFrameHeaders(prefix.data(), n, size, false);
}

bool
MarkCongestionExperienced(Ptr<Packet> p, const ParsedFrame& f)
{
    if (f.ecn == 0 || (f.ipVersion != 4 && f.ipVersion != 6))
    {
        return false;
    }
    if (f.ecn == 3)
    {
        return true;
    }
    const size_t n = f.ipVersion == 4 ? f.l4Offset : f.l3Offset + 2;
    ByteHeader head(n);
    p->RemoveHeader(head);
    uint8_t* ip = head.Data() + f.l3Offset;
    if (f.ipVersion == 4)
    {
        ip[1] |= 0x03;
        FixIpv4Checksum(ip);
    }
    else
    {
        ip[1] |= 0x30; // ECN: the low two bits of the traffic class
    }
    p->AddHeader(head);
    return true;
}

Ptr<Packet>
MakeRoceV2Packet(const RoceFrameSpec& spec, bool computeIcrc)
{
    const size_t headers = RoceV2HeaderBytes(spec);
    NS_ABORT_MSG_IF(headers > ByteHeader::kMax, "RoCEv2 headers of " << headers << " bytes");
    NS_ABORT_MSG_IF(spec.payloadFill != 0, "simulated payloads are zero bytes");
    ByteHeader head(headers);
    WriteRoceV2Headers(spec, head.Data());
    const uint8_t pad = BthPadFor(spec.transport.payload);

    Ptr<Packet> p = Create<Packet>(spec.transport.payload + pad);
    p->AddHeader(head);
    uint8_t icrc[kIcrcSize] = {0, 0, 0, 0};
    if (computeIcrc)
    {
        const size_t l3 = kEthernetHeaderSize + (spec.vlan ? kVlanTagSize : 0);
        WriteIcrc(icrc, *ComputeRoceIcrcWithZeros(head.Data() + l3, headers - l3,
                                                  spec.transport.payload + pad));
    }
    p->AddTrailer(ByteTrailer(icrc, kIcrcSize));
    return p;
}

} // namespace ns3
