#include "ns3/pfc-header.h"

#include "ns3/abort.h"

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(PfcHeader);

TypeId
PfcHeader::GetTypeId()
{
    static TypeId tid = TypeId("ns3::PfcHeader")
                            .SetParent<Header>()
                            .SetGroupName("Roce")
                            .AddConstructor<PfcHeader>();
    return tid;
}

TypeId
PfcHeader::GetInstanceTypeId() const
{
    return GetTypeId();
}

void
PfcHeader::SetPause(uint8_t priority, uint16_t quanta)
{
    NS_ABORT_MSG_IF(priority > 7, "PFC priority " << +priority << " is out of range 0..7");
    m_classEnable |= static_cast<uint16_t>(1u << priority);
    m_quanta[priority] = quanta;
}

bool
PfcHeader::IsEnabled(uint8_t priority) const
{
    return priority < 8 && (m_classEnable >> priority) & 1;
}

uint16_t
PfcHeader::GetQuanta(uint8_t priority) const
{
    return priority < 8 ? m_quanta[priority] : 0;
}

void
PfcHeader::Serialize(Buffer::Iterator i) const
{
    i.WriteHtonU16(m_opcode);
    i.WriteHtonU16(m_classEnable);
    for (uint16_t q : m_quanta)
    {
        i.WriteHtonU16(q);
    }
    i.WriteU8(0, kSize - 20);
}

uint32_t
PfcHeader::Deserialize(Buffer::Iterator i)
{
    m_opcode = i.ReadNtohU16();
    m_classEnable = i.ReadNtohU16() & 0x00ff;
    for (auto& q : m_quanta)
    {
        q = i.ReadNtohU16();
    }
    i.Next(kSize - 20);
    return kSize;
}

void
PfcHeader::Print(std::ostream& os) const
{
    os << "PFC";
    for (uint8_t p = 0; p < 8; ++p)
    {
        if (IsEnabled(p))
        {
            os << " p" << +p << (m_quanta[p] ? "=pause:" : "=resume:") << m_quanta[p];
        }
    }
}

Mac48Address
PfcHeader::DestinationAddress()
{
    return Mac48Address("01:80:c2:00:00:01");
}

Time
PfcHeader::QuantaToTime(uint16_t quanta, DataRate rate)
{
    return rate.CalculateBytesTxTime(static_cast<uint32_t>(quanta) * kBitsPerQuantum / 8);
}

} // namespace ns3
