/*
 * BTH extension headers (IBA vol. 1, 9.3): RETH, AETH, ImmDt, IETH, DETH.
 */
#ifndef FABEMU_IB_EXTENSION_HEADERS_H
#define FABEMU_IB_EXTENSION_HEADERS_H

#include "ns3/header.h"

namespace ns3
{

/// RDMA Extended Transport Header: virtual address, R_Key, DMA length (16 bytes).
class RethHeader : public Header
{
  public:
    static constexpr uint32_t kSize = 16;
    static TypeId GetTypeId();
    TypeId GetInstanceTypeId() const override;
    uint32_t GetSerializedSize() const override { return kSize; }
    void Serialize(Buffer::Iterator start) const override;
    uint32_t Deserialize(Buffer::Iterator start) override;
    void Print(std::ostream& os) const override;

    uint64_t virtualAddress{0};
    uint32_t rkey{0};
    uint32_t dmaLength{0};
};

/// ACK syndrome kinds, the top bits of the AETH syndrome (IBA 9.7.5.1).
enum class AckSyndrome : uint8_t
{
    Ack = 0x00,    ///< low five bits: credit count
    RnrNak = 0x20, ///< low five bits: RNR timer
    Nak = 0x60,    ///< low five bits: NAK code
};

/// NAK codes carried in the low five bits of a NAK syndrome.
enum class NakCode : uint8_t
{
    PsnSequenceError = 0,
    InvalidRequest = 1,
    RemoteAccessError = 2,
    RemoteOperationalError = 3,
    InvalidRdRequest = 4,
};

/// ACK Extended Transport Header: syndrome and MSN (4 bytes).
class AethHeader : public Header
{
  public:
    static constexpr uint32_t kSize = 4;
    static TypeId GetTypeId();
    TypeId GetInstanceTypeId() const override;
    uint32_t GetSerializedSize() const override { return kSize; }
    void Serialize(Buffer::Iterator start) const override;
    uint32_t Deserialize(Buffer::Iterator start) override;
    void Print(std::ostream& os) const override;

    AckSyndrome GetKind() const { return static_cast<AckSyndrome>(syndrome & 0x60); }
    uint8_t GetValue() const { return syndrome & 0x1f; }

    uint8_t syndrome{0};
    uint32_t msn{0}; ///< 24 bits
};

/// A 32-bit header carried opaquely: Immediate Data (ImmDt) or the R_Key to invalidate (IETH).
class ImmDtHeader : public Header
{
  public:
    static constexpr uint32_t kSize = 4;
    static TypeId GetTypeId();
    TypeId GetInstanceTypeId() const override;
    uint32_t GetSerializedSize() const override { return kSize; }
    void Serialize(Buffer::Iterator start) const override;
    uint32_t Deserialize(Buffer::Iterator start) override;
    void Print(std::ostream& os) const override;

    uint32_t value{0};
};

/// Datagram Extended Transport Header: Q_Key and source QP (8 bytes).
class DethHeader : public Header
{
  public:
    static constexpr uint32_t kSize = 8;
    static TypeId GetTypeId();
    TypeId GetInstanceTypeId() const override;
    uint32_t GetSerializedSize() const override { return kSize; }
    void Serialize(Buffer::Iterator start) const override;
    uint32_t Deserialize(Buffer::Iterator start) override;
    void Print(std::ostream& os) const override;

    uint32_t qkey{0};
    uint32_t srcQp{0}; ///< 24 bits
};

} // namespace ns3

#endif
