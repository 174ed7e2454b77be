#include "ns3/ib-extension-headers.h"

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(RethHeader);
NS_OBJECT_ENSURE_REGISTERED(AethHeader);
NS_OBJECT_ENSURE_REGISTERED(ImmDtHeader);
NS_OBJECT_ENSURE_REGISTERED(DethHeader);

namespace
{

void
WriteU24(Buffer::Iterator& i, uint32_t v)
{
    i.WriteU8((v >> 16) & 0xff);
    i.WriteHtonU16(v & 0xffff);
}

uint32_t
ReadU24(Buffer::Iterator& i)
{
    uint32_t v = static_cast<uint32_t>(i.ReadU8()) << 16;
    return v | i.ReadNtohU16();
}

} // namespace

TypeId
RethHeader::GetTypeId()
{
    static TypeId tid = TypeId("ns3::RethHeader")
                            .SetParent<Header>()
                            .SetGroupName("Rdma")
                            .AddConstructor<RethHeader>();
    return tid;
}

TypeId
RethHeader::GetInstanceTypeId() const
{
    return GetTypeId();
}

void
RethHeader::Serialize(Buffer::Iterator i) const
{
    i.WriteHtonU64(virtualAddress);
    i.WriteHtonU32(rkey);
    i.WriteHtonU32(dmaLength);
}

uint32_t
RethHeader::Deserialize(Buffer::Iterator i)
{
    virtualAddress = i.ReadNtohU64();
    rkey = i.ReadNtohU32();
    dmaLength = i.ReadNtohU32();
    return kSize;
}

void
RethHeader::Print(std::ostream& os) const
{
    os << "va=0x" << std::hex << virtualAddress << " rkey=0x" << rkey << std::dec
       << " len=" << dmaLength;
}

TypeId
AethHeader::GetTypeId()
{
    static TypeId tid = TypeId("ns3::AethHeader")
                            .SetParent<Header>()
                            .SetGroupName("Rdma")
                            .AddConstructor<AethHeader>();
    return tid;
}

TypeId
AethHeader::GetInstanceTypeId() const
{
    return GetTypeId();
}

void
AethHeader::Serialize(Buffer::Iterator i) const
{
    i.WriteU8(syndrome);
    WriteU24(i, msn);
}

uint32_t
AethHeader::Deserialize(Buffer::Iterator i)
{
    syndrome = i.ReadU8();
    msn = ReadU24(i);
    return kSize;
}

void
AethHeader::Print(std::ostream& os) const
{
    switch (GetKind())
    {
    case AckSyndrome::Ack:
        os << "ACK credits=" << +GetValue();
        break;
    case AckSyndrome::RnrNak:
        os << "RNR NAK timer=" << +GetValue();
        break;
    case AckSyndrome::Nak:
        os << "NAK code=" << +GetValue();
        break;
    default:
        os << "reserved syndrome 0x" << std::hex << +syndrome << std::dec;
    }
    os << " msn=" << msn;
}

TypeId
ImmDtHeader::GetTypeId()
{
    static TypeId tid = TypeId("ns3::ImmDtHeader")
                            .SetParent<Header>()
                            .SetGroupName("Rdma")
                            .AddConstructor<ImmDtHeader>();
    return tid;
}

TypeId
ImmDtHeader::GetInstanceTypeId() const
{
    return GetTypeId();
}

void
ImmDtHeader::Serialize(Buffer::Iterator i) const
{
    i.WriteHtonU32(value);
}

uint32_t
ImmDtHeader::Deserialize(Buffer::Iterator i)
{
    value = i.ReadNtohU32();
    return kSize;
}

void
ImmDtHeader::Print(std::ostream& os) const
{
    os << "imm=0x" << std::hex << value << std::dec;
}

TypeId
DethHeader::GetTypeId()
{
    static TypeId tid = TypeId("ns3::DethHeader")
                            .SetParent<Header>()
                            .SetGroupName("Rdma")
                            .AddConstructor<DethHeader>();
    return tid;
}

TypeId
DethHeader::GetInstanceTypeId() const
{
    return GetTypeId();
}

void
DethHeader::Serialize(Buffer::Iterator i) const
{
    i.WriteHtonU32(qkey);
    i.WriteU8(0);
    WriteU24(i, srcQp);
}

uint32_t
DethHeader::Deserialize(Buffer::Iterator i)
{
    qkey = i.ReadNtohU32();
    i.ReadU8();
    srcQp = ReadU24(i);
    return kSize;
}

void
DethHeader::Print(std::ostream& os) const
{
    os << "qkey=0x" << std::hex << qkey << std::dec << " src_qp=" << srcQp;
}

} // namespace ns3
