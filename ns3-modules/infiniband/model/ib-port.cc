#include "ns3/ib-port.h"

#include "ns3/abort.h"
#include "ns3/data-rate.h"
#include "ns3/deterministic-scheduler.h"
#include "ns3/pointer.h"
#include "ns3/rank-sent-tag.h"
#include "ns3/simulator.h"
#include "ns3/string.h"
#include "ns3/uinteger.h"

#include <algorithm>
#include <sstream>
#include <utility>

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(IbPort);

namespace
{
// A RankSentTag's word for IbPort: bit 63 set for an FCP, whose fields take the low 29
// bits (op, VL, FCTBS, FCCL); for data, the VL in the low 4 bits and the time on the wire,
// in time steps, above them.
constexpr uint64_t kFcpWord = uint64_t(1) << 63;
} // namespace

TypeId
IbPort::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::IbPort")
            .SetParent<Object>()
            .SetGroupName("Infiniband")
            .AddConstructor<IbPort>()
            .AddAttribute("DataRate", "Data rate after line encoding (e.g. 4x EDR: 100Gbps)",
                          DataRateValue(DataRate("100Gbps")), MakeDataRateAccessor(&IbPort::m_rate),
                          MakeDataRateChecker())
            .AddAttribute("NumDataVls", "Data virtual lanes, VL0 up (VLCap: 1, 2, 4, 8 or 15)",
                          UintegerValue(1), MakeUintegerAccessor(&IbPort::m_numVls),
                          MakeUintegerChecker<uint8_t>(1, kMaxDataVls))
            .AddAttribute("ReceiveErrorModel",
                          "Corrupts received packets (e.g. a RateErrorModel in bits); a corrupt "
                          "packet fails its VCRC and is dropped, its blocks still counted in ABR",
                          PointerValue(), MakePointerAccessor(&IbPort::m_receiveErrorModel),
                          MakePointerChecker<ErrorModel>())
            .AddTraceSource("PhyRxDrop", "A packet dropped on arrival, corrupt",
                            MakeTraceSourceAccessor(&IbPort::m_phyRxDropTrace),
                            "ns3::Packet::TracedCallback")
            .AddAttribute("BufferBlocks", "Receive buffer per data VL, in 64-byte credits",
                          UintegerValue(512), MakeUintegerAccessor(&IbPort::m_bufferBlocks),
                          MakeUintegerChecker<uint32_t>(1, 65536))
            .AddAttribute("FcpInterval",
                          "Period of the flow-control packets sent even without a change "
                          "(IBA: at most 65,536 symbol times)",
                          TimeValue(MicroSeconds(2)), MakeTimeAccessor(&IbPort::m_fcpInterval),
                          MakeTimeChecker(NanoSeconds(10)))
            .AddAttribute("VlArbHigh",
                          "High-priority arbitration table, 'vl:weight,...' (weights in 64-byte "
                          "units); empty: none",
                          StringValue(""), MakeStringAccessor(&IbPort::m_highSpec),
                          MakeStringChecker())
            .AddAttribute("VlArbLow",
                          "Low-priority arbitration table, 'vl:weight,...'; empty: every data VL "
                          "with weight 255",
                          StringValue(""), MakeStringAccessor(&IbPort::m_lowSpec),
                          MakeStringChecker())
            .AddAttribute("LimitOfHighPriority",
                          "High-priority bytes, in 4 KB units, sent before a waiting "
                          "low-priority packet must go; 255 = unbounded, 0 = one packet",
                          UintegerValue(255), MakeUintegerAccessor(&IbPort::m_highLimit),
                          MakeUintegerChecker<uint32_t>(0, 255))
            .AddTraceSource("BufferDepth",
                            "Blocks in use in a VL's input buffer, at every change: (vl, blocks)",
                            MakeTraceSourceAccessor(&IbPort::m_bufferTrace),
                            "ns3::IbPort::BufferDepthCallback")
            .AddTraceSource("CreditStall", "A VL's head packet waited for credits: (VL, how long)",
                            MakeTraceSourceAccessor(&IbPort::m_stallTrace),
                            "ns3::IbPort::StallTracedCallback")
            .AddTraceSource("FcpTx", "Flow-control packet sent: (VL, FCTBS, FCCL)",
                            MakeTraceSourceAccessor(&IbPort::m_fcpTxTrace),
                            "ns3::IbPort::FcpTracedCallback")
            .AddTraceSource("FcpRx", "Flow-control packet received: (VL, FCTBS, FCCL)",
                            MakeTraceSourceAccessor(&IbPort::m_fcpRxTrace),
                            "ns3::IbPort::FcpTracedCallback")
            .AddTraceSource(
                "Sniffer", "Every data packet sent, LRH first (pcap link type InfiniBand)",
                MakeTraceSourceAccessor(&IbPort::m_sniffer), "ns3::Packet::TracedCallback");
    return tid;
}

IbPort::IbPort() : m_txDone(MakeEvent(&IbPort::TxDone, this), false)
{
}

void
IbPort::DoDispose()
{
    m_retry.Cancel();
    m_fcpTimer.Cancel();
    m_onWire = {}; // its holder may be a port that holds us
    m_peer = nullptr;
    for (auto& t : m_tx)
    {
        t.queue.clear();
    }
    m_receive = ReceiveCallback();
    m_dequeued = Callback<void, uint8_t>();
    m_toRank = Callback<void, Ptr<Packet>, Time>();
    Object::DoDispose();
}

void
IbPort::Attach(Ptr<IbPort> peer, Time delay)
{
    m_peer = peer;
    m_delay = delay;
}

void
IbPort::SetContext(uint32_t node, uint32_t id)
{
    m_context = node;
    m_id = id;
}

void
IbPort::ParseTables()
{
    auto parse = [this](const std::string& spec, ArbTable& table) {
        table.entries.clear();
        std::stringstream ss(spec);
        for (std::string item; std::getline(ss, item, ',');)
        {
            unsigned vl = 0;
            unsigned weight = 0;
            NS_ABORT_MSG_IF(std::sscanf(item.c_str(), "%u:%u", &vl, &weight) != 2 ||
                                vl >= m_numVls || weight > 255,
                            "IbPort: arbitration entry '" << item
                                                          << "' is not vl:weight with a data VL "
                                                             "below "
                                                          << +m_numVls << " and weight <= 255");
            table.entries.push_back({static_cast<uint8_t>(vl), weight});
        }
        table.index = 0;
        table.left = table.entries.empty() ? 0 : table.entries[0].weight * int64_t(kIbCreditBytes);
    };
    parse(m_highSpec, m_high);
    if (m_lowSpec.empty())
    {
        std::string all;
        for (uint8_t v = 0; v < m_numVls; ++v)
        {
            all += (v ? "," : "") + std::to_string(v) + ":255";
        }
        parse(all, m_low);
    }
    else
    {
        parse(m_lowSpec, m_low);
    }
}

void
IbPort::Start()
{
    NS_ABORT_MSG_IF(!m_peer, "IbPort::Start before Attach");
    ParseTables();
    m_started = true;
    // The initial FCPs and the periodic ones: the first tick is now, in this port's context.
    if (m_context != kNoContext)
    {
        Simulator::ScheduleWithContext(m_context, Time(0), &IbPort::OnFcpTimer, this);
    }
    else
    {
        OnFcpTimer();
    }
}

void
IbPort::OnFcpTimer()
{
    for (uint8_t v = 0; v < m_numVls; ++v)
    {
        m_rx[v].dirty = true;
    }
    m_fcpTimer = Simulator::Schedule(m_fcpInterval, &IbPort::OnFcpTimer, this);
    TrySend();
}

uint16_t
IbPort::Fccl(uint8_t vl) const
{
    const RxVl& r = m_rx[vl];
    const uint32_t free = m_bufferBlocks > r.used ? m_bufferBlocks - r.used : 0;
    return static_cast<uint16_t>((r.abr + std::min<uint32_t>(free, 2048)) & kIbCounterMask);
}

void
IbPort::Enqueue(Ptr<Packet> p, uint8_t vl, Time notBefore, Ptr<IbPort> holder, uint8_t holderVl)
{
    NS_ABORT_MSG_IF(vl >= m_numVls,
                    "IbPort: VL " << +vl << " but the port has " << +m_numVls << " data VLs");
    m_tx[vl].queue.push_back({p, Blocks(p->GetSize()), notBefore, holder, holderVl});
    m_tx[vl].queuedBytes += p->GetSize();
    TrySend();
}

bool
IbPort::Fits(uint8_t vl) const
{
    const TxVl& t = m_tx[vl];
    const uint32_t blocks = t.queue.front().blocks;
    const uint16_t after = static_cast<uint16_t>((t.fctbs + blocks) & kIbCounterMask);
    return ((t.fccl - after) & kIbCounterMask) <= 2048;
}

bool
IbPort::IsCreditStalled(uint8_t vl) const
{
    return !m_tx.at(vl).queue.empty() && !Fits(vl);
}

std::vector<std::pair<Ptr<IbPort>, uint8_t>>
IbPort::GetHolders(uint8_t vl) const
{
    std::vector<std::pair<Ptr<IbPort>, uint8_t>> holders;
    for (const auto& e : m_tx.at(vl).queue)
    {
        const std::pair<Ptr<IbPort>, uint8_t> h{e.holder, e.holderVl};
        if (e.holder && std::find(holders.begin(), holders.end(), h) == holders.end())
        {
            holders.push_back(h);
        }
    }
    return holders;
}

bool
IbPort::Eligible(uint8_t vl) const
{
    const TxVl& t = m_tx[vl];
    return !t.queue.empty() && t.queue.front().notBefore <= Simulator::Now() && Fits(vl);
}

void
IbPort::NoteStall(uint8_t vl)
{
    TxVl& t = m_tx[vl];
    const bool waiting = !t.queue.empty() && t.queue.front().notBefore <= Simulator::Now();
    if (waiting && !Fits(vl) && !t.stalled)
    {
        t.stalled = true;
        t.stallSince = Simulator::Now();
        ++m_stalls;
    }
    else if (t.stalled && (t.queue.empty() || Fits(vl)))
    {
        t.stalled = false;
        m_stallTrace(vl, Simulator::Now() - t.stallSince);
    }
}

int
IbPort::Pick(ArbTable& table)
{
    const size_t n = table.entries.size();
    const size_t index = table.index;
    const int64_t left = table.left;
    for (size_t k = 0; k <= n && n > 0; ++k)
    {
        const ArbEntry& e = table.entries[table.index];
        if (e.weight > 0 && table.left > 0 && Eligible(e.vl))
        {
            return e.vl;
        }
        // IBA 7.6.9: an entry whose VL has nothing to send, or whose weight is
        // used up, gives way to the next; unused weight is not carried over.
        table.index = (table.index + 1) % n;
        table.left = table.entries[table.index].weight * int64_t(kIbCreditBytes);
    }
    // Nothing can go: the table stays where it was, its entry's weight unspent.
    table.index = index;
    table.left = left;
    return -1;
}

int
IbPort::Arbitrate()
{
    bool lowWaiting = false;
    for (const auto& e : m_low.entries)
    {
        lowWaiting = lowWaiting || (e.weight > 0 && Eligible(e.vl));
    }
    const uint64_t limit = uint64_t(m_highLimit) * 4096;
    const bool highMay = m_highLimit == 255 || m_highSent == 0 || m_highSent < limit || !lowWaiting;
    if (!m_high.entries.empty() && highMay)
    {
        const int vl = Pick(m_high);
        if (vl >= 0)
        {
            const uint32_t bytes = m_tx[vl].queue.front().packet->GetSize();
            m_high.left -= bytes;
            m_highSent += bytes;
            return vl;
        }
    }
    const int vl = Pick(m_low);
    if (vl >= 0)
    {
        m_low.left -= m_tx[vl].queue.front().packet->GetSize();
        m_highSent = 0;
    }
    return vl;
}

void
IbPort::TrySend()
{
    if (m_busy || !m_started)
    {
        return;
    }
    for (uint8_t v = 0; v < m_numVls; ++v)
    {
        if (m_rx[v].dirty)
        {
            m_rx[v].dirty = false;
            SendFcp(v, 0);
            return;
        }
    }
    for (uint8_t v = 0; v < m_numVls; ++v)
    {
        NoteStall(v);
    }
    const int vl = Arbitrate();
    if (vl < 0)
    {
        // Nothing may go now: wake for the earliest packet held back by time (credits wake us by
        // FCP).
        Time earliest = Time::Max();
        for (uint8_t v = 0; v < m_numVls; ++v)
        {
            const auto& q = m_tx[v].queue;
            if (!q.empty() && q.front().notBefore > Simulator::Now())
            {
                earliest = std::min(earliest, q.front().notBefore);
            }
        }
        if (earliest != Time::Max() && (!m_retry.IsRunning() || Simulator::GetDelayLeft(m_retry) >
                                                                    earliest - Simulator::Now()))
        {
            m_retry.Cancel();
            m_retry = Simulator::Schedule(earliest - Simulator::Now(), &IbPort::TrySend, this);
        }
        return;
    }
    TxVl& t = m_tx[vl];
    Entry e = t.queue.front();
    t.queue.pop_front();
    t.queuedBytes -= e.packet->GetSize();
    t.fctbs = static_cast<uint16_t>((t.fctbs + e.blocks) & kIbCounterMask);
    t.bytesSent += e.packet->GetSize();
    m_busy = true;
    const Time wire = WireTime(e.packet->GetSize());
    m_sniffer(e.packet);
    ToPeer(e.packet, static_cast<uint8_t>(vl), wire, nullptr, m_delay);
    m_onWire = std::move(e);
    Simulator::Schedule(wire, m_txDone); // takes a reference, drops it once run
    if (!m_dequeued.IsNull())
    {
        m_dequeued(static_cast<uint8_t>(vl));
    }
}

void
IbPort::TxDone()
{
    const Entry e = std::exchange(m_onWire, {}); // TrySend may put the next one on the wire
    m_busy = false;
    if (e.holder)
    {
        e.holder->Release(e.holderVl, e.blocks); // the tail has left: its input buffer is free
    }
    TrySend();
}

void
IbPort::SendFcp(uint8_t vl, uint8_t op)
{
    FcpHeader h;
    h.op = op;
    h.vl = vl;
    h.fctbs = m_tx[vl].fctbs;
    h.fccl = Fccl(vl);
    ++m_fcpsSent;
    m_fcpTxTrace(vl, h.fctbs, h.fccl);
    m_busy = true;
    const Time wire = WireTime(kIbFcpBytes);
    ToPeer(nullptr, vl, wire, &h, wire + m_delay);
    m_onWire = {};
    Simulator::Schedule(wire, m_txDone);
}

void
IbPort::ToPeer(Ptr<Packet> p, uint8_t vl, Time wire, const FcpHeader* fcp, Time delay)
{
    const Time now = Simulator::Now();
    if (!m_toRank.IsNull())
    {
        RankSentTag tag;
        tag.sentAt = now.GetTimeStep();
        tag.node = m_context;
        tag.port = m_id;
        if (fcp)
        {
            tag.word = kFcpWord | uint64_t(fcp->op & 1) << 28 | uint64_t(fcp->vl & 0xf) << 24 |
                       uint64_t(fcp->fctbs & kIbCounterMask) << 12 | (fcp->fccl & kIbCounterMask);
            p = Create<Packet>();
        }
        else
        {
            tag.word = uint64_t(wire.GetTimeStep()) << 4 | vl;
            p = p->Copy();
        }
        p->AddPacketTag(tag);
        m_toRank(p, now + delay);
        return;
    }
    // An arrival: under the DeterministicScheduler its ties are broken by this port and
    // the time sent, the same on every rank of a partitioned run.
    const uint32_t to =
        m_peer->m_context != kNoContext ? m_peer->m_context : Simulator::GetContext();
    if (fcp)
    {
        DeterministicScheduler::ScheduleArrival(now, m_context, m_id, to, delay,
                                                &IbPort::ReceiveFcp, m_peer, *fcp);
    }
    else
    {
        DeterministicScheduler::ScheduleArrival(now, m_context, m_id, to, delay,
                                                &IbPort::ReceiveHead, m_peer, p, vl,
                                                now + delay + wire);
    }
}

void
IbPort::ArriveFromRank(Ptr<Packet> p, uint64_t word)
{
    if (word & kFcpWord)
    {
        FcpHeader h;
        h.op = static_cast<uint8_t>(word >> 28 & 1);
        h.vl = static_cast<uint8_t>(word >> 24 & 0xf);
        h.fctbs = static_cast<uint16_t>(word >> 12 & kIbCounterMask);
        h.fccl = static_cast<uint16_t>(word & kIbCounterMask);
        ReceiveFcp(h);
        return;
    }
    const auto vl = static_cast<uint8_t>(word & 0xf);
    ReceiveHead(p, vl, Simulator::Now() + TimeStep(static_cast<int64_t>(word >> 4)));
}

void
IbPort::ReceiveFcp(FcpHeader h)
{
    if (h.vl >= m_numVls)
    {
        return; // a VL this port does not run
    }
    m_fcpRxTrace(h.vl, h.fctbs, h.fccl);
    m_tx[h.vl].fccl = h.fccl;
    // The sender's FCTBS is how many blocks it has sent: our ABR catches up with it.
    if (m_rx[h.vl].abr != h.fctbs)
    {
        m_rx[h.vl].abr = h.fctbs;
        m_rx[h.vl].dirty = true;
    }
    NoteStall(h.vl);
    TrySend();
}

void
IbPort::ReceiveHead(Ptr<Packet> p, uint8_t vl, Time tail)
{
    const uint32_t blocks = Blocks(p->GetSize());
    RxVl& r = m_rx[vl];
    r.abr = static_cast<uint16_t>((r.abr + blocks) & kIbCounterMask);
    if (m_receiveErrorModel && m_receiveErrorModel->IsCorrupt(p))
    {
        // A corrupt packet fails its VCRC and is dropped on arrival. ABR counts its blocks
        // anyway (IBA 7.9.4), so no credit is lost with it.
        ++m_bitErrorDrops;
        m_phyRxDropTrace(p);
        r.dirty = true;
        TrySend();
        return;
    }
    r.used += blocks;
    r.peak = std::max(r.peak, r.used);
    m_bufferTrace(vl, r.used);
    if (r.used > m_bufferBlocks)
    {
        ++m_overflows; // the sender broke the credit rule: a model bug, counted for tests
    }
    if (!m_receive.IsNull())
    {
        m_receive(this, p, vl, tail);
    }
}

void
IbPort::Release(uint8_t vl, uint32_t blocks)
{
    RxVl& r = m_rx[vl];
    NS_ABORT_MSG_IF(blocks > r.used, "IbPort: releasing " << blocks << " blocks of " << r.used);
    r.used -= blocks;
    m_bufferTrace(vl, r.used);
    r.dirty = true; // FCCL moved: tell the sender at once
    TrySend();
}

} // namespace ns3
