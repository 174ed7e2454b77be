#include "ns3/byte-trailer.h"

#include "ns3/abort.h"

#include <cstring>

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(ByteTrailer);

ByteTrailer::ByteTrailer(const uint8_t* bytes, size_t n) : m_size(n)
{
    NS_ABORT_MSG_IF(n > kMax, "ByteTrailer of " << n << " bytes exceeds " << kMax);
    std::memcpy(m_bytes.data(), bytes, n);
}

ByteTrailer::ByteTrailer(size_t n) : m_size(n)
{
    NS_ABORT_MSG_IF(n > kMax, "ByteTrailer of " << n << " bytes exceeds " << kMax);
}

TypeId
ByteTrailer::GetTypeId()
{
    static TypeId tid = TypeId("ns3::ByteTrailer")
                            .SetParent<Trailer>()
                            .SetGroupName("Rdma")
                            .AddConstructor<ByteTrailer>();
    return tid;
}

TypeId
ByteTrailer::GetInstanceTypeId() const
{
    return GetTypeId();
}

void
ByteTrailer::Serialize(Buffer::Iterator end) const
{
    end.Prev(static_cast<uint32_t>(m_size));
    end.Write(m_bytes.data(), static_cast<uint32_t>(m_size));
}

uint32_t
ByteTrailer::Deserialize(Buffer::Iterator end)
{
    end.Prev(static_cast<uint32_t>(m_size));
    end.Read(m_bytes.data(), static_cast<uint32_t>(m_size));
    return static_cast<uint32_t>(m_size);
}

void
ByteTrailer::Print(std::ostream& os) const
{
    os << m_size << " trailer bytes";
}

} // namespace ns3
