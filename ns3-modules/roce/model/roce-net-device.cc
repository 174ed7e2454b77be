#include "ns3/roce-net-device.h"

#include "ns3/abort.h"
#include "ns3/boolean.h"
#include "ns3/enum.h"
#include "ns3/ethernet-header.h"
#include "ns3/log.h"
#include "ns3/pfc-header.h"
#include "ns3/pointer.h"
#include "ns3/roce-channel.h"
#include "ns3/roce-packet.h"
#include "ns3/simulator-impl-cache.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("RoceNetDevice");
NS_OBJECT_ENSURE_REGISTERED(RoceNetDevice);

namespace
{
constexpr uint32_t kMinFrameNoFcs = 60;
constexpr uint32_t kFcs = 4;
constexpr uint32_t kPreambleSfd = 8;
constexpr uint32_t kInterFrameGap = 12;
} // namespace

TypeId
RoceNetDevice::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::RoceNetDevice")
            .SetParent<NetDevice>()
            .SetGroupName("Roce")
            .AddConstructor<RoceNetDevice>()
            .AddAttribute("DataRate", "Line rate of the port", DataRateValue(DataRate("100Gbps")),
                          MakeDataRateAccessor(&RoceNetDevice::m_rate), MakeDataRateChecker())
            .AddAttribute("Mtu", "IP MTU of the port, bytes", UintegerValue(9000),
                          MakeUintegerAccessor(&RoceNetDevice::SetMtu, &RoceNetDevice::GetMtu),
                          MakeUintegerChecker<uint16_t>(68, 9216))
            .AddAttribute("PfcEnabled", "Honour received 802.1Qbb pause frames", BooleanValue(true),
                          MakeBooleanAccessor(&RoceNetDevice::m_pfcEnabled), MakeBooleanChecker())
            .AddAttribute("PfcWatchdogTime",
                          "Detect a pause storm once a priority has been paused without a "
                          "break this long with frames waiting (0: watchdog off)",
                          TimeValue(Time(0)), MakeTimeAccessor(&RoceNetDevice::m_watchdogTime),
                          MakeTimeChecker(Time(0)))
            .AddAttribute("PfcWatchdogRecovery",
                          "Once the watchdog fires, the priority ignores pauses this long (0: "
                          "report only, as a NIC does; a RoceSwitch gives its ports its own)",
                          TimeValue(Time(0)), MakeTimeAccessor(&RoceNetDevice::m_watchdogRecovery),
                          MakeTimeChecker(Time(0)))
            .AddAttribute("PfcWatchdogAction",
                          "What the watchdog's recovery does: Forward (ignore pauses, send) or "
                          "Drop (empty the priority's queue and drop what arrives)",
                          EnumValue(Forward), MakeEnumAccessor(&RoceNetDevice::m_watchdogAction),
                          MakeEnumChecker(Forward, "Forward", Drop, "Drop"))
            .AddAttribute("Scheduler", "How the transmitter chooses among priorities",
                          EnumValue(Scheduler::StrictPriority),
                          MakeEnumAccessor(&RoceNetDevice::m_scheduler),
                          MakeEnumChecker(Scheduler::StrictPriority, "StrictPriority",
                                          Scheduler::Dwrr, "Dwrr"))
            .AddAttribute("DwrrQuantum", "Bytes a priority of weight 1 may send per DWRR round",
                          UintegerValue(9000), MakeUintegerAccessor(&RoceNetDevice::m_dwrrQuantum),
                          MakeUintegerChecker<uint32_t>(64))
            .AddAttribute("CompactWaitingFrames",
                          "Keep a simulated frame that waits in a priority queue as its header "
                          "and trailer bytes, not as a Packet (FrameQueue): the same frames "
                          "leave, in less memory",
                          BooleanValue(true), MakeBooleanAccessor(&RoceNetDevice::m_compactWaiting),
                          MakeBooleanChecker())
            .AddAttribute("CompactionDepth",
                          "With CompactWaitingFrames, a frame is kept as bytes only when at "
                          "least this many frames wait before it on its priority: one that "
                          "leaves soon would be copied for nothing",
                          UintegerValue(8), MakeUintegerAccessor(&RoceNetDevice::m_compactionDepth),
                          MakeUintegerChecker<uint32_t>())
            .AddAttribute("ReceiveErrorModel",
                          "Corrupts received frames (e.g. a RateErrorModel in bits); a corrupt "
                          "frame fails its FCS and is dropped",
                          PointerValue(), MakePointerAccessor(&RoceNetDevice::m_receiveErrorModel),
                          MakePointerChecker<ErrorModel>())
            .AddTraceSource("PhyRxDrop", "A frame dropped on arrival, corrupt",
                            MakeTraceSourceAccessor(&RoceNetDevice::m_phyRxDropTrace),
                            "ns3::Packet::TracedCallback")
            .AddTraceSource("PfcPauseReceived",
                            "A PFC frame paused (quanta > 0) or resumed (0) a priority",
                            MakeTraceSourceAccessor(&RoceNetDevice::m_pfcRxTrace),
                            "ns3::RoceNetDevice::PfcTracedCallback")
            .AddTraceSource("PfcPauseSent",
                            "This port sent a PFC frame for a priority (quanta 0: resume)",
                            MakeTraceSourceAccessor(&RoceNetDevice::m_pfcTxTrace),
                            "ns3::RoceNetDevice::PfcTracedCallback")
            .AddTraceSource("PfcPauseIgnored", "A PFC frame the watchdog's recovery did not honour",
                            MakeTraceSourceAccessor(&RoceNetDevice::m_pfcIgnoredTrace),
                            "ns3::RoceNetDevice::PfcTracedCallback")
            .AddTraceSource("PfcStorm",
                            "The PFC watchdog saw a pause storm: (priority, paused for)",
                            MakeTraceSourceAccessor(&RoceNetDevice::m_stormTrace),
                            "ns3::RoceNetDevice::StormTracedCallback")
            .AddTraceSource("PfcWatchdogDrop",
                            "A frame the watchdog's Drop action threw away: (frame, priority)",
                            MakeTraceSourceAccessor(&RoceNetDevice::m_watchdogDropTrace),
                            "ns3::RoceNetDevice::FramePriorityTracedCallback")
            .AddTraceSource("Sniffer", "Every frame sent or received, PFC included (for pcap)",
                            MakeTraceSourceAccessor(&RoceNetDevice::m_snifferTrace),
                            "ns3::Packet::TracedCallback")
            .AddTraceSource("MacTx", "A data frame leaves its priority queue for the wire",
                            MakeTraceSourceAccessor(&RoceNetDevice::m_macTxTrace),
                            "ns3::RoceNetDevice::FramePriorityTracedCallback")
            .AddTraceSource("MacRx", "A data frame arrived",
                            MakeTraceSourceAccessor(&RoceNetDevice::m_macRxTrace),
                            "ns3::Packet::TracedCallback");
    return tid;
}

RoceNetDevice::RoceNetDevice()
    : m_transmitComplete(MakeEvent(&RoceNetDevice::TransmitComplete, this), false)
{
    NS_LOG_FUNCTION(this);
}

void
RoceNetDevice::DoDispose()
{
    m_resumeEvent.Cancel();
    m_stormEvent.Cancel();
    m_channel = nullptr;
    m_node = nullptr;
    for (auto& state : m_prio)
    {
        state.queue.clear();
    }
    m_backlogged = 0;
    m_control.clear();
    m_controlWaiting = false;
    m_owner = nullptr;
    m_frameCallback = FrameCallback();
    m_dequeueCallback = DequeueCallback();
    m_beforeTransmit = BeforeTransmitCallback();
    NetDevice::DoDispose();
}

uint32_t
RoceNetDevice::WireBytes(uint32_t frameBytes)
{
    return std::max(frameBytes, kMinFrameNoFcs) + kFcs + kPreambleSfd + kInterFrameGap;
}

Time
RoceNetDevice::WireTime(uint32_t frameBytes) const
{
    return m_txTimes.Get(m_rate, WireBytes(frameBytes));
}

void
RoceNetDevice::SetDwrrWeight(uint8_t priority, uint32_t weight)
{
    NS_ABORT_MSG_IF(priority >= kPriorities, "priority " << +priority << " out of range 0..7");
    NS_ABORT_MSG_IF(weight == 0, "a DWRR weight must be at least 1");
    m_weight[priority] = weight;
}

void
RoceNetDevice::Attach(Ptr<RoceChannel> channel)
{
    m_channel = channel;
    channel->Attach(this);
}

void
RoceNetDevice::Enqueue(Ptr<Packet> frame, uint8_t priority, uint16_t from)
{
    NS_LOG_FUNCTION(this << frame << +priority);
    NS_ABORT_MSG_IF(priority >= kPriorities, "priority " << +priority << " out of range 0..7");
    // (Simulator::Now() is a call into ns-3: asked only when a recovery was ever set.)
    if (((m_dropping >> priority) & 1) != 0 && m_dropUntil[priority] > Simulator::Now())
    {
        WatchdogDrop(frame, priority, from); // the watchdog's Drop action is recovering
        return;
    }
    m_prio[priority].queue.Push(frame, from);
    m_backlogged |= uint8_t(1U << priority);
    m_prio[priority].queueBytes += frame->GetSize();
    TryTransmit();
    if (m_compactWaiting && m_prio[priority].queue.size() > m_compactionDepth)
    {
        m_prio[priority].queue.CompactBack(); // if it did not leave at once, it waits as bytes
    }
}

void
RoceNetDevice::SendPause(uint8_t priority, uint16_t quanta)
{
    NS_LOG_FUNCTION(this << +priority << quanta);
    PfcHeader pfc;
    pfc.SetPause(priority, quanta);
    Ptr<Packet> p = Create<Packet>();
    p->AddHeader(pfc);
    EthernetHeader eth(false);
    eth.SetDestination(PfcHeader::DestinationAddress());
    eth.SetSource(m_address);
    eth.SetLengthType(kEtherTypeMacControl);
    p->AddHeader(eth);
    m_control.push_back(p);
    m_controlWaiting = true;
    m_pfcTxTrace(priority, quanta);
    TryTransmit();
}

bool
RoceNetDevice::IsPaused(uint8_t priority) const
{
    // Never paused (zero): no need to ask the simulator the time.
    return m_prio[priority].pausedUntil.IsStrictlyPositive() &&
           m_prio[priority].pausedUntil > Simulator::Now();
}

uint8_t
RoceNetDevice::PickPriority()
{
    if (m_scheduler == Scheduler::StrictPriority)
    {
        // The backlogged priorities, highest first.
        for (unsigned bits = m_backlogged; bits != 0;)
        {
            const auto p = static_cast<uint8_t>(31 - __builtin_clz(bits));
            if (!IsPaused(p))
            {
                return p;
            }
            bits &= ~(1U << p);
        }
        return kPriorities;
    }
    // DWRR: each eligible priority in turn gets weight x quantum bytes of credit
    // once per turn and sends while its head frame fits; then the next one's turn.
    for (int visits = 0; visits < 2 * kPriorities + 1; ++visits)
    {
        const uint8_t p = m_rrNext;
        if (m_prio[p].queue.empty() || IsPaused(p))
        {
            if (m_prio[p].queue.empty())
            {
                m_deficit[p] = 0;
            }
            NextTurn();
            continue;
        }
        if (!m_turnStarted)
        {
            m_deficit[p] += static_cast<int64_t>(m_weight[p]) * m_dwrrQuantum;
            m_turnStarted = true;
        }
        const int64_t head = m_prio[p].queue.FrontSize();
        if (m_deficit[p] >= head)
        {
            m_deficit[p] -= head;
            return p;
        }
        NextTurn();
    }
    return kPriorities;
}

void
RoceNetDevice::NextTurn()
{
    m_rrNext = (m_rrNext + 1) % kPriorities;
    m_turnStarted = false;
}

void
RoceNetDevice::TryTransmit()
{
    if (m_busy || !m_channel)
    {
        return;
    }
    if (m_controlWaiting)
    {
        Ptr<Packet> p = m_control.front();
        m_control.pop_front();
        m_controlWaiting = !m_control.empty();
        StartTransmission(p);
        return;
    }
    const uint8_t prio = PickPriority();
    if (prio == kPriorities)
    {
        ScheduleResume();
        return;
    }
    const uint16_t from = m_prio[prio].queue.FrontFrom();
    Ptr<Packet> p = m_prio[prio].queue.Pop();
    NoteEmptied(prio);
    m_prio[prio].queueBytes -= p->GetSize();
    if (m_owner != nullptr)
    {
        m_owner->BeforeTransmit(m_ownerPort, p, prio); // may rewrite bytes, never the size
    }
    else if (!m_beforeTransmit.IsNull())
    {
        m_beforeTransmit(this, p, prio);
    }
    // On the wire first: an owner may enqueue again from the callbacks below.
    StartTransmission(p);
    ++m_dataFramesSent;
    if (!m_macTxTrace.IsEmpty()) // an empty trace's call still copies a Ptr: two writes to p
    {
        m_macTxTrace(p, prio);
    }
    Dequeued(p, prio, from);
}

void
RoceNetDevice::WatchdogDrop(Ptr<Packet> frame, uint8_t prio, uint16_t from)
{
    ++m_watchdogDrops;
    m_watchdogDropTrace(frame, prio);
    if (m_owner != nullptr)
    {
        m_owner->WatchdogDropped(m_ownerPort, frame, prio, from);
    }
    Dequeued(frame, prio, from);
}

void
RoceNetDevice::Dequeued(const Ptr<Packet>& frame, uint8_t prio, uint16_t from)
{
    if (m_owner != nullptr)
    {
        m_owner->FrameDequeued(m_ownerPort, frame, prio, from);
    }
    else if (!m_dequeueCallback.IsNull())
    {
        m_dequeueCallback(this, frame, prio);
    }
}

void
RoceNetDevice::NoteEmptied(uint8_t priority)
{
    if (m_prio[priority].queue.empty())
    {
        m_backlogged &= uint8_t(~(1U << priority));
    }
}

void
RoceNetDevice::ScheduleResume()
{
    // Frames wait behind a pause: wake when the earliest such pause expires.
    if (m_backlogged == 0)
    {
        return; // nothing waits (every transmission's end with an empty queue comes here)
    }
    Time earliest = Time::Max();
    for (uint8_t p = 0; p < kPriorities; ++p)
    {
        if (((m_backlogged >> p) & 1) != 0 && IsPaused(p))
        {
            earliest = std::min(earliest, m_prio[p].pausedUntil);
        }
    }
    if (earliest == Time::Max())
    {
        return;
    }
    m_resumeEvent.Cancel();
    m_resumeEvent =
        Simulator::Schedule(earliest - Simulator::Now(), &RoceNetDevice::TryTransmit, this);
}

void
RoceNetDevice::StartTransmission(Ptr<Packet> frame)
{
    m_busy = true;
    const Time tx = WireTime(frame->GetSize());
    if (!m_snifferTrace.IsEmpty())
    {
        m_snifferTrace(frame);
    }
    m_channel->Transmit(frame, this, tx);
    // The port's one end-of-transmit event, referenced again for this run (the simulator
    // drops the reference once it is run). With the running context, as Schedule would
    // give it, but without the EventId that Schedule makes and nobody keeps, nor the
    // lookup and log check of a Simulator:: call.
    m_transmitComplete->Ref();
    SimulatorImplCache::ScheduleWithContext(SimulatorImplCache::GetContext(), tx,
                                            PeekPointer(m_transmitComplete));
}

void
RoceNetDevice::TransmitComplete()
{
    m_busy = false;
    TryTransmit();
}

void
RoceNetDevice::SetOwner(RocePortOwner* owner, uint32_t port)
{
    m_owner = owner;
    m_ownerPort = port;
}

void
RoceNetDevice::Receive(Ptr<Packet> frame)
{
    NS_LOG_FUNCTION(this << frame);
    if (m_receiveErrorModel && m_receiveErrorModel->IsCorrupt(frame))
    {
        ++m_bitErrorDrops;
        m_phyRxDropTrace(frame);
        return;
    }
    if (!m_snifferTrace.IsEmpty())
    {
        m_snifferTrace(frame);
    }
    const ParsedFrame f = PeekFrame(frame);
    if (f.kind == FrameKind::Pfc)
    {
        HandlePfc(f);
        return;
    }
    if (!m_macRxTrace.IsEmpty())
    {
        m_macRxTrace(frame);
    }
    if (m_owner != nullptr)
    {
        m_owner->FrameReceived(m_ownerPort, frame, f);
        return;
    }
    if (!m_frameCallback.IsNull())
    {
        m_frameCallback(this, frame, f);
        return;
    }
    if (!m_rxCallback.IsNull() && f.kind != FrameKind::Malformed)
    {
        EthernetHeader eth(false);
        Ptr<Packet> copy = frame->Copy();
        copy->RemoveHeader(eth);
        m_rxCallback(this, copy, eth.GetLengthType(), eth.GetSource());
    }
}

void
RoceNetDevice::HandlePfc(const ParsedFrame& f)
{
    if (!m_pfcEnabled)
    {
        return;
    }
    for (uint8_t p = 0; p < kPriorities; ++p)
    {
        if (!((f.pfcClassEnable >> p) & 1))
        {
            continue;
        }
        const uint16_t quanta = f.pfcQuanta[p];
        const Time now = Simulator::Now();
        if (m_ignoreUntil[p] > now)
        {
            m_pfcIgnoredTrace(p, quanta); // the watchdog's recovery: seen, not honoured
            continue;
        }
        if (quanta == 0 || !IsPaused(p))
        {
            m_pauseStart[p].reset(); // resumed, or the last pause had run out: a break
            m_stormReported[p] = false;
        }
        m_prio[p].pausedUntil = now + PfcHeader::QuantaToTime(quanta, m_rate);
        if (quanta > 0 && !m_pauseStart[p] && m_dropUntil[p] <= now)
        {
            m_pauseStart[p] = now; // (a Drop recovery is no pause: detection starts after it)
        }
        if (m_watchdogTime.IsStrictlyPositive() && m_pauseStart[p] && !m_stormReported[p] &&
            !m_prio[p].queue.empty() && now - *m_pauseStart[p] >= m_watchdogTime)
        {
            m_stormReported[p] = true;
            ++m_pfcStorms;
            m_stormTrace(p, now - *m_pauseStart[p]);
            if (m_watchdogRecovery.IsStrictlyPositive() && m_watchdogAction == Drop)
            {
                // Mitigation by loss: what waits is dropped, and what comes until recovery
                // ends; the pauses are still honoured (there is nothing left to send).
                m_dropUntil[p] = now + m_watchdogRecovery;
                m_dropping |= uint8_t(1U << p);
                m_pauseStart[p].reset();
                m_stormReported[p] = false;
                while (!m_prio[p].queue.empty())
                {
                    const uint16_t from = m_prio[p].queue.FrontFrom();
                    Ptr<Packet> frame = m_prio[p].queue.Pop();
                    NoteEmptied(p);
                    m_prio[p].queueBytes -= frame->GetSize();
                    WatchdogDrop(frame, p, from);
                }
            }
            else if (m_watchdogRecovery.IsStrictlyPositive())
            {
                // Mitigation: the queue sends again, pauses ignored until recovery ends.
                m_ignoreUntil[p] = now + m_watchdogRecovery;
                m_prio[p].pausedUntil = now;
                m_pauseStart[p].reset();
                m_stormReported[p] = false;
                m_pfcIgnoredTrace(p, quanta);
                continue;
            }
        }
        m_pfcRxTrace(p, quanta);
    }
    TryTransmit();
}

void
RoceNetDevice::StartPauseStorm(Time duration)
{
    // Overlapping storms make one that lasts until the later ends.
    const bool running = m_stormEvent.IsRunning();
    m_stormUntil = std::max(m_stormUntil, Simulator::Now() + duration);
    if (!running)
    {
        StormRound();
    }
}

void
RoceNetDevice::StormRound()
{
    const Time until = m_stormUntil;
    if (Simulator::Now() >= until)
    {
        return;
    }
    for (uint8_t p = 0; p < kPriorities; ++p)
    {
        SendPause(p, 0xffff);
    }
    // Refreshed at half the pause's length, as a paused sender's PFC keeps it paused.
    const Time refresh = PfcHeader::QuantaToTime(0xffff, m_rate) / 2;
    m_stormEvent = Simulator::Schedule(std::min(refresh, until - Simulator::Now()),
                                       &RoceNetDevice::StormRound, this);
}

Ptr<Channel>
RoceNetDevice::GetChannel() const
{
    return m_channel;
}

void
RoceNetDevice::SetAddress(Address address)
{
    m_address = Mac48Address::ConvertFrom(address);
}

bool
RoceNetDevice::SetMtu(const uint16_t mtu)
{
    m_mtu = mtu;
    return true;
}

bool
RoceNetDevice::IsLinkUp() const
{
    return m_channel && m_channel->GetNDevices() == 2;
}

void
RoceNetDevice::AddLinkChangeCallback(Callback<void> /*callback*/)
{
    // Links in this model never change state.
}

Address
RoceNetDevice::GetMulticast(Ipv4Address group) const
{
    return Mac48Address::GetMulticast(group);
}

Address
RoceNetDevice::GetMulticast(Ipv6Address addr) const
{
    return Mac48Address::GetMulticast(addr);
}

bool
RoceNetDevice::Send(Ptr<Packet> packet, const Address& dest, uint16_t protocolNumber)
{
    return SendFrom(packet, m_address, dest, protocolNumber);
}

bool
RoceNetDevice::SendFrom(Ptr<Packet> packet, const Address& source, const Address& dest,
                        uint16_t protocolNumber)
{
    if (packet->GetSize() > m_mtu)
    {
        return false;
    }
    EthernetHeader eth(false);
    eth.SetSource(Mac48Address::ConvertFrom(source));
    eth.SetDestination(Mac48Address::ConvertFrom(dest));
    eth.SetLengthType(protocolNumber);
    packet->AddHeader(eth);
    Enqueue(packet, 0);
    return true;
}

} // namespace ns3
