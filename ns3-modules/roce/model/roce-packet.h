/*
 * RoCEv2 frames as ns-3 packets. A packet holds the real frame (no preamble,
 * no FCS): models read its headers through a copied prefix and never copy the
 * payload; a switch marking ECN rewrites the real IP header and its checksum.
 */
#ifndef FABEMU_ROCE_PACKET_H
#define FABEMU_ROCE_PACKET_H

#include "ns3/header.h"
#include "ns3/packet.h"
#include "ns3/roce-frame.h"
#include "ns3/trailer.h"

#include <array>

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

/// Parses the headers of the frame in \p p (see ParseFrameHeaders).
ParsedFrame PeekFrame(Ptr<const Packet> p);

/**
 * \brief Marks Congestion Experienced in the frame's IP header.
 * \return false when the frame is not ECN-capable (not-ECT), and left as it is
 *
 * The IPv4 checksum is fixed; the ICRC stays valid because it masks the ECN bits.
 */
bool MarkCongestionExperienced(Ptr<Packet> p, const ParsedFrame& f);

/**
 * \brief A RoCEv2 packet as a simulated host sends it: real headers, a zero
 * payload that is never allocated, pad, and the ICRC.
 * \param computeIcrc false leaves the ICRC zero (cheaper for large simulations)
 */
Ptr<Packet> MakeRoceV2Packet(const RoceFrameSpec& spec, bool computeIcrc = true);

} // namespace ns3

#endif
