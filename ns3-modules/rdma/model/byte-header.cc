#include "ns3/byte-header.h"

#include "ns3/abort.h"

#include <cstring>

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(ByteHeader);

ByteHeader::ByteHeader(const uint8_t* bytes, size_t n) : m_size(n)
{
    NS_ABORT_MSG_IF(n > kMax, "ByteHeader of " << n << " bytes exceeds " << kMax);
    std::memcpy(m_bytes.data(), bytes, n);
}

ByteHeader::ByteHeader(size_t n) : m_size(n)
{
    NS_ABORT_MSG_IF(n > kMax, "ByteHeader of " << n << " bytes exceeds " << kMax);
}

TypeId
ByteHeader::GetTypeId()
{
    static TypeId tid = TypeId("ns3::ByteHeader")
                            .SetParent<Header>()
                            .SetGroupName("Rdma")
                            .AddConstructor<ByteHeader>();
    return tid;
}

TypeId
ByteHeader::GetInstanceTypeId() const
{
    return GetTypeId();
}

void
ByteHeader::Serialize(Buffer::Iterator start) const
{
    start.Write(m_bytes.data(), static_cast<uint32_t>(m_size));
}

uint32_t
ByteHeader::Deserialize(Buffer::Iterator start)
{
    start.Read(m_bytes.data(), static_cast<uint32_t>(m_size));
    return static_cast<uint32_t>(m_size);
}

void
ByteHeader::Print(std::ostream& os) const
{
    os << m_size << " header bytes";
}

} // namespace ns3
