#include "rdma-types.h"

#include "bth-header.h"
#include "ib-opcode.h"

namespace ns3
{

const char*
RdmaOpName(RdmaWorkRequest::Op op)
{
    switch (op)
    {
    case RdmaWorkRequest::Op::Send:
        return "send";
    case RdmaWorkRequest::Op::SendWithImm:
        return "send_imm";
    case RdmaWorkRequest::Op::Write:
        return "write";
    case RdmaWorkRequest::Op::WriteWithImm:
        return "write_imm";
    case RdmaWorkRequest::Op::Read:
        return "read";
    }
    return "unknown";
}

const char*
RdmaStatusName(RdmaCompletion::Status s)
{
    switch (s)
    {
    case RdmaCompletion::Status::Success:
        return "success";
    case RdmaCompletion::Status::RetryExceeded:
        return "retry_exceeded";
    case RdmaCompletion::Status::Flushed:
        return "flushed";
    }
    return "unknown";
}

uint32_t
TransportPacket::TransportBytes() const
{
    const auto info = LookupIbOpcode(opcode);
    const uint32_t ext = info ? info->ExtensionBytes() + info->fixedPayload : 0;
    return BthHeader::kSize + ext + payload + BthPadFor(payload);
}

} // namespace ns3
