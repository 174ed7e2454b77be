#include "ns3/ib-opcode.h"

#include <array>
#include <cstdio>
#include <optional>

namespace ns3
{

uint32_t
IbOpcodeInfo::ExtensionBytes() const
{
    return (hasDeth ? 8 : 0) + (hasReth ? 16 : 0) + (hasAtomicEth ? 28 : 0) + (hasAeth ? 4 : 0) +
           (hasAtomicAckEth ? 8 : 0) + (hasImmDt ? 4 : 0) + (hasIeth ? 4 : 0);
}

namespace
{

struct OperationShape
{
    const char* name;
    bool reth;
    bool atomicEth;
    bool aeth;
    bool atomicAck;
    bool imm;
    bool ieth;
    bool payload;
};

/// Header shape of each operation, independent of the transport (IBA table 38).
std::optional<OperationShape>
Shape(IbOperation op)
{
    switch (op)
    {
    case IbOperation::SendFirst:
        return OperationShape{"SEND First", false, false, false, false, false, false, true};
    case IbOperation::SendMiddle:
        return OperationShape{"SEND Middle", false, false, false, false, false, false, true};
    case IbOperation::SendLast:
        return OperationShape{"SEND Last", false, false, false, false, false, false, true};
    case IbOperation::SendLastImm:
        return OperationShape{
            "SEND Last with Immediate", false, false, false, false, true, false, true};
    case IbOperation::SendOnly:
        return OperationShape{"SEND Only", false, false, false, false, false, false, true};
    case IbOperation::SendOnlyImm:
        return OperationShape{
            "SEND Only with Immediate", false, false, false, false, true, false, true};
    case IbOperation::WriteFirst:
        return OperationShape{"RDMA WRITE First", true, false, false, false, false, false, true};
    case IbOperation::WriteMiddle:
        return OperationShape{"RDMA WRITE Middle", false, false, false, false, false, false, true};
    case IbOperation::WriteLast:
        return OperationShape{"RDMA WRITE Last", false, false, false, false, false, false, true};
    case IbOperation::WriteLastImm:
        return OperationShape{
            "RDMA WRITE Last with Immediate", false, false, false, false, true, false, true};
    case IbOperation::WriteOnly:
        return OperationShape{"RDMA WRITE Only", true, false, false, false, false, false, true};
    case IbOperation::WriteOnlyImm:
        return OperationShape{
            "RDMA WRITE Only with Immediate", true, false, false, false, true, false, true};
    case IbOperation::ReadRequest:
        return OperationShape{"RDMA READ Request", true, false, false, false, false, false, false};
    case IbOperation::ReadResponseFirst:
        return OperationShape{
            "RDMA READ Response First", false, false, true, false, false, false, true};
    case IbOperation::ReadResponseMiddle:
        return OperationShape{
            "RDMA READ Response Middle", false, false, false, false, false, false, true};
    case IbOperation::ReadResponseLast:
        return OperationShape{
            "RDMA READ Response Last", false, false, true, false, false, false, true};
    case IbOperation::ReadResponseOnly:
        return OperationShape{
            "RDMA READ Response Only", false, false, true, false, false, false, true};
    case IbOperation::Acknowledge:
        return OperationShape{"Acknowledge", false, false, true, false, false, false, false};
    case IbOperation::AtomicAcknowledge:
        return OperationShape{"ATOMIC Acknowledge", false, false, true, true, false, false, false};
    case IbOperation::CompareSwap:
        return OperationShape{"CmpSwap", false, true, false, false, false, false, false};
    case IbOperation::FetchAdd:
        return OperationShape{"FetchAdd", false, true, false, false, false, false, false};
    case IbOperation::SendLastInv:
        return OperationShape{
            "SEND Last with Invalidate", false, false, false, false, false, true, true};
    case IbOperation::SendOnlyInv:
        return OperationShape{
            "SEND Only with Invalidate", false, false, false, false, false, true, true};
    }
    return std::nullopt;
}

bool
IsKnownOperation(uint8_t op)
{
    return op <= 0x14 || op == 0x16 || op == 0x17;
}

std::optional<IbOpcodeInfo>
Describe(uint8_t opcode)
{
    if (opcode == kIbOpcodeCnp)
    {
        return IbOpcodeInfo{"CNP", false, false, false, false, false, false, false, true, 16};
    }
    const uint8_t transport = opcode & 0xe0;
    const uint8_t op = opcode & 0x1f;
    if (!IsKnownOperation(op))
    {
        return std::nullopt;
    }
    const auto shape = Shape(static_cast<IbOperation>(op));
    if (!shape)
    {
        return std::nullopt;
    }
    const bool ud = transport == static_cast<uint8_t>(IbTransport::UD);
    const bool uc = transport == static_cast<uint8_t>(IbTransport::UC);
    const bool rd = transport == static_cast<uint8_t>(IbTransport::RD);
    // RD (with its RDETH) is not modelled: no Linux provider implements it.
    if (rd || transport > static_cast<uint8_t>(IbTransport::UD))
    {
        return std::nullopt;
    }
    // UD carries only SEND Only (with or without immediate); UC has no reads,
    // atomics or acknowledgements (IBA table 38).
    const auto operation = static_cast<IbOperation>(op);
    if (ud && operation != IbOperation::SendOnly && operation != IbOperation::SendOnlyImm)
    {
        return std::nullopt;
    }
    if (uc && (op >= static_cast<uint8_t>(IbOperation::ReadRequest)))
    {
        return std::nullopt;
    }
    IbOpcodeInfo info{shape->name,      ud,         shape->reth, shape->atomicEth, shape->aeth,
                      shape->atomicAck, shape->imm, shape->ieth, shape->payload,   0};
    return info;
}

} // namespace

const IbOpcodeInfo*
LookupIbOpcode(uint8_t opcode)
{
    // The 256 answers are worked out once; a pointer into them is returned, not a copy.
    static const std::array<std::optional<IbOpcodeInfo>, 256> kTable = [] {
        std::array<std::optional<IbOpcodeInfo>, 256> table;
        for (unsigned o = 0; o < table.size(); ++o)
        {
            table[o] = Describe(static_cast<uint8_t>(o));
        }
        return table;
    }();
    const std::optional<IbOpcodeInfo>& entry = kTable[opcode];
    return entry ? &*entry : nullptr;
}

std::string
IbOpcodeName(uint8_t opcode)
{
    static constexpr std::array<const char*, 4> kTransport{"RC", "UC", "RD", "UD"};
    if (auto info = LookupIbOpcode(opcode))
    {
        if (opcode == kIbOpcodeCnp)
        {
            return info->name;
        }
        return std::string(kTransport[opcode >> 5]) + " " + info->name;
    }
    char buf[40];
    std::snprintf(buf, sizeof(buf), "opcode 0x%02x (unknown)", opcode);
    return buf;
}

} // namespace ns3
