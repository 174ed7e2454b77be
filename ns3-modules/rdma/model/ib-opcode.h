/*
 * InfiniBand transport opcodes (IBA vol. 1, 9.2; as in Linux include/rdma/ib_pack.h)
 * and which extension headers follow the BTH for each of them.
 */
#ifndef FABEMU_IB_OPCODE_H
#define FABEMU_IB_OPCODE_H

#include <cstdint>
#include <string>

namespace ns3
{

/// Transport service, the top three bits of the opcode.
enum class IbTransport : uint8_t
{
    RC = 0x00,
    UC = 0x20,
    RD = 0x40,
    UD = 0x60,
    CNP = 0x80, ///< RoCEv2 congestion notification (IBA annex A17)
};

/// The operation, the low five bits of the opcode.
enum class IbOperation : uint8_t
{
    SendFirst = 0x00,
    SendMiddle = 0x01,
    SendLast = 0x02,
    SendLastImm = 0x03,
    SendOnly = 0x04,
    SendOnlyImm = 0x05,
    WriteFirst = 0x06,
    WriteMiddle = 0x07,
    WriteLast = 0x08,
    WriteLastImm = 0x09,
    WriteOnly = 0x0a,
    WriteOnlyImm = 0x0b,
    ReadRequest = 0x0c,
    ReadResponseFirst = 0x0d,
    ReadResponseMiddle = 0x0e,
    ReadResponseLast = 0x0f,
    ReadResponseOnly = 0x10,
    Acknowledge = 0x11,
    AtomicAcknowledge = 0x12,
    CompareSwap = 0x13,
    FetchAdd = 0x14,
    SendLastInv = 0x16,
    SendOnlyInv = 0x17,
};

/// The RoCEv2 CNP opcode (BTH opcode 0x81).
constexpr uint8_t kIbOpcodeCnp = 0x81;

/// Composes an opcode byte from transport and operation.
constexpr uint8_t
IbOpcode(IbTransport t, IbOperation op)
{
    return static_cast<uint8_t>(t) | static_cast<uint8_t>(op);
}

/// Which headers follow the BTH for one opcode, in wire order, and their sizes.
struct IbOpcodeInfo
{
    const char* name;      ///< e.g. "RC RDMA WRITE First"
    bool hasDeth;          ///< 8 bytes, UD/RD
    bool hasReth;          ///< 16 bytes
    bool hasAtomicEth;     ///< 28 bytes
    bool hasAeth;          ///< 4 bytes
    bool hasAtomicAckEth;  ///< 8 bytes
    bool hasImmDt;         ///< 4 bytes
    bool hasIeth;          ///< 4 bytes
    bool hasPayload;       ///< may carry data
    uint32_t fixedPayload; ///< bytes of mandatory payload (CNP: 16 reserved bytes)

    /// Bytes of extension headers after the BTH.
    uint32_t ExtensionBytes() const;
};

/// Describes a known opcode (an entry of a table that lasts as long as the program);
/// null for an opcode no transport defines. Every frame's parse asks, at every hop.
const IbOpcodeInfo* LookupIbOpcode(uint8_t opcode);

/// The opcode's name, or "opcode 0xNN (unknown)".
std::string IbOpcodeName(uint8_t opcode);

} // namespace ns3

#endif
