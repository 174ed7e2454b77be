#include "ns3/bth-header.h"

#include "ns3/abort.h"
#include "ns3/ib-opcode.h"

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(BthHeader);

TypeId
BthHeader::GetTypeId()
{
    static TypeId tid = TypeId("ns3::BthHeader")
                            .SetParent<Header>()
                            .SetGroupName("Rdma")
                            .AddConstructor<BthHeader>();
    return tid;
}

TypeId
BthHeader::GetInstanceTypeId() const
{
    return GetTypeId();
}

uint32_t
BthHeader::GetSerializedSize() const
{
    return kSize;
}

void
BthHeader::SetPadCount(uint8_t pad)
{
    NS_ABORT_MSG_IF(pad > 3, "BTH pad count " << +pad << " is out of range 0..3");
    m_padCount = pad;
}

void
BthHeader::SetDestQp(uint32_t qpn)
{
    NS_ABORT_MSG_IF(qpn > kQpnMask, "QP number " << qpn << " does not fit 24 bits");
    m_destQp = qpn;
}

void
BthHeader::SetPsn(uint32_t psn)
{
    m_psn = psn & kPsnMask;
}

void
BthHeader::Serialize(Buffer::Iterator i) const
{
    i.WriteU8(m_opcode);
    i.WriteU8((m_se ? 0x80 : 0) | (m_migReq ? 0x40 : 0) | (m_padCount << 4) | (m_tver & 0x0f));
    i.WriteHtonU16(m_pkey);
    i.WriteU8((m_fecn ? 0x80 : 0) | (m_becn ? 0x40 : 0));
    i.WriteU8((m_destQp >> 16) & 0xff);
    i.WriteHtonU16(m_destQp & 0xffff);
    i.WriteU8(m_ackReq ? 0x80 : 0);
    i.WriteU8((m_psn >> 16) & 0xff);
    i.WriteHtonU16(m_psn & 0xffff);
}

uint32_t
BthHeader::Deserialize(Buffer::Iterator i)
{
    m_opcode = i.ReadU8();
    const uint8_t flags = i.ReadU8();
    m_se = flags & 0x80;
    m_migReq = flags & 0x40;
    m_padCount = (flags >> 4) & 0x3;
    m_tver = flags & 0x0f;
    m_pkey = i.ReadNtohU16();
    const uint8_t ecn = i.ReadU8();
    m_fecn = ecn & 0x80;
    m_becn = ecn & 0x40;
    m_destQp = static_cast<uint32_t>(i.ReadU8()) << 16;
    m_destQp |= i.ReadNtohU16();
    m_ackReq = i.ReadU8() & 0x80;
    m_psn = static_cast<uint32_t>(i.ReadU8()) << 16;
    m_psn |= i.ReadNtohU16();
    return kSize;
}

void
BthHeader::Print(std::ostream& os) const
{
    os << IbOpcodeName(m_opcode) << " qp=" << m_destQp << " psn=" << m_psn << " pkey=0x" << std::hex
       << m_pkey << std::dec << " pad=" << +m_padCount;
    if (m_se)
    {
        os << " SE";
    }
    if (m_ackReq)
    {
        os << " A";
    }
    if (m_fecn)
    {
        os << " FECN";
    }
    if (m_becn)
    {
        os << " BECN";
    }
}

} // namespace ns3
