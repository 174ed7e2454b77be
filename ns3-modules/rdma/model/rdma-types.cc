#include "ns3/rdma-types.h"

#include "ns3/abort.h"
#include "ns3/bth-header.h"
#include "ns3/buffer.h"
#include "ns3/ib-opcode.h"

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
    case RdmaCompletion::Status::LengthError:
        return "length_error";
    case RdmaCompletion::Status::Unsupported:
        return "unsupported";
    case RdmaCompletion::Status::RemoteError:
        return "remote_error";
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

uint32_t
WriteTransportHeaders(const TransportPacket& p, uint8_t pad, uint8_t* out)
{
    const auto info = LookupIbOpcode(p.opcode);
    NS_ABORT_MSG_IF(!info, "no headers for " << IbOpcodeName(p.opcode));
    BthHeader bth;
    bth.SetOpcode(p.opcode);
    bth.SetPadCount(pad);
    bth.SetDestQp(p.destQp);
    bth.SetPsn(p.psn);
    bth.SetAckRequest(p.ackRequest);
    bth.SetFecn(p.fecn);
    bth.SetBecn(p.becn);
    const uint32_t size = BthHeader::kSize + info->ExtensionBytes();
    NS_ABORT_MSG_IF(size > kMaxTransportHeaderBytes, IbOpcodeName(p.opcode) << " is not modelled");
    Buffer buf;
    buf.AddAtStart(size);
    Buffer::Iterator i = buf.Begin();
    bth.Serialize(i);
    i.Next(BthHeader::kSize);
    if (info->hasDeth)
    {
        p.deth.Serialize(i);
        i.Next(DethHeader::kSize);
    }
    if (info->hasReth)
    {
        p.reth.Serialize(i);
        i.Next(RethHeader::kSize);
    }
    if (info->hasAeth)
    {
        p.aeth.Serialize(i);
        i.Next(AethHeader::kSize);
    }
    if (info->hasImmDt || info->hasIeth)
    {
        ImmDtHeader imm;
        imm.value = p.imm;
        imm.Serialize(i);
    }
    buf.CopyData(out, size);
    return size;
}

bool
ReadTransportHeaders(const uint8_t* in, uint32_t len, TransportPacket& p)
{
    if (len < BthHeader::kSize)
    {
        return false;
    }
    const auto info = LookupIbOpcode(in[0]);
    if (!info || info->hasAtomicEth || info->hasAtomicAckEth)
    {
        return false;
    }
    const uint32_t size = BthHeader::kSize + info->ExtensionBytes();
    if (len < size)
    {
        return false;
    }
    Buffer buf;
    buf.AddAtStart(size);
    buf.Begin().Write(in, size);
    Buffer::Iterator i = buf.Begin();
    BthHeader bth;
    bth.Deserialize(i);
    i.Next(BthHeader::kSize);
    p.opcode = bth.GetOpcode();
    p.psn = bth.GetPsn();
    p.destQp = bth.GetDestQp();
    p.ackRequest = bth.GetAckRequest();
    p.fecn = bth.GetFecn();
    p.becn = bth.GetBecn();
    if (info->hasDeth)
    {
        p.deth.Deserialize(i);
        i.Next(DethHeader::kSize);
    }
    if (info->hasReth)
    {
        p.reth.Deserialize(i);
        i.Next(RethHeader::kSize);
    }
    if (info->hasAeth)
    {
        p.aeth.Deserialize(i);
        i.Next(AethHeader::kSize);
    }
    if (info->hasImmDt || info->hasIeth)
    {
        ImmDtHeader imm;
        imm.Deserialize(i);
        p.imm = imm.value;
    }
    return true;
}

const char*
RdmaStatusReason(RdmaCompletion::Status s)
{
    switch (s)
    {
    case RdmaCompletion::Status::RetryExceeded:
        return "retry count exceeded";
    case RdmaCompletion::Status::Flushed:
        return "QP error (request flushed)";
    case RdmaCompletion::Status::LengthError:
        return "length error";
    case RdmaCompletion::Status::Unsupported:
        return "operation not supported";
    case RdmaCompletion::Status::RemoteError:
        return "remote error (connection terminated)";
    case RdmaCompletion::Status::Success:
        break;
    }
    return "";
}

} // namespace ns3
