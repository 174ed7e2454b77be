/*
 * An iWARP queue pair: RDMAP (RFC 5040) over DDP (RFC 5041) over MPA
 * (RFC 5044) on one ns-3 TCP connection. TCP does all reliability and
 * congestion control; nothing here retransmits.
 *
 * Connection set-up: once TCP is connected the initiator sends an MPA Request
 * and the responder answers with an MPA Reply (revision 1 or 2, markers and
 * CRC negotiated as RFC 5044 says: each end asks for markers on what it
 * receives; CRCs are used if either end asks). Work requests posted earlier
 * wait for it.
 *
 * Sending: each message is cut into DDP segments whose FPDUs fit one TCP
 * segment (the socket's SegmentSize); WRITE and READ responses are tagged
 * (STag, tagged offset), SEND and READ requests untagged (queue number, MSN,
 * message offset). A WRITE or SEND completes once TCP has had all its bytes
 * acknowledged; a READ once its last response segment is placed.
 *
 * Receiving: FPDUs are checked (CRC, markers, length), then DDP and RDMAP
 * (version, opcode, queue number, MSN, STag, bounds). Any violation sends a
 * Terminate carrying the error RFC 5040/5041/5044 prescribe, flushes the
 * queue pair and closes the connection. Bytes land in registered memory when
 * the work request names a region (key != 0), so tests can check content;
 * otherwise they are synthetic at the source and counted at the sink.
 */
#ifndef FABEMU_IWARP_QP_H
#define FABEMU_IWARP_QP_H

#include "ns3/event-id.h"
#include "ns3/iwarp-wire.h"
#include "ns3/rdma-qp.h"
#include "ns3/sequence-number.h"
#include "ns3/socket.h"
#include "ns3/traced-callback.h"

#include <deque>
#include <map>
#include <memory>
#include <optional>

namespace ns3
{

class TcpHeader;
class TcpSocketBase;

class IwarpQp : public RdmaQp
{
  public:
    static TypeId GetTypeId();
    IwarpQp();

    /// Signature of the Terminate trace.
    typedef void (*TerminateCallback)(const TerminateCause& cause);

    /// Takes this end's TCP socket: the initiator's before it connects (the MPA Request
    /// goes out once it has), the responder's once accepted.
    void Attach(Ptr<Socket> socket, bool initiator);

    /// Registers \p bytes as memory region \p stag starting at address \p base.
    void RegisterMemory(uint32_t stag, uint64_t base, std::shared_ptr<std::vector<uint8_t>> bytes);
    /// Posts a receive buffer for the next SEND (a region and a length). Without one a
    /// SEND's bytes are counted and dropped.
    void PostRecv(uint32_t lkey, uint64_t addr, uint32_t length);

    // RdmaQp
    void PostSend(const RdmaWorkRequest& wr) override;
    uint64_t GetBytesReceived() const override { return m_bytesReceived; }
    bool IsError() const override
    {
        return m_state == State::Error || m_state == State::Terminating;
    }
    bool HasImmediateData() const override { return false; } // RFC 5040 has none

    bool IsEstablished() const { return m_state == State::Established; }
    Ptr<Socket> GetSocket() const { return m_socket; }
    /// Closes the connection once what is queued has gone.
    void Close();

    /// What was negotiated (valid once established).
    bool MarkersOnTx() const { return m_framer && m_framer->Markers(); }
    bool MarkersOnRx() const { return m_markers; }
    bool CrcInUse() const { return m_framer && m_framer->Crc(); }
    uint8_t Revision() const { return m_negotiatedRevision; }

    uint64_t GetFpdusSent() const { return m_fpdusSent; }
    uint64_t GetFpdusReceived() const { return m_fpdusReceived; }
    /// Octets written into TCP (MPA request/reply, FPDUs with markers, pad and CRC).
    uint64_t GetStreamBytesSent() const { return m_streamWritten; }
    uint64_t GetPayloadBytesSent() const { return m_payloadSent; }
    uint64_t GetTcpRetransmissions() const { return m_retransmissions; }
    uint64_t GetEcnEchoes() const { return m_ecnEchoes; }
    std::optional<TerminateCause> GetTerminateSent() const { return m_terminateSent; }
    std::optional<TerminateCause> GetTerminateReceived() const { return m_terminateReceived; }

  protected:
    void DoDispose() override;

  private:
    enum class State
    {
        Idle,
        AwaitReply,
        AwaitRequest,
        Established,
        Terminating, ///< a Terminate is queued; nothing else goes out or is taken in
        Error,
    };
    struct Region
    {
        uint64_t base;
        std::shared_ptr<std::vector<uint8_t>> bytes;
    };
    struct PendingWr
    {
        RdmaWorkRequest wr;
        Time posted;
        uint64_t streamEnd{0}; ///< stream octets written once its last FPDU is in
        bool framed{false};
        bool done{false}; ///< READ: last response placed
    };
    /// A message being cut into segments.
    struct TxMessage
    {
        DdpSegment header;  ///< fields common to every segment
        uint64_t bytes{0};  ///< payload bytes of the whole message
        uint64_t sent{0};   ///< payload bytes framed so far
        uint32_t srcKey{0}; ///< local region the payload comes from (0: synthetic)
        uint64_t srcAddr{0};
        PendingWr* wr{nullptr}; ///< the work request it carries, if any
    };
    struct RecvBuffer
    {
        uint32_t lkey;
        uint64_t addr;
        uint32_t length;
    };

    void ConnectionSucceeded(Ptr<Socket> s);
    void ConnectionFailed(Ptr<Socket> s);
    void PeerClosed(Ptr<Socket> s);
    void HandleRead(Ptr<Socket> s);
    void HandleSend(Ptr<Socket> s, uint32_t available);
    void WriteStream(const std::vector<uint8_t>& bytes);
    void StartFullOperation(bool txMarkers, bool crc);
    bool ProcessHandshake();
    void ProcessFpdus();
    void Receive(const DdpSegment& s);
    /// Places \p payload at \p to of region \p stag; the error to report if it cannot.
    std::optional<TerminateCause> Place(uint32_t stag, uint64_t to,
                                        const std::vector<uint8_t>& payload, bool tagged);
    void Pump();
    void CompleteReady();
    void Complete(PendingWr& p, RdmaCompletion::Status status);
    void FailLocally(const RdmaWorkRequest& wr, RdmaCompletion::Status status);
    void SendTerminate(const TerminateCause& cause);
    void EnterError(RdmaCompletion::Status status);
    void FillPayload(const TxMessage& m, uint32_t n, std::vector<uint8_t>& out) const;
    /// A tagged message (WRITE, READ response) into \p stag at \p to, from a local region.
    static TxMessage Tagged(RdmapOpcode opcode, uint32_t stag, uint64_t to, uint64_t bytes,
                            uint32_t srcKey, uint64_t srcAddr);
    void TcpTx(Ptr<const Packet> p, const TcpHeader& h, Ptr<const TcpSocketBase> s);
    void EcnEcho(SequenceNumber32 oldValue, SequenceNumber32 newValue);

    // Attributes
    bool m_markers;
    bool m_crc;
    uint8_t m_revision;
    uint32_t m_maxUlpduAccepted;

    Ptr<Socket> m_socket;
    bool m_initiator{false};
    State m_state{State::Idle};
    uint8_t m_negotiatedRevision{0};
    uint32_t m_mss{536};
    uint32_t m_sndBuf{131072};
    std::optional<MpaFramer> m_framer;
    std::optional<MpaDeframer> m_deframer;
    std::vector<uint8_t> m_handshake; ///< received bytes before full operation

    std::map<uint32_t, Region> m_regions;
    std::deque<RecvBuffer> m_recvQueue;
    std::deque<PendingWr> m_sendQueue;
    std::deque<TxMessage> m_tx;
    std::deque<PendingWr*> m_readsWaiting; ///< READs sent, oldest first
    uint32_t m_txMsn[3]{1, 1, 1};          ///< next MSN to send per untagged queue
    uint32_t m_rxMsn[3]{1, 1, 1};          ///< next MSN expected per untagged queue
    uint64_t m_sendReceived{0};            ///< bytes of the SEND being received
    Time m_sendStarted;

    uint64_t m_streamWritten{0};
    uint64_t m_payloadSent{0};
    uint64_t m_bytesReceived{0};
    uint64_t m_fpdusSent{0};
    uint64_t m_fpdusReceived{0};
    uint64_t m_retransmissions{0};
    uint64_t m_ecnEchoes{0};
    SequenceNumber32 m_highestTx{0};
    bool m_txSeen{false};
    std::optional<TerminateCause> m_terminateSent;
    std::optional<TerminateCause> m_terminateReceived;
    bool m_closeRequested{false};

    TracedCallback<const TerminateCause&> m_terminateTrace; ///< a Terminate sent or received
};

} // namespace ns3

#endif
