/*
 * A lossless-Ethernet port: eight priority queues, strict priority or DWRR
 * between them, and 802.1Qbb PFC. Used by host NICs and switch ports alike.
 *
 * The device does not drop: whoever enqueues (the switch's MMU, the host's
 * transport) decides admission. It honours received pause frames per
 * priority (a pause expires after its quanta unless refreshed; quanta 0
 * resumes) and sends pause frames ahead of all data when asked. Its PFC
 * watchdog (off by default) detects a pause storm, a priority held paused
 * without a break for PfcWatchdogTime while frames wait, and then ignores
 * that priority's pauses for PfcWatchdogRecovery (a switch port's "forward"
 * action; a NIC's only reports). A NIC gone wrong can be made to storm
 * (StartPauseStorm).
 */
#ifndef FABEMU_ROCE_NET_DEVICE_H
#define FABEMU_ROCE_NET_DEVICE_H

#include "ns3/data-rate.h"
#include "ns3/error-model.h"
#include "ns3/event-id.h"
#include "ns3/frame-queue.h"
#include "ns3/mac48-address.h"
#include "ns3/net-device.h"
#include "ns3/node.h"
#include "ns3/ring-queue.h"
#include "ns3/roce-frame.h"
#include "ns3/roce-port-owner.h"
#include "ns3/traced-callback.h"
#include "ns3/tx-time-cache.h"

#include <array>
#include <optional>

namespace ns3
{

class RoceChannel;

class alignas(64) RoceNetDevice : public NetDevice
{
  public:
    static constexpr uint8_t kPriorities = 8;

    /// How the transmitter chooses among priorities that have frames and are not paused.
    enum Scheduler : uint8_t
    {
        StrictPriority, ///< highest priority first
        Dwrr,           ///< deficit weighted round robin, weights per priority
    };

    /// What the PFC watchdog does for its recovery time once it has seen a storm.
    enum WatchdogAction
    {
        Forward, ///< the priority ignores pauses: its queue sends (SONiC's forward)
        Drop,    ///< the priority's queue is emptied and what arrives is dropped
    };

    /// Called for every received frame that is not PFC (PFC is handled here).
    using FrameCallback = Callback<void, Ptr<RoceNetDevice>, Ptr<Packet>, const ParsedFrame&>;
    /// Called when a queued data frame leaves its queue for the wire.
    using DequeueCallback = Callback<void, Ptr<RoceNetDevice>, Ptr<const Packet>, uint8_t>;
    /// Called with a data frame just taken from its queue, before it goes on the wire,
    /// so its owner may still change it (a switch marking ECN at dequeue).
    using BeforeTransmitCallback = Callback<void, Ptr<RoceNetDevice>, Ptr<Packet>, uint8_t>;

    static TypeId GetTypeId();
    RoceNetDevice();

    /// Queues a frame on a priority queue; starts sending if the wire is idle. \p from is
    /// the owner's word on the frame, kept beside it in the queue and handed back to the
    /// owner as it leaves (RocePortOwner::FrameDequeued): a switch's is the port it came
    /// in by.
    void Enqueue(Ptr<Packet> frame, uint8_t priority, uint16_t from = 0);
    /// Sends a PFC frame for one priority ahead of all data (\p quanta 0 resumes).
    void SendPause(uint8_t priority, uint16_t quanta);
    bool IsPaused(uint8_t priority) const;
    uint64_t GetQueueBytes(uint8_t priority) const { return m_prio[priority].queueBytes; }
    uint32_t GetQueueFrames(uint8_t priority) const
    {
        return static_cast<uint32_t>(m_prio[priority].queue.size());
    }
    /// How many of the frames waiting on \p priority are kept as bytes (FrameQueue).
    uint32_t GetQueueCompacted(uint8_t priority) const
    {
        return static_cast<uint32_t>(m_prio[priority].queue.GetCompacted());
    }
    /// Whether a frame enqueued with \p from waits on \p priority.
    bool IsHolding(uint8_t priority, uint16_t from) const
    {
        return m_prio[priority].queue.Holds(from);
    }
    bool IsBusy() const { return m_busy; }
    /// Data frames that have left their priority queues for the wire (each a MacTx), so
    /// far: a count kept without a trace connection, so reading it costs the model nothing.
    uint64_t GetDataFramesSent() const { return m_dataFramesSent; }
    /// Pause storms the watchdog has reported (PfcWatchdogTime > 0): its triggers.
    uint64_t GetPfcStorms() const { return m_pfcStorms; }
    /// Frames the watchdog's Drop action threw away.
    uint64_t GetWatchdogDrops() const { return m_watchdogDrops; }
    /// A NIC gone wrong: sends PFC pauses of the longest quanta for every priority,
    /// refreshed before they run out, for \p duration from now; then stops (the last
    /// pauses run out).
    void StartPauseStorm(Time duration);
    DataRate GetDataRate() const { return m_rate; }
    void SetDataRate(DataRate rate) { m_rate = rate; }
    /// Frames the ReceiveErrorModel corrupted, dropped at the MAC (they fail the FCS).
    uint64_t GetBitErrorDrops() const { return m_bitErrorDrops; }
    void SetScheduler(Scheduler s) { m_scheduler = s; }
    void SetDwrrWeight(uint8_t priority, uint32_t weight);

    /// Bytes a frame of \p frameBytes (no FCS) takes on the wire: min-size padding,
    /// FCS, preamble + SFD and inter-frame gap included.
    static uint32_t WireBytes(uint32_t frameBytes);
    Time WireTime(uint32_t frameBytes) const;

    /**
     * Hands this port's frames to \p owner (a switch or a NIC), which knows the port as
     * \p port: called directly, in place of the three callbacks below (RocePortOwner).
     * Null lets go of it.
     */
    void SetOwner(RocePortOwner* owner, uint32_t port);

    void SetFrameCallback(FrameCallback cb) { m_frameCallback = cb; }
    void SetDequeueCallback(DequeueCallback cb) { m_dequeueCallback = cb; }
    void SetBeforeTransmitCallback(BeforeTransmitCallback cb) { m_beforeTransmit = cb; }

    /// Cable end: called by RoceChannel when a frame has fully arrived.
    void Receive(Ptr<Packet> frame);
    void Attach(Ptr<RoceChannel> channel);

    // NetDevice
    void SetIfIndex(const uint32_t index) override { m_ifIndex = index; }
    uint32_t GetIfIndex() const override { return m_ifIndex; }
    Ptr<Channel> GetChannel() const override;
    void SetAddress(Address address) override;
    Address GetAddress() const override { return m_address; }
    bool SetMtu(const uint16_t mtu) override;
    uint16_t GetMtu() const override { return m_mtu; }
    bool IsLinkUp() const override;
    void AddLinkChangeCallback(Callback<void> callback) override;
    bool IsBroadcast() const override { return true; }
    Address GetBroadcast() const override { return Mac48Address::GetBroadcast(); }
    bool IsMulticast() const override { return true; }
    Address GetMulticast(Ipv4Address group) const override;
    Address GetMulticast(Ipv6Address addr) const override;
    bool IsBridge() const override { return false; }
    /// A full-duplex cable to one peer (ns-3's distributed simulator takes its lookahead from
    /// such links' delays).
    bool IsPointToPoint() const override { return true; }
    bool Send(Ptr<Packet> packet, const Address& dest, uint16_t protocolNumber) override;
    bool SendFrom(Ptr<Packet> packet, const Address& source, const Address& dest,
                  uint16_t protocolNumber) override;
    Ptr<Node> GetNode() const override { return m_node; }
    void SetNode(Ptr<Node> node) override { m_node = node; }
    bool NeedsArp() const override { return false; }
    void SetReceiveCallback(NetDevice::ReceiveCallback cb) override { m_rxCallback = cb; }
    void SetPromiscReceiveCallback(PromiscReceiveCallback cb) override { m_promiscCallback = cb; }
    bool SupportsSendFrom() const override { return true; }

  protected:
    void DoDispose() override;

  private:
    void TryTransmit();
    void StartTransmission(Ptr<Packet> frame);
    void TransmitComplete();
    void HandlePfc(const ParsedFrame& f);
    /// The next priority to serve, or kPriorities when none may send now.
    uint8_t PickPriority();
    void ScheduleResume();
    /// After a frame left \p priority's queue: its bit in m_backlogged off if it is empty.
    void NoteEmptied(uint8_t priority);
    /// Throws away \p frame of priority \p prio (enqueued with \p from) for the watchdog
    /// (counted, traced, told to the owner, and handed to Dequeued, so the owner's buffer
    /// is freed as if it left).
    void WatchdogDrop(Ptr<Packet> frame, uint8_t prio, uint16_t from);
    /// Tells the owner, or else the dequeue callback, that \p frame has left its queue.
    void Dequeued(const Ptr<Packet>& frame, uint8_t prio, uint16_t from);
    void NextTurn();
    /// One round of a pause storm: pauses for every priority, the next round scheduled
    /// until m_stormUntil.
    void StormRound();

    // What every frame through the port reads or writes comes first, in the cache lines
    // that each of its steps reads: a large fabric's ports are out of the caches when a
    // frame comes, and each line apart is a miss (issue 22: the growth per packet-hop).
    // The class is aligned to a line, so that the lines are these:
    // - after the object's own 32 bytes, what receiving and sending both read, and all
    //   that a transmission's end reads when nothing waits;
    Ptr<RoceChannel> m_channel;
    RocePortOwner* m_owner{nullptr}; ///< see SetOwner; it outlives the port's traffic
    uint32_t m_ownerPort{0};         ///< what the owner calls this port
    bool m_busy{false};
    bool m_controlWaiting{false}; ///< m_control holds a frame
    /// Bit p set while priority p's queue holds a frame: the strict-priority pick reads
    /// this byte, not the eight queues.
    uint8_t m_backlogged{0};
    Scheduler m_scheduler{Scheduler::StrictPriority};
    Ptr<ErrorModel> m_receiveErrorModel; ///< null: every frame arrives whole
    // - the traces a frame's arrival asks about, what an enqueue reads after its attempt
    //   to send, and the end of a transmission;
    TracedCallback<Ptr<const Packet>> m_snifferTrace;
    TracedCallback<Ptr<const Packet>> m_macRxTrace;
    uint32_t m_compactionDepth{8}; ///< ... when at least this many wait before them
    bool m_compactWaiting{true};   ///< keep waiting simulated frames as bytes
    uint8_t m_dropping{0};         ///< bit p set once priority p's m_dropUntil was set
    /// TransmitComplete's event, scheduled again for every frame: one serialisation at a
    /// time, so one event, where a new one was allocated per frame (issue 22).
    Ptr<EventImpl> m_transmitComplete;
    // - a frame's time on the wire;
    TxTimeCache m_txTimes; ///< WireTime of the last few frame sizes
    DataRate m_rate;
    // - the rest of a transmission;
    RingQueue<Ptr<Packet>> m_control; ///< PFC frames: never paused, sent first
    uint64_t m_dataFramesSent{0};
    TracedCallback<Ptr<const Packet>, uint8_t> m_macTxTrace;
    // - and a line for each priority.
    /// A priority's state that a frame reads, together: one cache line, not two.
    struct alignas(64) PriorityState
    {
        /// A ring that allocates nothing until used (most of a large fabric's queues stay
        /// empty) and keeps its room after; a waiting simulated frame kept as its bytes.
        FrameQueue queue;
        uint64_t queueBytes{0};
        Time pausedUntil;
    };
    std::array<PriorityState, kPriorities> m_prio{};
    std::array<Time, kPriorities> m_dropUntil{}; ///< the Drop action's recovery, by priority

    Ptr<Node> m_node;
    Mac48Address m_address;
    uint32_t m_ifIndex{0};
    uint16_t m_mtu{9000};
    uint64_t m_bitErrorDrops{0};
    TracedCallback<Ptr<const Packet>> m_phyRxDropTrace;
    bool m_pfcEnabled{true};
    uint32_t m_dwrrQuantum{9000};

    std::array<std::optional<Time>, kPriorities>
        m_pauseStart; ///< since when paused without a break
    std::array<bool, kPriorities> m_stormReported{};
    std::array<Time, kPriorities> m_ignoreUntil{}; ///< the watchdog's recovery, by priority
    Time m_watchdogTime;
    Time m_watchdogRecovery;
    WatchdogAction m_watchdogAction{Forward};
    uint64_t m_watchdogDrops{0};
    TracedCallback<Ptr<const Packet>, uint8_t> m_watchdogDropTrace;
    EventId m_stormEvent;
    Time m_stormUntil;
    TracedCallback<uint8_t, uint16_t> m_pfcIgnoredTrace;
    uint64_t m_pfcStorms{0};
    EventId m_resumeEvent;

    std::array<int64_t, kPriorities> m_deficit{};
    std::array<uint32_t, kPriorities> m_weight{1, 1, 1, 1, 1, 1, 1, 1};
    uint8_t m_rrNext{0};
    bool m_turnStarted{false};

    FrameCallback m_frameCallback;
    DequeueCallback m_dequeueCallback;
    BeforeTransmitCallback m_beforeTransmit;
    NetDevice::ReceiveCallback m_rxCallback;
    PromiscReceiveCallback m_promiscCallback;

    TracedCallback<uint8_t, uint16_t> m_pfcRxTrace;
    TracedCallback<uint8_t, uint16_t> m_pfcTxTrace;
    TracedCallback<uint8_t, Time> m_stormTrace;
};

} // namespace ns3

#endif
