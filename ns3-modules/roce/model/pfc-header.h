/*
 * 802.1Qbb priority flow control: the MAC control payload that follows an
 * Ethernet header with destination 01-80-C2-00-00-01 and EtherType 0x8808.
 */
#ifndef FABEMU_PFC_HEADER_H
#define FABEMU_PFC_HEADER_H

#include "ns3/data-rate.h"
#include "ns3/header.h"
#include "ns3/mac48-address.h"
#include "ns3/nstime.h"

#include <array>

namespace ns3
{

/**
 * \brief PFC frame body: opcode 0x0101, class-enable vector, eight pause times.
 *
 * Pause times are in quanta of 512 bit times at the link's rate; a quantum of
 * zero for an enabled class resumes it at once. The body is padded to the
 * 46-byte minimum Ethernet payload.
 */
class PfcHeader : public Header
{
  public:
    static constexpr uint16_t kOpcode = 0x0101;
    static constexpr uint32_t kSize = 46;
    static constexpr uint32_t kBitsPerQuantum = 512;

    static TypeId GetTypeId();
    TypeId GetInstanceTypeId() const override;
    uint32_t GetSerializedSize() const override { return kSize; }
    void Serialize(Buffer::Iterator start) const override;
    uint32_t Deserialize(Buffer::Iterator start) override;
    void Print(std::ostream& os) const override;

    /// Pauses (\p quanta > 0) or resumes (0) priority \p priority.
    void SetPause(uint8_t priority, uint16_t quanta);
    bool IsEnabled(uint8_t priority) const;
    uint16_t GetQuanta(uint8_t priority) const;
    uint16_t GetClassEnable() const { return m_classEnable; }
    /// Whether Deserialize saw opcode 0x0101.
    bool IsValid() const { return m_opcode == kOpcode; }

    /// The reserved multicast address PFC frames are sent to.
    static Mac48Address DestinationAddress();
    /// How long \p quanta pause a link of rate \p rate.
    static Time QuantaToTime(uint16_t quanta, DataRate rate);

  private:
    uint16_t m_opcode{kOpcode};
    uint16_t m_classEnable{0};
    std::array<uint16_t, 8> m_quanta{};
};

} // namespace ns3

#endif
