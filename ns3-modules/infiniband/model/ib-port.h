/*
 * One end of an InfiniBand link, on an HCA or a switch: credit-based link
 * flow control per virtual lane and VL arbitration, as IBA vol. 1 ch. 7 has
 * them.
 *
 * Transmit: packets wait in one queue per data VL. A packet leaves only when
 * all its 64-byte blocks fit the credit the receiver advertised:
 * (FCCL - (FCTBS + blocks)) mod 4096 <= 2048, with 12-bit counters. Among the
 * VLs whose head packet fits, the high- and low-priority arbitration tables
 * choose (weights in 64-byte units; LimitOfHighPriority in 4 KB units, 255 =
 * unbounded). Flow-control packets go ahead of data.
 *
 * Receive: each data VL has a buffer of BufferBlocks credits. A packet takes
 * its blocks on arrival (ABR += blocks) and gives them back when its owner
 * releases it (an HCA once it has the tail, a switch once the packet has left
 * through its output port). The port advertises FCCL = ABR + free blocks
 * (at most 2048 ahead) in an FCP whenever that changes and every FcpInterval;
 * an FCP also carries this side's FCTBS, which resets the peer's ABR.
 *
 * Packets are announced to the peer when their head arrives (with the time
 * the tail will), so a switch can cut through.
 *
 * Events: a port's run in its node's context (SetContext), and an arrival at the peer
 * counts as made by this port when it sent (DeterministicScheduler::ScheduleArrival), so a
 * partitioned run breaks ties as one process does. When the peer is simulated by another
 * MPI rank, packets and FCPs go to it through SetToRank's callback (a RemotePortDevice) and
 * come back through ArriveFromRank.
 */
#ifndef FABEMU_IB_PORT_H
#define FABEMU_IB_PORT_H

#include "ns3/callback.h"
#include "ns3/data-rate.h"
#include "ns3/error-model.h"
#include "ns3/event-id.h"
#include "ns3/ib-headers.h"
#include "ns3/nstime.h"
#include "ns3/object.h"
#include "ns3/packet.h"
#include "ns3/traced-callback.h"
#include "ns3/tx-time-cache.h"

#include <array>
#include <deque>
#include <vector>

namespace ns3
{

class IbPort : public Object
{
  public:
    static constexpr uint8_t kMaxDataVls = 15;

    static TypeId GetTypeId();
    IbPort();

    /// Joins this port to \p peer by a cable of \p delay (call on both ends).
    void Attach(Ptr<IbPort> peer, Time delay);
    /// Sends the initial FCPs and starts the periodic ones; call once both ends are attached.
    void Start();
    /// This port's events run in context \p node (its ns-3 node's id); \p id tells it from
    /// every other port, alike on every rank of a partitioned run.
    void SetContext(uint32_t node, uint32_t id);
    /// The peer is simulated by another rank: \p toRank(packet, arrival) carries what this
    /// port sends there, the packet stamped with a RankSentTag (RemotePortDevice::SendToRank).
    void SetToRank(Callback<void, Ptr<Packet>, Time> toRank) { m_toRank = toRank; }
    /// What the peer on another rank sent arrives, with its RankSentTag's word
    /// (RemotePortDevice's arrival callback).
    void ArriveFromRank(Ptr<Packet> p, uint64_t word);

    /// Called when a packet's head arrives: (this port, packet, VL, time its tail arrives).
    using ReceiveCallback = Callback<void, Ptr<IbPort>, Ptr<Packet>, uint8_t, Time>;
    void SetReceiveCallback(ReceiveCallback cb) { m_receive = cb; }
    /// Called when a packet leaves a transmit queue (the owner may refill it).
    void SetDequeueCallback(Callback<void, uint8_t> cb) { m_dequeued = cb; }

    /**
     * \brief Queues \p p on \p vl.
     * \param notBefore earliest start (a switch's latency, or so that a cut-through
     *        packet never overtakes its own tail)
     * \param holder the input port whose buffer holds the packet, released when its
     *        tail has left (switches); null for a packet made here
     */
    void Enqueue(Ptr<Packet> p, uint8_t vl, Time notBefore, Ptr<IbPort> holder = nullptr,
                 uint8_t holderVl = 0);
    size_t GetQueuePackets(uint8_t vl) const { return m_tx.at(vl).queue.size(); }
    uint64_t GetQueueBytes(uint8_t vl) const { return m_tx.at(vl).queuedBytes; }
    /// Whether \p vl's head packet is waiting for credit (the port is a victim, not a root).
    bool IsCreditStalled(uint8_t vl) const;
    /// The input buffers (port, VL) holding packets queued on \p vl here: whose credit
    /// waits for this queue to move. Each once; none for packets made here.
    std::vector<std::pair<Ptr<IbPort>, uint8_t>> GetHolders(uint8_t vl) const;

    /// Gives back the receive-buffer blocks of a packet that arrived on \p vl.
    void Release(uint8_t vl, uint32_t blocks);

    DataRate GetDataRate() const { return m_rate; }
    /// The time this port takes to send \p bytes.
    Time WireTime(uint32_t bytes) const { return m_txTimes.Get(m_rate, bytes); }
    uint8_t GetNumDataVls() const { return m_numVls; }
    uint32_t GetBufferBlocks() const { return m_bufferBlocks; }
    Time GetDelay() const { return m_delay; }
    Ptr<IbPort> GetPeer() const { return m_peer; }
    /// Receive-buffer blocks in use on \p vl, and the most ever in use.
    uint32_t GetUsedBlocks(uint8_t vl) const { return m_rx.at(vl).used; }
    uint32_t GetPeakBlocks(uint8_t vl) const { return m_rx.at(vl).peak; }
    /// Times a packet arrived with no room for it (never, if credits work).
    uint64_t GetOverflows() const { return m_overflows; }
    /// Packets the ReceiveErrorModel corrupted: VCRC failed, dropped.
    uint64_t GetBitErrorDrops() const { return m_bitErrorDrops; }
    uint64_t GetCreditStalls() const { return m_stalls; }
    uint64_t GetFcpsSent() const { return m_fcpsSent; }
    uint64_t GetBytesSent(uint8_t vl) const { return m_tx.at(vl).bytesSent; }

    /// 64-byte blocks a packet of \p bytes takes (IBA counts the whole packet).
    static uint32_t Blocks(uint32_t bytes) { return (bytes + kIbCreditBytes - 1) / kIbCreditBytes; }

  protected:
    void DoDispose() override;

  private:
    struct Entry
    {
        Ptr<Packet> packet;
        uint32_t blocks;
        Time notBefore;
        Ptr<IbPort> holder;
        uint8_t holderVl;
    };
    struct TxVl
    {
        std::deque<Entry> queue;
        uint64_t queuedBytes{0};
        uint16_t fctbs{0}; ///< blocks sent, mod 4096
        uint16_t fccl{0};  ///< the peer's last advertised limit
        bool stalled{false};
        Time stallSince;
        uint64_t bytesSent{0};
    };
    struct RxVl
    {
        uint16_t abr{0}; ///< blocks received, mod 4096
        uint32_t used{0};
        uint32_t peak{0};
        bool dirty{true}; ///< an FCP is due
    };
    struct ArbEntry
    {
        uint8_t vl;
        uint32_t weight;
    };
    struct ArbTable
    {
        std::vector<ArbEntry> entries;
        size_t index{0};
        int64_t left{0}; ///< bytes the current entry may still send
    };

    /// Sends \p p (data on \p vl whose tail is \p wire behind its head, or an FCP when
    /// \p fcp is set) to the peer, to arrive \p delay from now.
    void ToPeer(Ptr<Packet> p, uint8_t vl, Time wire, const FcpHeader* fcp, Time delay);
    void ReceiveHead(Ptr<Packet> p, uint8_t vl, Time tail);
    void ReceiveFcp(FcpHeader h);
    void TrySend();
    bool Fits(uint8_t vl) const;
    bool Eligible(uint8_t vl) const;
    int Pick(ArbTable& table);
    int Arbitrate();
    void SendFcp(uint8_t vl, uint8_t op);
    void TxDone(); ///< the tail of m_onWire has left
    void OnFcpTimer();
    uint16_t Fccl(uint8_t vl) const;
    void NoteStall(uint8_t vl);
    void ParseTables();

    // Attributes
    DataRate m_rate;
    TxTimeCache m_txTimes; ///< WireTime of the last few sizes
    uint8_t m_numVls;
    uint32_t m_bufferBlocks;
    Time m_fcpInterval;
    std::string m_highSpec;
    std::string m_lowSpec;
    uint32_t m_highLimit;

    Ptr<IbPort> m_peer;
    Time m_delay;
    static constexpr uint32_t kNoContext = 0xffffffff; ///< SetContext not called
    uint32_t m_context{kNoContext};                    ///< SetContext's; none: the sender's
    uint32_t m_id{0};
    Callback<void, Ptr<Packet>, Time> m_toRank; ///< null: the peer is simulated here
    std::array<TxVl, kMaxDataVls> m_tx;
    std::array<RxVl, kMaxDataVls> m_rx;
    ArbTable m_high;
    ArbTable m_low;
    uint64_t m_highSent{0}; ///< high-priority bytes since the last low-priority packet
    bool m_busy{false};
    Entry m_onWire{}; ///< what is serialising (FCPs: empty)
    /// TxDone's event, scheduled again for every packet and FCP: one serialisation at a
    /// time, so one event, where a new one was allocated per packet (issue 22).
    Ptr<EventImpl> m_txDone;
    bool m_started{false};
    EventId m_retry;
    EventId m_fcpTimer;
    ReceiveCallback m_receive;
    Callback<void, uint8_t> m_dequeued;
    uint64_t m_overflows{0};
    Ptr<ErrorModel> m_receiveErrorModel; ///< null: every packet arrives whole
    uint64_t m_bitErrorDrops{0};
    TracedCallback<Ptr<const Packet>> m_phyRxDropTrace;
    uint64_t m_stalls{0};
    TracedCallback<uint8_t, uint32_t> m_bufferTrace; ///< (vl, blocks in use)
    uint64_t m_fcpsSent{0};

    TracedCallback<uint8_t, Time> m_stallTrace;               ///< VL, how long
    TracedCallback<uint8_t, uint16_t, uint16_t> m_fcpTxTrace; ///< VL, FCTBS, FCCL
    TracedCallback<uint8_t, uint16_t, uint16_t> m_fcpRxTrace;
    TracedCallback<Ptr<const Packet>> m_sniffer; ///< data packets sent
};

} // namespace ns3

#endif
