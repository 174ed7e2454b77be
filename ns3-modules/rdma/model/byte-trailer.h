/*
 * Real trailer bytes (a CRC) after a packet whose payload stays a zero area.
 */
#ifndef FABEMU_BYTE_TRAILER_H
#define FABEMU_BYTE_TRAILER_H

#include "ns3/trailer.h"

#include <array>
#include <cstdint>

namespace ns3
{

/// Opaque trailer bytes (at most 16): the ICRC after a zero payload. A trailer grows the
/// buffer's end and keeps the payload's zero area virtual, where Packet::AddAtEnd of
/// another packet would copy the whole payload into real bytes.
class ByteTrailer : public Trailer
{
  public:
    static constexpr size_t kMax = 16;
    ByteTrailer() = default;
    ByteTrailer(const uint8_t* bytes, size_t n);
    /// A trailer of \p n bytes, to be filled by RemoveTrailer/PeekTrailer.
    explicit ByteTrailer(size_t n);

    static TypeId GetTypeId();
    TypeId GetInstanceTypeId() const override;
    uint32_t GetSerializedSize() const override { return static_cast<uint32_t>(m_size); }
    void Serialize(Buffer::Iterator end) const override;
    uint32_t Deserialize(Buffer::Iterator end) override;
    void Print(std::ostream& os) const override;

    const uint8_t* Data() const { return m_bytes.data(); }

  private:
    std::array<uint8_t, kMax> m_bytes{};
    size_t m_size{0};
};

} // namespace ns3

#endif
