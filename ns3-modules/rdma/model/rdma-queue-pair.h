/*
 * A reliable-connected (RC) queue pair: the IB transport that RoCEv2 and
 * InfiniBand share (IBA vol. 1, chapter 9), independent of the fabric below.
 *
 * Requester: work requests are segmented into path-MTU packets, each taking
 * one PSN (an RDMA READ takes the PSNs of its responses); packets go out when
 * the NIC pulls them; cumulative ACKs retire them; a NAK (PSN sequence error)
 * or a retransmission timeout goes back to the oldest unacknowledged PSN
 * (go-back-N); after RetryCount timeouts without progress the QP fails.
 * Responder: accepts packets in PSN order only, coalesces ACKs, sends one NAK
 * per gap, re-acknowledges duplicates and serves READ requests.
 *
 * PSNs are 24 bits on the wire and unbounded counters inside.
 *
 * With Service UD the QP sends datagrams: SEND Only (with immediate) of at most
 * one path MTU, with a DETH carrying the Q_Key and source QP; no ACK, no
 * retransmission; a send completes once it is on its way, and the receiver
 * drops a datagram whose Q_Key is not its own. The peer is fixed at connection
 * time (one address handle per QP, which is how the workloads use UD).
 */
#ifndef FABEMU_RDMA_QUEUE_PAIR_H
#define FABEMU_RDMA_QUEUE_PAIR_H

#include "ns3/callback.h"
#include "ns3/event-id.h"
#include "ns3/object.h"
#include "ns3/rdma-qp.h"
#include "ns3/rdma-types.h"
#include "ns3/ring-queue.h"
#include "ns3/simulator.h"
#include "ns3/traced-callback.h"

#include <deque>
#include <optional>

namespace ns3
{

class RdmaQueuePair : public RdmaQp
{
  public:
    /// The transport service (IBA 9.8.1): reliable connected, or unreliable datagram.
    enum Service
    {
        RC,
        UD,
    };

    static TypeId GetTypeId();
    RdmaQueuePair();

    void SetQpn(uint32_t qpn) { m_qpn = qpn; }
    uint32_t GetQpn() const { return m_qpn; }
    /// The peer's QP number; packets carry it as their destination QP.
    void SetRemoteQpn(uint32_t qpn) { m_remoteQpn = qpn; }
    uint32_t GetRemoteQpn() const { return m_remoteQpn; }
    /// Starting PSNs of each direction (as exchanged at connection set-up).
    void SetInitialPsn(uint32_t sendPsn, uint32_t expectedPsn);

    void PostSend(const RdmaWorkRequest& wr) override;
    /// Called when the QP has something new to send (the NIC should pull).
    void SetWakeCallback(Callback<void> cb) { m_wake = cb; }

    /// Whether NextPacket would return a packet now.
    bool HasPacket() const;
    /// Whether the next packet is an ACK or NAK (never paced by congestion control).
    bool HasControlPacket() const { return !m_control.empty(); }
    /// The next packet to transmit: ACKs/NAKs first, then read responses, then requests.
    std::optional<TransportPacket> NextPacket();
    /// Hands a received packet addressed to this QP.
    void Receive(const TransportPacket& p);
    /// The NIC holds this QP's next packet back for its rate limiter (congestion
    /// control pacing). A timeout that finds nothing resent since it last went back
    /// is then the limiter's doing and costs no retry; otherwise (a link that cannot
    /// send, a deadlock) the retries run out as usual.
    void NotePaced() { m_lastPaced = Simulator::Now(); }

    bool IsError() const override { return m_error; }
    /// Work requests posted and not yet completed.
    size_t GetOutstanding() const { return m_sendQueue.size(); }
    uint64_t GetBytesAcked() const { return m_bytesAcked; }
    /// Request payload bytes put on the wire, retransmissions included.
    uint64_t GetBytesSent() const { return m_bytesSent; }
    uint64_t GetBytesReceived() const override { return m_bytesReceived; }
    uint64_t GetRetransmittedPackets() const { return m_retransmitted; }
    uint64_t GetTimeouts() const { return m_timeouts; }
    uint64_t GetNaksSent() const { return m_naksSent; }
    /// What go-back-N did: packets sent again, and retransmission timeouts.
    struct Recovery
    {
        uint64_t retransmitted{0};
        uint64_t timeouts{0};
        Recovery& operator+=(const Recovery& o)
        {
            retransmitted += o.retransmitted;
            timeouts += o.timeouts;
            return *this;
        }
    };
    Recovery GetRecovery() const { return {m_retransmitted, m_timeouts}; }
    uint32_t GetMtu() const { return m_mtu; }
    Service GetService() const { return m_service; }
    uint64_t GetDatagramsDropped() const { return m_udDropped; }

  protected:
    void DoDispose() override;

  private:
    struct PendingWr
    {
        RdmaWorkRequest wr;
        uint64_t firstPsn;
        uint64_t lastPsn; ///< inclusive
        Time posted;
    };
    struct ReadResponseJob
    {
        uint64_t nextPsn;
        uint64_t lastPsn;
        uint64_t firstPsn;
        uint64_t bytes;
    };

    uint64_t Unwrap(uint32_t wirePsn, uint64_t reference) const;
    uint32_t PacketsFor(uint64_t bytes) const;
    const PendingWr* FindWr(uint64_t psn) const;
    TransportPacket MakeRequest(const PendingWr& w, uint64_t psn) const;
    void SendAck(uint64_t psn, AckSyndrome kind, uint8_t value);
    void ReceiveRequest(const TransportPacket& p);
    void ReceiveResponse(const TransportPacket& p);
    void RetireUpTo(uint64_t psnExclusive);
    void CompleteFront(RdmaCompletion::Status status);
    /// Completes a request that never made it into the send queue.
    void CompleteAtOnce(const RdmaWorkRequest& wr, RdmaCompletion::Status status);
    void GoBack(uint64_t psn);
    void ArmTimer();
    void OnTimeout();
    void Fail();
    void Wake();
    std::optional<TransportPacket> NextDatagram();
    void ReceiveDatagram(const TransportPacket& p);

    // What the NIC reads before every frame it sends (HasPacket, HasControlPacket,
    // GetQpn, NextPacket's first tests), first and together: the fabric's QPs outnumber
    // the cache, and each field apart is a miss.
    RingQueue<TransportPacket> m_control; ///< the responder's ACKs and NAKs, to send first
    uint64_t m_nextPsn{0};                ///< first PSN not yet given to a work request
    uint64_t m_sndNxt{0};                 ///< next PSN to transmit
    uint32_t m_qpn{0};
    Service m_service; ///< RC or UD (an attribute)
    bool m_error{false};
    RingQueue<ReadResponseJob> m_readJobs; ///< the responder's READ responses to send

    uint32_t m_remoteQpn{0};
    // Attributes
    uint32_t m_mtu;
    Time m_timeout;
    uint32_t m_retryCount;
    uint32_t m_ackInterval;
    uint32_t m_qkey;
    uint64_t m_udDropped{0};

    // Requester
    std::deque<PendingWr> m_sendQueue;
    uint64_t m_sndUna{0}; ///< oldest PSN not yet acknowledged
    uint64_t m_highestSent{0};
    uint64_t m_ackedThrough{0}; ///< highest cumulative ACK seen (exclusive)
    uint64_t m_readRetryPsn{UINT64_MAX};
    uint32_t m_retries{0};
    EventId m_timer;
    Time m_deadline{Time::Max()};  ///< when the retransmission timer expires; Max: disarmed
    Time m_lastPaced{Time::Min()}; ///< when the NIC last held a packet for pacing
    Time m_wentBack{Time::Min()};  ///< when the last timeout went back

    // Responder
    uint64_t m_epsn{0};
    bool m_nakSent{false};
    uint32_t m_unacked{0};
    uint32_t m_msn{0};
    uint64_t m_messageBytes{0};
    Time m_messageStart;

    // Counters
    uint64_t m_bytesAcked{0};
    uint64_t m_bytesSent{0};
    uint64_t m_bytesReceived{0};
    uint64_t m_retransmitted{0};
    uint64_t m_timeouts{0};
    uint64_t m_naksSent{0};

    Callback<void> m_wake;
    TracedCallback<uint32_t, uint32_t> m_goBackTrace; ///< (from PSN, to PSN)
    TracedCallback<uint32_t> m_timeoutTrace;          ///< (retry number)
};

} // namespace ns3

#endif
