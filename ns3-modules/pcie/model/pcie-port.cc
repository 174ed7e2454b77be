#include "ns3/pcie-port.h"

#include "ns3/log.h"
#include "ns3/pcie-link.h"
#include "ns3/pcie-spec.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

#include <algorithm>
#include <cmath>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("PciePort");
NS_OBJECT_ENSURE_REGISTERED(PciePort);

namespace
{
int
HeaderClass(PcieFcType t)
{
    return 2 * int(t);
}

int
DataClass(PcieFcType t)
{
    return 2 * int(t) + 1;
}
} // namespace

TypeId
PciePort::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::PciePort")
            .SetParent<Object>()
            .SetGroupName("Pcie")
            .AddConstructor<PciePort>()
            .AddAttribute("MaxPayloadSize",
                          "Max Payload Size in bytes (128 << n, up to 4096); sets the timers too",
                          UintegerValue(256), MakeUintegerAccessor(&PciePort::m_mps),
                          MakeUintegerChecker<uint32_t>())
            .AddAttribute("ReplayBufferTlps",
                          "TLPs the replay buffer holds; a full buffer stops new TLPs until an Ack",
                          UintegerValue(256), MakeUintegerAccessor(&PciePort::m_replayBufferTlps),
                          MakeUintegerChecker<uint32_t>(1, 2048))
            .AddAttribute(
                "AckCoalesceTlps",
                "An Ack goes at once when this many received TLPs are not yet acknowledged",
                UintegerValue(8), MakeUintegerAccessor(&PciePort::m_ackCoalesce),
                MakeUintegerChecker<uint32_t>(1, 2048))
            .AddAttribute("AckLatency",
                          "Longest an Ack waits after the first unacknowledged TLP; 0: the spec's "
                          "limit ((MPS+28)*AckFactor/width + InternalDelay) symbol times",
                          TimeValue(Time(0)), MakeTimeAccessor(&PciePort::m_ackLatency),
                          MakeTimeChecker(Time(0)))
            .AddAttribute("ReplayTimeout",
                          "REPLAY_TIMER limit; 0: 3 x the spec's Ack latency limit plus the "
                          "round-trip propagation delay",
                          TimeValue(Time(0)), MakeTimeAccessor(&PciePort::m_replayTimeout),
                          MakeTimeChecker(Time(0)))
            .AddAttribute("InitPH", "Posted header credits this port advertises (0: infinite)",
                          UintegerValue(64), MakeUintegerAccessor(&PciePort::m_initPH),
                          MakeUintegerChecker<uint32_t>())
            .AddAttribute("InitPD",
                          "Posted data credits of 16 B this port advertises (0: infinite)",
                          UintegerValue(1024), MakeUintegerAccessor(&PciePort::m_initPD),
                          MakeUintegerChecker<uint32_t>())
            .AddAttribute("InitNPH", "Non-posted header credits (0: infinite)", UintegerValue(64),
                          MakeUintegerAccessor(&PciePort::m_initNPH),
                          MakeUintegerChecker<uint32_t>())
            .AddAttribute("InitNPD", "Non-posted data credits of 16 B (0: infinite)",
                          UintegerValue(64), MakeUintegerAccessor(&PciePort::m_initNPD),
                          MakeUintegerChecker<uint32_t>())
            .AddAttribute("InitCplH",
                          "Completion header credits (0: infinite, as endpoints must advertise)",
                          UintegerValue(0), MakeUintegerAccessor(&PciePort::m_initCplH),
                          MakeUintegerChecker<uint32_t>())
            .AddAttribute(
                "InitCplD",
                "Completion data credits of 16 B (0: infinite, as endpoints must advertise)",
                UintegerValue(0), MakeUintegerAccessor(&PciePort::m_initCplD),
                MakeUintegerChecker<uint32_t>())
            .AddTraceSource("TlpTx", "A TLP started on the wire: (TLP, whether a replay)",
                            MakeTraceSourceAccessor(&PciePort::m_tlpTxTrace),
                            "ns3::PciePort::TlpTxTracedCallback")
            .AddTraceSource("TlpRx", "A TLP received good and in order, passed up once",
                            MakeTraceSourceAccessor(&PciePort::m_tlpRxTrace),
                            "ns3::PciePort::TlpTracedCallback")
            .AddTraceSource("LcrcError", "A TLP arrived with a bit error and was dropped",
                            MakeTraceSourceAccessor(&PciePort::m_lcrcErrorTrace),
                            "ns3::PciePort::TlpTracedCallback")
            .AddTraceSource("DllpTx", "A DLLP sent (Ack, Nak, InitFC, UpdateFC)",
                            MakeTraceSourceAccessor(&PciePort::m_dllpTxTrace),
                            "ns3::PciePort::DllpTracedCallback")
            .AddTraceSource("Replay",
                            "The replay buffer is sent again: (first sequence number, TLPs, "
                            "whether the replay timer fired rather than a Nak)",
                            MakeTraceSourceAccessor(&PciePort::m_replayTrace),
                            "ns3::PciePort::ReplayTracedCallback")
            .AddTraceSource("CreditStarved",
                            "A head TLP waited for credits of one class: (class, how long)",
                            MakeTraceSourceAccessor(&PciePort::m_starvedTrace),
                            "ns3::PciePort::StarvedTracedCallback");
    return tid;
}

PciePort::PciePort() : m_rng(CreateObject<UniformRandomVariable>())
{
}

void
PciePort::DoDispose()
{
    m_replayEvent.Cancel();
    m_ackTimer.Cancel();
    m_link = nullptr;
    m_peer = nullptr;
    m_rng = nullptr;
    m_receive = Callback<void, const PcieTlp&>();
    m_dequeued = Callback<void, PcieFcType>();
    m_acked = Callback<void, const PcieTlp&>();
    Object::DoDispose();
}

std::string
PciePort::Check() const
{
    return PcieCheckSizeEncoding("MaxPayloadSize", m_mps);
}

int64_t
PciePort::AssignStreams(int64_t stream)
{
    m_rng->SetStream(stream);
    return 1;
}

void
PciePort::Attach(Ptr<PcieLink> link, Ptr<PciePort> peer)
{
    NS_LOG_FUNCTION(this << link << peer);
    m_link = link;
    m_peer = peer;
    m_init = {m_initPH, m_initPD, m_initNPH, m_initNPD, m_initCplH, m_initCplD};
    m_delay = link->GetDelay();
    m_ackLatencyUsed = GetAckLatency();
    m_replayTimeoutUsed = GetReplayTimeout();
}

Time
PciePort::GetAckLatency() const
{
    if (!m_ackLatency.IsZero() || !m_link)
    {
        return m_ackLatency;
    }
    return PcieAckLatencyLimit(m_link->GetGeneration(), m_link->GetWidth(), m_mps);
}

Time
PciePort::GetReplayTimeout() const
{
    if (!m_replayTimeout.IsZero() || !m_link)
    {
        return m_replayTimeout;
    }
    // The spec's limit assumes a short link; the round trip is added so that a
    // long cable or retimers do not replay every TLP.
    return PcieReplayTimerLimit(m_link->GetGeneration(), m_link->GetWidth(), m_mps) +
           2 * m_link->GetDelay();
}

void
PciePort::Start()
{
    NS_LOG_FUNCTION(this);
    for (int c = 0; c < kPcieFcClasses; ++c)
    {
        m_rxAllocated[c] = m_init[c];
    }
    m_started = true;
    m_initDue.fill(true);
    TrySend();
}

PcieDllp
PciePort::FcDllp(PcieDllp::Kind kind, PcieFcType type) const
{
    PcieDllp d;
    d.kind = kind;
    d.fcType = type;
    const int h = HeaderClass(type);
    const int dc = DataClass(type);
    d.hdrLimit = m_rxAllocated[h];
    d.dataLimit = m_rxAllocated[dc];
    d.hdrInfinite = m_init[h] == 0;
    d.dataInfinite = m_init[dc] == 0;
    return d;
}

void
PciePort::Enqueue(const PcieTlp& tlp)
{
    m_queue[int(tlp.Type())].push_back({m_order++, tlp});
    TrySend();
}

int
PciePort::Missing(const PcieTlp& tlp) const
{
    const PcieFcType t = tlp.Type();
    if (!m_fcKnown[int(t)])
    {
        return -2;
    }
    const int h = HeaderClass(t);
    const int d = DataClass(t);
    const uint32_t data = tlp.DataCredits();
    if (data > 0 && !m_infinite[d] && m_consumed[d] + data > m_limit[d])
    {
        return d;
    }
    if (!m_infinite[h] && m_consumed[h] + 1 > m_limit[h])
    {
        return h;
    }
    return -1;
}

void
PciePort::UpdateStarvation()
{
    std::array<bool, kPcieFcClasses> now{};
    for (int t = 0; t < kPcieFcTypes; ++t)
    {
        if (!m_queue[t].empty())
        {
            const int c = Missing(m_queue[t].front().tlp);
            if (c >= 0)
            {
                now[c] = true;
            }
        }
    }
    for (int c = 0; c < kPcieFcClasses; ++c)
    {
        if (now[c] && !m_starving[c])
        {
            m_starving[c] = true;
            m_starvedSince[c] = Simulator::Now();
        }
        else if (!now[c] && m_starving[c])
        {
            m_starving[c] = false;
            const Time waited = Simulator::Now() - m_starvedSince[c];
            m_starvedTotal[c] += waited;
            m_starvedTrace(PcieFcClass(c), waited);
        }
    }
}

int
PciePort::PickQueue()
{
    // Heads in arrival order; a blocked posted TLP holds back younger
    // non-posted requests and completions, nothing else holds anything back.
    std::array<int, kPcieFcTypes> order{0, 1, 2};
    std::sort(order.begin(), order.end(), [this](int a, int b) {
        const uint64_t oa = m_queue[a].empty() ? UINT64_MAX : m_queue[a].front().order;
        const uint64_t ob = m_queue[b].empty() ? UINT64_MAX : m_queue[b].front().order;
        return oa < ob;
    });
    bool postedBlocked = false;
    for (int t : order)
    {
        if (m_queue[t].empty())
        {
            break;
        }
        const bool fits = Missing(m_queue[t].front().tlp) == -1;
        if (t == int(PcieFcType::Posted))
        {
            if (fits)
            {
                return t;
            }
            postedBlocked = true;
        }
        else if (fits && !postedBlocked)
        {
            return t;
        }
    }
    return -1;
}

bool
PciePort::NextDllp(PcieDllp& d)
{
    if (m_nakDue || m_ackDue)
    {
        d = PcieDllp();
        d.kind = m_nakDue ? PcieDllp::Kind::Nak : PcieDllp::Kind::Ack;
        d.seq = m_expectedSeq; // everything below is acknowledged
        ++(m_nakDue ? m_naksSent : m_acksSent);
        m_nakDue = false;
        m_ackDue = false;
        m_unacked = 0;
        return true;
    }
    for (int t = 0; t < kPcieFcTypes; ++t)
    {
        if (m_initDue[t])
        {
            m_initDue[t] = false;
            d = FcDllp(PcieDllp::Kind::InitFc, PcieFcType(t));
            return true;
        }
    }
    for (int t = 0; t < kPcieFcTypes; ++t)
    {
        if (m_fcDue[t])
        {
            m_fcDue[t] = false;
            ++m_updateFcsSent;
            d = FcDllp(PcieDllp::Kind::UpdateFc, PcieFcType(t));
            return true;
        }
    }
    return false;
}

void
PciePort::TrySend()
{
    UpdateStarvation();
    while (!m_busy && m_started)
    {
        PcieDllp d;
        if (NextDllp(d))
        {
            SendDllp(d);
            continue;
        }
        if (m_nextSend < m_replay.size())
        {
            ++m_tlpsReplayed;
            SendTlp(m_replay[m_nextSend++], true);
            return;
        }
        if (m_replay.size() >= m_replayBufferTlps)
        {
            return; // waits for an Ack
        }
        const int t = PickQueue();
        if (t < 0)
        {
            return;
        }
        PcieTlp tlp = m_queue[t].front().tlp;
        m_queue[t].pop_front();
        const PcieFcType type = PcieFcType(t);
        m_consumed[HeaderClass(type)] += 1;
        m_consumed[DataClass(type)] += tlp.DataCredits();
        tlp.seq = m_nextSeq++;
        m_replay.push_back(tlp);
        ++m_nextSend;
        ++m_tlpsSent;
        SendTlp(tlp, false);
        UpdateStarvation();
        if (!m_dequeued.IsNull())
        {
            m_dequeued(type);
        }
        return;
    }
}

void
PciePort::SendDllp(const PcieDllp& d)
{
    m_dllpTxTrace(d);
    ++m_dllpsSent;
    const double bytes = PcieDllpWireBytes(m_link->GetGeneration());
    m_wireBytes += bytes;
    const Time wire = m_link->WireTime(bytes);
    Simulator::Schedule(wire + m_delay, &PciePort::ReceiveDllp, m_peer, d);
    if (wire.IsStrictlyPositive())
    {
        m_busy = true;
        Simulator::Schedule(wire, &PciePort::TxDone, this);
    }
}

void
PciePort::SendTlp(const PcieTlp& tlp, bool replay)
{
    m_tlpTxTrace(tlp, replay);
    const double bytes =
        PcieTlpWireBytes(m_link->GetGeneration(), tlp.headerBytes, tlp.payload, tlp.ecrc);
    m_wireBytes += bytes;
    m_payloadBytes += tlp.payload;
    const Time wire = m_link->WireTime(bytes);
    bool corrupted = false;
    const double ber = m_link->GetBitErrorRate();
    if (ber > 0)
    {
        // P(at least one of the TLP's wire bits is wrong) = 1 - (1 - BER)^bits.
        const double p = -std::expm1(8.0 * bytes * std::log1p(-ber));
        corrupted = m_rng->GetValue() < p;
    }
    m_busy = true;
    Simulator::Schedule(wire, &PciePort::TxDone, this);
    Simulator::Schedule(wire + m_delay, &PciePort::ReceiveTlp, m_peer, tlp, corrupted);
    if (m_replayDeadline == Time::Max())
    {
        ArmReplayTimer(Simulator::Now() + wire + m_replayTimeoutUsed);
    }
}

void
PciePort::TxDone()
{
    m_busy = false;
    TrySend();
}

void
PciePort::ArmReplayTimer(Time deadline)
{
    m_replayDeadline = deadline;
    if (!m_replayEvent.IsRunning())
    {
        m_replayEvent =
            Simulator::Schedule(deadline - Simulator::Now(), &PciePort::OnReplayTimer, this);
    }
}

void
PciePort::OnReplayTimer()
{
    if (m_replay.empty() || m_replayDeadline == Time::Max())
    {
        m_replayDeadline = Time::Max();
        return;
    }
    if (Simulator::Now() < m_replayDeadline)
    {
        m_replayEvent = Simulator::Schedule(m_replayDeadline - Simulator::Now(),
                                            &PciePort::OnReplayTimer, this);
        return;
    }
    ++m_timeouts;
    StartReplay(true);
}

void
PciePort::StartReplay(bool timeout)
{
    NS_LOG_FUNCTION(this << timeout << m_replay.front().seq << m_replay.size());
    m_replayTrace(m_replay.front().seq, static_cast<uint32_t>(m_replay.size()), timeout);
    m_nextSend = 0;
    m_replayDeadline = Time::Max();
    ArmReplayTimer(Simulator::Now() + m_replayTimeoutUsed);
    TrySend();
}

void
PciePort::ReceiveDllp(PcieDllp d)
{
    switch (d.kind)
    {
    case PcieDllp::Kind::Ack:
    case PcieDllp::Kind::Nak: {
        size_t purged = 0;
        while (!m_replay.empty() && m_replay.front().seq < d.seq)
        {
            if (!m_acked.IsNull())
            {
                m_acked(m_replay.front());
            }
            m_replay.pop_front();
            ++purged;
        }
        m_nextSend = purged >= m_nextSend ? 0 : m_nextSend - purged;
        if (purged > 0)
        {
            // Forward progress restarts the replay timer (stops it if nothing is left).
            m_replayDeadline = Time::Max();
            if (!m_replay.empty())
            {
                ArmReplayTimer(Simulator::Now() + m_replayTimeoutUsed);
            }
        }
        if (d.kind == PcieDllp::Kind::Nak)
        {
            ++m_naksReceived;
            if (!m_replay.empty())
            {
                StartReplay(false);
                return;
            }
        }
        break;
    }
    case PcieDllp::Kind::InitFc:
    case PcieDllp::Kind::UpdateFc: {
        const int t = int(d.fcType);
        const int h = HeaderClass(d.fcType);
        const int dc = DataClass(d.fcType);
        m_fcKnown[t] = true;
        m_infinite[h] = d.hdrInfinite;
        m_infinite[dc] = d.dataInfinite;
        m_limit[h] = std::max(m_limit[h], d.hdrLimit);
        m_limit[dc] = std::max(m_limit[dc], d.dataLimit);
        break;
    }
    }
    TrySend();
}

void
PciePort::ReceiveTlp(PcieTlp tlp, bool corrupted)
{
    if (corrupted)
    {
        NS_LOG_FUNCTION(this << "LCRC error, seq" << tlp.seq);
        ++m_lcrcErrors;
        m_lcrcErrorTrace(tlp);
        if (!m_nakScheduled)
        {
            m_nakScheduled = true;
            m_nakDue = true;
            TrySend();
        }
        return;
    }
    if (tlp.seq < m_expectedSeq)
    {
        ++m_duplicates; // a replay of one we have: Ack again so the sender moves on
        m_ackDue = true;
        TrySend();
        return;
    }
    if (tlp.seq > m_expectedSeq)
    {
        // One before it was lost; it was Nak'ed when it arrived bad.
        if (!m_nakScheduled)
        {
            m_nakScheduled = true;
            m_nakDue = true;
            TrySend();
        }
        return;
    }
    ++m_expectedSeq;
    m_nakScheduled = false;
    const PcieFcType type = tlp.Type();
    const int h = HeaderClass(type);
    const int dc = DataClass(type);
    m_rxReceived[h] += 1;
    m_rxReceived[dc] += tlp.DataCredits();
    if ((m_init[h] && m_rxReceived[h] > m_rxAllocated[h]) ||
        (m_init[dc] && m_rxReceived[dc] > m_rxAllocated[dc]))
    {
        ++m_overflows;
    }
    ++m_tlpsDelivered;
    if (++m_unacked >= m_ackCoalesce)
    {
        m_ackDue = true;
        TrySend();
    }
    else if (!m_ackTimer.IsRunning())
    {
        m_ackTimer = Simulator::Schedule(m_ackLatencyUsed, &PciePort::OnAckTimer, this);
    }
    m_tlpRxTrace(tlp);
    if (!m_receive.IsNull())
    {
        m_receive(tlp);
    }
}

void
PciePort::OnAckTimer()
{
    if (m_unacked > 0)
    {
        m_ackDue = true;
        TrySend();
    }
}

void
PciePort::Release(const PcieTlp& tlp)
{
    const PcieFcType type = tlp.Type();
    const int h = HeaderClass(type);
    const int dc = DataClass(type);
    bool update = false;
    if (m_init[h])
    {
        m_rxAllocated[h] += 1;
        update = true;
    }
    if (m_init[dc] && tlp.DataCredits() > 0)
    {
        m_rxAllocated[dc] += tlp.DataCredits();
        update = true;
    }
    if (update)
    {
        m_fcDue[int(type)] = true;
        TrySend();
    }
}

} // namespace ns3
