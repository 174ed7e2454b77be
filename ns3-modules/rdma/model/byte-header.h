/*
 * Real header bytes in front of a packet whose payload stays a zero area: what the
 * fabric models write their frames' headers with.
 */
#ifndef FABEMU_BYTE_HEADER_H
#define FABEMU_BYTE_HEADER_H

#include "ns3/header.h"

#include <array>
#include <cstdint>

namespace ns3
{

/// Opaque header bytes (at most 128), for writing real frame headers into a packet.
class ByteHeader : public Header
{
  public:
    static constexpr size_t kMax = 128;
    ByteHeader() = default;
    ByteHeader(const uint8_t* bytes, size_t n);
    /// A header of \p n bytes, to be filled by RemoveHeader/PeekHeader.
    explicit ByteHeader(size_t n);

    static TypeId GetTypeId();
    TypeId GetInstanceTypeId() const override;
    uint32_t GetSerializedSize() const override { return static_cast<uint32_t>(m_size); }
    void Serialize(Buffer::Iterator start) const override;
    uint32_t Deserialize(Buffer::Iterator start) override;
    void Print(std::ostream& os) const override;

    uint8_t* Data() { return m_bytes.data(); }
    const uint8_t* Data() const { return m_bytes.data(); }

  private:
    std::array<uint8_t, kMax> m_bytes{};
    size_t m_size{0};
};

} // namespace ns3

#endif
