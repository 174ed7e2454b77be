/*
 * One end of a PCIe link: the data link layer and the transmit side of flow
 * control for one VC (PCIe Base Spec ch. 2.6 and 3).
 *
 * Transmit: the transaction layer queues TLPs by type (posted, non-posted,
 * completion). A TLP leaves when its header and data credits fit the limits
 * the peer advertised (InitFC, then UpdateFC; unbounded counters stand for
 * the spec's 8/12-bit modular ones). Ordering, simplified from the spec's
 * table: a posted TLP may pass blocked non-posted requests and completions;
 * neither passes an older posted TLP; they may pass each other. A TLP gets
 * the next sequence number and a copy stays in the replay buffer until an
 * Ack covers it. A Nak or the replay timer sends the buffer again, oldest
 * first, before any new TLP. DLLPs go first: Nak, Ack, InitFC, UpdateFC.
 *
 * Receive: a TLP whose bits were hit (probability from the link's BER and
 * its wire bits) fails LCRC: it is dropped and a Nak is scheduled (once
 * until a good in-order TLP arrives). Out-of-sequence TLPs are dropped,
 * duplicates re-Ack'ed. In-order TLPs are delivered; an Ack goes when
 * AckCoalesceTlps are pending or AckLatency after the first. The transaction
 * layer calls Release() when it has consumed a TLP, which returns its
 * credits to the peer in an UpdateFC (one per FC type waiting, carrying the
 * newest limits, so UpdateFCs coalesce while the wire is busy).
 *
 * Events: two per TLP (end of serialisation here, arrival at the peer), two
 * per DLLP (in flit mode one: DLLPs ride in the flits' DLP bytes), one per
 * Ack latency timeout and none for credits.
 */
#ifndef FABEMU_PCIE_PORT_H
#define FABEMU_PCIE_PORT_H

#include "ns3/callback.h"
#include "ns3/event-id.h"
#include "ns3/nstime.h"
#include "ns3/object.h"
#include "ns3/pcie-link.h"
#include "ns3/pcie-tlp.h"
#include "ns3/random-variable-stream.h"
#include "ns3/traced-callback.h"

#include <array>
#include <deque>
#include <string>

namespace ns3
{

class PciePort : public Object
{
  public:
    static TypeId GetTypeId();
    PciePort();

    /// "" if the attributes are ones the spec allows, else the first problem.
    std::string Check() const;
    /// Called by PcieLink::Connect.
    void Attach(Ptr<PcieLink> link, Ptr<PciePort> peer);
    /// Sends InitFC for the three FC types; TLPs wait for the peer's.
    void Start();

    /// Queues a TLP from the transaction layer.
    void Enqueue(const PcieTlp& tlp);
    size_t GetQueued(PcieFcType type) const { return m_queue[int(type)].size(); }
    /// The transaction layer has consumed \p tlp (received here): its credits go back.
    void Release(const PcieTlp& tlp);

    /// A TLP received in order, once.
    void SetReceiveCallback(Callback<void, const PcieTlp&> cb) { m_receive = cb; }
    /// A TLP of the given type left its transmit queue (the owner may refill it).
    void SetDequeueCallback(Callback<void, PcieFcType> cb) { m_dequeued = cb; }
    /// The peer's Ack covered \p tlp: the link partner holds it.
    void SetAckedCallback(Callback<void, const PcieTlp&> cb) { m_acked = cb; }

    Ptr<PcieLink> GetLink() const { return m_link; }
    uint32_t GetMaxPayloadSize() const { return m_mps; }
    Time GetAckLatency() const;
    Time GetReplayTimeout() const;
    /// Assigns the random stream for bit errors; returns the streams used (1).
    int64_t AssignStreams(int64_t stream);

    uint64_t GetTlpsSent() const { return m_tlpsSent; }
    uint64_t GetTlpsReplayed() const { return m_tlpsReplayed; }
    uint64_t GetReplayTimeouts() const { return m_timeouts; }
    uint64_t GetNaksReceived() const { return m_naksReceived; }
    uint64_t GetAcksSent() const { return m_acksSent; }
    uint64_t GetNaksSent() const { return m_naksSent; }
    uint64_t GetUpdateFcsSent() const { return m_updateFcsSent; }
    uint64_t GetLcrcErrors() const { return m_lcrcErrors; }
    uint64_t GetTlpsDelivered() const { return m_tlpsDelivered; }
    /// DLLPs sent (Ack, Nak, InitFC, UpdateFC).
    uint64_t GetDllpsSent() const { return m_dllpsSent; }
    /// Bytes this port has put on the wire, TLPs (replays included) and DLLPs, framing
    /// included (fractional in flit mode).
    double GetWireBytes() const { return m_wireBytes; }
    /// Payload bytes of the TLPs it has sent, replays included.
    uint64_t GetPayloadBytesSent() const { return m_payloadBytes; }
    uint64_t GetDuplicates() const { return m_duplicates; }
    /// TLPs that arrived beyond the advertised credits (never, if flow control works).
    uint64_t GetOverflows() const { return m_overflows; }
    /// Time the head TLP of a type waited for credits of class \p c, summed.
    Time GetCreditStarvedTime(PcieFcClass c) const { return m_starvedTotal[int(c)]; }

    using TlpTracedCallback = void (*)(const PcieTlp& tlp);
    using TlpTxTracedCallback = void (*)(const PcieTlp& tlp, bool replay);
    using DllpTracedCallback = void (*)(const PcieDllp& dllp);
    using ReplayTracedCallback = void (*)(uint64_t fromSeq, uint32_t tlps, bool timeout);
    using StarvedTracedCallback = void (*)(PcieFcClass c, Time duration);

  protected:
    void DoDispose() override;

  private:
    struct Queued
    {
        uint64_t order;
        PcieTlp tlp;
    };

    void TrySend();
    bool NextDllp(PcieDllp& d);
    void SendDllp(const PcieDllp& d);
    void SendTlp(const PcieTlp& tlp, bool replay);
    void TxDone();
    int PickQueue();
    /// The credit class a TLP lacks, or -1 if it fits (-2: the peer's InitFC not in yet).
    int Missing(const PcieTlp& tlp) const;
    void UpdateStarvation();
    void ReceiveTlp(PcieTlp tlp, bool corrupted);
    void ReceiveDllp(PcieDllp d);
    void OnAckTimer();
    void OnReplayTimer();
    void StartReplay(bool timeout);
    void ArmReplayTimer(Time deadline);
    PcieDllp FcDllp(PcieDllp::Kind kind, PcieFcType type) const;

    // Attributes
    uint32_t m_mps;
    uint32_t m_replayBufferTlps;
    uint32_t m_ackCoalesce;
    Time m_ackLatency;
    Time m_replayTimeout;
    uint32_t m_initPH;
    uint32_t m_initPD;
    uint32_t m_initNPH;
    uint32_t m_initNPD;
    uint32_t m_initCplH;
    uint32_t m_initCplD;
    std::array<uint32_t, kPcieFcClasses> m_init{}; ///< the six above, in class order

    Ptr<PcieLink> m_link;
    Ptr<PciePort> m_peer;
    Ptr<UniformRandomVariable> m_rng;
    bool m_started{false};
    bool m_busy{false};
    Time m_delay;
    Time m_ackLatencyUsed;
    Time m_replayTimeoutUsed;

    // Transmit
    std::array<std::deque<Queued>, kPcieFcTypes> m_queue;
    uint64_t m_order{0};
    std::array<uint64_t, kPcieFcClasses> m_limit{};
    std::array<uint64_t, kPcieFcClasses> m_consumed{};
    std::array<bool, kPcieFcClasses> m_infinite{};
    std::array<bool, kPcieFcTypes> m_fcKnown{};
    std::array<bool, kPcieFcClasses> m_starving{};
    std::array<Time, kPcieFcClasses> m_starvedSince{};
    std::array<Time, kPcieFcClasses> m_starvedTotal{};
    std::deque<PcieTlp> m_replay;
    size_t m_nextSend{0}; ///< entries of m_replay sent in the current pass
    uint64_t m_nextSeq{0};
    EventId m_replayEvent;
    Time m_replayDeadline{Time::Max()};

    // Receive
    uint64_t m_expectedSeq{0};
    bool m_nakScheduled{false};
    uint32_t m_unacked{0};
    EventId m_ackTimer;
    std::array<uint64_t, kPcieFcClasses> m_rxAllocated{};
    std::array<uint64_t, kPcieFcClasses> m_rxReceived{};

    // DLLPs waiting
    bool m_nakDue{false};
    bool m_ackDue{false};
    std::array<bool, kPcieFcTypes> m_initDue{};
    std::array<bool, kPcieFcTypes> m_fcDue{};

    Callback<void, const PcieTlp&> m_receive;
    Callback<void, PcieFcType> m_dequeued;
    Callback<void, const PcieTlp&> m_acked;

    uint64_t m_tlpsSent{0};
    uint64_t m_tlpsReplayed{0};
    uint64_t m_timeouts{0};
    uint64_t m_naksReceived{0};
    uint64_t m_acksSent{0};
    uint64_t m_naksSent{0};
    uint64_t m_updateFcsSent{0};
    uint64_t m_lcrcErrors{0};
    uint64_t m_tlpsDelivered{0};
    uint64_t m_dllpsSent{0};
    double m_wireBytes{0};
    uint64_t m_payloadBytes{0};
    uint64_t m_duplicates{0};
    uint64_t m_overflows{0};

    TracedCallback<const PcieTlp&, bool> m_tlpTxTrace;
    TracedCallback<const PcieTlp&> m_tlpRxTrace;
    TracedCallback<const PcieTlp&> m_lcrcErrorTrace;
    TracedCallback<const PcieDllp&> m_dllpTxTrace;
    TracedCallback<uint64_t, uint32_t, bool> m_replayTrace;
    TracedCallback<PcieFcClass, Time> m_starvedTrace;
};

} // namespace ns3

#endif
