/*
 * The verbs-like vocabulary shared by every fabric: work requests,
 * completions, and the BTH-level packets a queue pair exchanges.
 */
#ifndef FABEMU_RDMA_TYPES_H
#define FABEMU_RDMA_TYPES_H

#include "ns3/ib-extension-headers.h"
#include "ns3/nstime.h"

#include <cstdint>
#include <string>

namespace ns3
{

/// What an application posts to a queue pair's send queue.
struct RdmaWorkRequest
{
    enum class Op : uint8_t
    {
        Send,
        SendWithImm,
        Write,
        WriteWithImm,
        Read,
    };
    Op op{Op::Write};
    uint64_t bytes{0};
    uint64_t wrId{0};
    uint32_t imm{0};
    // Memory, where the transport places real bytes (iWARP): the local region (source of a
    // WRITE or SEND, sink of a READ) and the remote one. Key 0: no region, bytes are synthetic
    // at the source and counted, not kept, at the sink.
    uint32_t lkey{0};
    uint64_t localAddr{0};
    uint32_t rkey{0};
    uint64_t remoteAddr{0};
    // SEND variants (iWARP; the IB transports send a plain SEND): ask for a solicited
    // event at the receiver, and invalidate the receiver's region with this key (0: none).
    bool solicited{false};
    uint32_t invalidateKey{0};
};

const char* RdmaOpName(RdmaWorkRequest::Op op);

/// What the application gets back.
struct RdmaCompletion
{
    enum class Status : uint8_t
    {
        Success,
        RetryExceeded, ///< the transport gave up after RetryCount timeouts
        Flushed,       ///< the QP went to error before this request ran
        LengthError,   ///< a UD send larger than the path MTU, or an operation UD lacks
        Unsupported,   ///< an operation the transport does not have (immediate data on iWARP)
        RemoteError,   ///< the peer terminated the connection (iWARP Terminate)
    };
    uint64_t wrId{0};
    RdmaWorkRequest::Op op{RdmaWorkRequest::Op::Write};
    uint64_t bytes{0};
    Status status{Status::Success};
    bool receive{false};   ///< a receive completion (SEND, WRITE with immediate) at the responder
    bool solicited{false}; ///< receive: the sender asked for a solicited event (iWARP)
    uint32_t imm{0};
    Time posted; ///< requester: when posted; responder: first packet's arrival
    Time completed;
};

const char* RdmaStatusName(RdmaCompletion::Status s);
/// A failed completion's status as a person would say it ("retry count exceeded"); "" for
/// Success.
const char* RdmaStatusReason(RdmaCompletion::Status s);

/// One BTH-level packet as a queue pair sends or receives it, fabric-neutral:
/// the NIC of each fabric wraps it in its own framing (RoCEv2, IB LRH, ...).
struct TransportPacket
{
    uint8_t opcode{0};
    uint32_t psn{0}; ///< 24 bits on the wire
    uint32_t destQp{0};
    bool ackRequest{false};
    bool fecn{false};
    bool becn{false};
    RethHeader reth;
    AethHeader aeth;
    uint32_t imm{0};
    uint32_t payload{0};
    DethHeader deth; ///< UD only: Q_Key and source QP

    /// BTH, extension headers and payload with its pad: what ICRC covers after the BTH.
    uint32_t TransportBytes() const;
};

/// Most bytes of BTH + extension headers any modelled opcode has (atomics are not modelled).
constexpr uint32_t kMaxTransportHeaderBytes = 12 + 8 + 16 + 4 + 4;

/**
 * \brief Writes the BTH and the extension headers \p p's opcode calls for.
 * \param pad the BTH pad count to write
 * \return bytes written at \p out (at most kMaxTransportHeaderBytes)
 */
uint32_t WriteTransportHeaders(const TransportPacket& p, uint8_t pad, uint8_t* out);

/**
 * \brief Reads BTH and extension headers from \p in (\p len bytes available).
 * \return false when the opcode is unknown or \p len is too short
 */
bool ReadTransportHeaders(const uint8_t* in, uint32_t len, TransportPacket& p);

} // namespace ns3

#endif
