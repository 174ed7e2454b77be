#include "ns3/rdma-queue-pair.h"

#include "ns3/bth-header.h"
#include "ns3/enum.h"
#include "ns3/ib-opcode.h"
#include "ns3/log.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

#include <algorithm>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("RdmaQueuePair");
NS_OBJECT_ENSURE_REGISTERED(RdmaQueuePair);

namespace
{
constexpr uint64_t kPsnSpace = 1ULL << 24;
// Internal PSN counters start one PSN space up, so "one before" never underflows.
constexpr uint64_t kPsnBase = kPsnSpace;

bool
IsResponse(uint8_t opcode)
{
    const auto op = static_cast<IbOperation>(opcode & 0x1f);
    return op == IbOperation::Acknowledge || op == IbOperation::AtomicAcknowledge ||
           op == IbOperation::ReadResponseFirst || op == IbOperation::ReadResponseMiddle ||
           op == IbOperation::ReadResponseLast || op == IbOperation::ReadResponseOnly;
}

uint8_t
Rc(IbOperation op)
{
    return IbOpcode(IbTransport::RC, op);
}

} // namespace

TypeId
RdmaQueuePair::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::RdmaQueuePair")
            .SetParent<RdmaQp>()
            .SetGroupName("Rdma")
            .AddConstructor<RdmaQueuePair>()
            .AddAttribute("Mtu",
                          "Path MTU: payload bytes per packet (256, 512, 1024, 2048 or 4096)",
                          UintegerValue(1024), MakeUintegerAccessor(&RdmaQueuePair::m_mtu),
                          MakeUintegerChecker<uint32_t>(256, 4096))
            .AddAttribute("Timeout",
                          "Retransmission timeout: no acknowledged progress for this long",
                          TimeValue(MilliSeconds(1)), MakeTimeAccessor(&RdmaQueuePair::m_timeout),
                          MakeTimeChecker(NanoSeconds(1)))
            .AddAttribute("RetryCount",
                          "Timeouts in a row after which the QP fails (IB allows 0..7)",
                          UintegerValue(7), MakeUintegerAccessor(&RdmaQueuePair::m_retryCount),
                          MakeUintegerChecker<uint32_t>(0, 7))
            .AddAttribute("Service",
                          "Transport service: RC (reliable connected) or UD (unreliable datagram)",
                          EnumValue(RC), MakeEnumAccessor(&RdmaQueuePair::m_service),
                          MakeEnumChecker(RC, "RC", UD, "UD"))
            .AddAttribute("Qkey", "UD: the Q_Key this QP sends with and accepts",
                          UintegerValue(0x11111111), MakeUintegerAccessor(&RdmaQueuePair::m_qkey),
                          MakeUintegerChecker<uint32_t>())
            .AddAttribute("AckInterval",
                          "The responder acknowledges at least every this many packets",
                          UintegerValue(4), MakeUintegerAccessor(&RdmaQueuePair::m_ackInterval),
                          MakeUintegerChecker<uint32_t>(1))
            .AddTraceSource("GoBackN", "The requester went back to resend: (from PSN, to PSN)",
                            MakeTraceSourceAccessor(&RdmaQueuePair::m_goBackTrace),
                            "ns3::RdmaQueuePair::GoBackTracedCallback")
            .AddTraceSource("Timeout", "The retransmission timer fired: (retry number)",
                            MakeTraceSourceAccessor(&RdmaQueuePair::m_timeoutTrace),
                            "ns3::RdmaQueuePair::TimeoutTracedCallback");
    return tid;
}

RdmaQueuePair::RdmaQueuePair()
{
    SetInitialPsn(0, 0);
}

void
RdmaQueuePair::DoDispose()
{
    m_timer.Cancel();
    m_wake = Callback<void>();
    RdmaQp::DoDispose();
}

void
RdmaQueuePair::SetInitialPsn(uint32_t sendPsn, uint32_t expectedPsn)
{
    m_nextPsn = m_sndNxt = m_sndUna = kPsnBase + (sendPsn & BthHeader::kPsnMask);
    m_highestSent = m_sndNxt - 1;
    m_ackedThrough = m_sndUna;
    m_epsn = kPsnBase + (expectedPsn & BthHeader::kPsnMask);
}

uint64_t
RdmaQueuePair::Unwrap(uint32_t wirePsn, uint64_t reference) const
{
    const uint64_t c = (reference & ~(kPsnSpace - 1)) | (wirePsn & (kPsnSpace - 1));
    uint64_t best = c;
    for (uint64_t candidate : {c - kPsnSpace, c + kPsnSpace})
    {
        const uint64_t d = candidate > reference ? candidate - reference : reference - candidate;
        const uint64_t db = best > reference ? best - reference : reference - best;
        if (d < db)
        {
            best = candidate;
        }
    }
    return best;
}

uint32_t
RdmaQueuePair::PacketsFor(uint64_t bytes) const
{
    return bytes == 0 ? 1 : static_cast<uint32_t>((bytes + m_mtu - 1) / m_mtu);
}

void
RdmaQueuePair::CompleteAtOnce(const RdmaWorkRequest& wr, RdmaCompletion::Status status)
{
    RdmaCompletion c;
    c.wrId = wr.wrId;
    c.op = wr.op;
    c.bytes = wr.bytes;
    c.status = status;
    c.posted = c.completed = Simulator::Now();
    if (!m_completion.IsNull())
    {
        m_completion(c);
    }
}

void
RdmaQueuePair::PostSend(const RdmaWorkRequest& wr)
{
    NS_LOG_FUNCTION(this << RdmaOpName(wr.op) << wr.bytes);
    if (m_error)
    {
        CompleteAtOnce(wr, RdmaCompletion::Status::Flushed);
        return;
    }
    const bool send =
        wr.op == RdmaWorkRequest::Op::Send || wr.op == RdmaWorkRequest::Op::SendWithImm;
    if (m_service == UD && (!send || wr.bytes > m_mtu))
    {
        CompleteAtOnce(wr, RdmaCompletion::Status::LengthError);
        return;
    }
    const uint32_t n = PacketsFor(wr.bytes);
    m_sendQueue.push_back(PendingWr{wr, m_nextPsn, m_nextPsn + n - 1, Simulator::Now()});
    m_nextPsn += n;
    Wake();
}

bool
RdmaQueuePair::HasPacket() const
{
    // The requester's test first: a sending QP answers from the line that holds it.
    return (!m_error && m_sndNxt < m_nextPsn) || !m_control.empty() || !m_readJobs.empty();
}

const RdmaQueuePair::PendingWr*
RdmaQueuePair::FindWr(uint64_t psn) const
{
    for (const auto& w : m_sendQueue)
    {
        if (psn >= w.firstPsn && psn <= w.lastPsn)
        {
            return &w;
        }
    }
    return nullptr;
}

TransportPacket
RdmaQueuePair::MakeRequest(const PendingWr& w, uint64_t psn) const
{
    using Op = RdmaWorkRequest::Op;
    TransportPacket p;
    p.psn = static_cast<uint32_t>(psn & BthHeader::kPsnMask);
    p.destQp = m_remoteQpn;
    const uint64_t idx = psn - w.firstPsn;
    const uint64_t n = w.lastPsn - w.firstPsn + 1;
    const uint64_t offset = idx * m_mtu;
    if (w.wr.op == Op::Read)
    {
        p.opcode = Rc(IbOperation::ReadRequest);
        p.reth.virtualAddress = offset;
        p.reth.dmaLength = static_cast<uint32_t>(w.wr.bytes - std::min(offset, w.wr.bytes));
        p.ackRequest = true;
        return p;
    }
    p.payload = static_cast<uint32_t>(std::min<uint64_t>(m_mtu, w.wr.bytes - offset));
    const bool write = w.wr.op == Op::Write || w.wr.op == Op::WriteWithImm;
    const bool imm = w.wr.op == Op::WriteWithImm || w.wr.op == Op::SendWithImm;
    const bool only = n == 1;
    const bool first = idx == 0;
    const bool last = idx == n - 1;
    if (write)
    {
        p.opcode = only    ? Rc(imm ? IbOperation::WriteOnlyImm : IbOperation::WriteOnly)
                   : first ? Rc(IbOperation::WriteFirst)
                   : last  ? Rc(imm ? IbOperation::WriteLastImm : IbOperation::WriteLast)
                           : Rc(IbOperation::WriteMiddle);
        if (first)
        {
            p.reth.dmaLength = static_cast<uint32_t>(w.wr.bytes);
        }
    }
    else
    {
        p.opcode = only    ? Rc(imm ? IbOperation::SendOnlyImm : IbOperation::SendOnly)
                   : first ? Rc(IbOperation::SendFirst)
                   : last  ? Rc(imm ? IbOperation::SendLastImm : IbOperation::SendLast)
                           : Rc(IbOperation::SendMiddle);
    }
    p.imm = w.wr.imm;
    p.ackRequest = last;
    return p;
}

std::optional<TransportPacket>
RdmaQueuePair::NextPacket()
{
    if (m_service == UD)
    {
        return NextDatagram();
    }
    if (!m_control.empty())
    {
        TransportPacket p = m_control.front();
        m_control.pop_front();
        return p;
    }
    if (!m_readJobs.empty())
    {
        ReadResponseJob& job = m_readJobs.front();
        TransportPacket p;
        p.psn = static_cast<uint32_t>(job.nextPsn & BthHeader::kPsnMask);
        p.destQp = m_remoteQpn;
        const uint64_t idx = job.nextPsn - job.firstPsn;
        const uint64_t n = job.lastPsn - job.firstPsn + 1;
        const bool only = n == 1;
        const bool first = idx == 0;
        const bool last = idx == n - 1;
        p.opcode = only    ? Rc(IbOperation::ReadResponseOnly)
                   : first ? Rc(IbOperation::ReadResponseFirst)
                   : last  ? Rc(IbOperation::ReadResponseLast)
                           : Rc(IbOperation::ReadResponseMiddle);
        p.aeth.syndrome = static_cast<uint8_t>(AckSyndrome::Ack) | 0x1f;
        p.aeth.msn = m_msn & 0xffffff;
        p.payload = static_cast<uint32_t>(std::min<uint64_t>(m_mtu, job.bytes - idx * m_mtu));
        if (++job.nextPsn > job.lastPsn)
        {
            m_readJobs.pop_front();
        }
        return p;
    }
    if (m_error || m_sndNxt >= m_nextPsn)
    {
        return std::nullopt;
    }
    const PendingWr* w = FindWr(m_sndNxt);
    NS_ASSERT_MSG(w, "no work request holds PSN " << m_sndNxt);
    TransportPacket p = MakeRequest(*w, m_sndNxt);
    m_bytesSent += p.payload;
    if (m_sndNxt <= m_highestSent)
    {
        ++m_retransmitted;
    }
    const uint64_t sent = m_sndNxt;
    m_sndNxt = w->wr.op == RdmaWorkRequest::Op::Read ? w->lastPsn + 1 : m_sndNxt + 1;
    m_highestSent = std::max(m_highestSent, sent);
    if (m_deadline == Time::Max() || sent == m_sndUna)
    {
        ArmTimer(); // the first packet outstanding, or the first resent, starts the clock
    }
    return p;
}

std::optional<TransportPacket>
RdmaQueuePair::NextDatagram()
{
    if (m_sendQueue.empty())
    {
        return std::nullopt;
    }
    const PendingWr w = m_sendQueue.front();
    TransportPacket p;
    const bool imm = w.wr.op == RdmaWorkRequest::Op::SendWithImm;
    p.opcode = IbOpcode(IbTransport::UD, imm ? IbOperation::SendOnlyImm : IbOperation::SendOnly);
    p.psn = static_cast<uint32_t>(w.firstPsn & BthHeader::kPsnMask);
    p.destQp = m_remoteQpn;
    p.deth.qkey = m_qkey;
    p.deth.srcQp = m_qpn;
    p.imm = w.wr.imm;
    p.payload = static_cast<uint32_t>(w.wr.bytes);
    m_sndNxt = m_sndUna = w.lastPsn + 1;
    CompleteFront(RdmaCompletion::Status::Success); // a datagram is done once it leaves
    return p;
}

void
RdmaQueuePair::ReceiveDatagram(const TransportPacket& p)
{
    const auto op = static_cast<IbOperation>(p.opcode & 0x1f);
    const bool ud = (p.opcode & 0xe0) == static_cast<uint8_t>(IbTransport::UD);
    if (!ud || p.deth.qkey != m_qkey ||
        (op != IbOperation::SendOnly && op != IbOperation::SendOnlyImm))
    {
        ++m_udDropped; // IBA 10.2.5: a datagram with the wrong Q_Key is silently dropped
        return;
    }
    m_bytesReceived += p.payload;
    if (!m_completion.IsNull())
    {
        RdmaCompletion c;
        c.receive = true;
        c.op = op == IbOperation::SendOnlyImm ? RdmaWorkRequest::Op::SendWithImm
                                              : RdmaWorkRequest::Op::Send;
        c.bytes = p.payload;
        c.imm = p.imm;
        c.posted = c.completed = Simulator::Now();
        m_completion(c);
    }
}

void
RdmaQueuePair::Receive(const TransportPacket& p)
{
    if (m_service == UD)
    {
        ReceiveDatagram(p);
        return;
    }
    if (IsResponse(p.opcode))
    {
        ReceiveResponse(p);
    }
    else
    {
        ReceiveRequest(p);
    }
}

void
RdmaQueuePair::SendAck(uint64_t psn, AckSyndrome kind, uint8_t value)
{
    TransportPacket ack;
    ack.opcode = Rc(IbOperation::Acknowledge);
    ack.psn = static_cast<uint32_t>(psn & BthHeader::kPsnMask);
    ack.destQp = m_remoteQpn;
    ack.aeth.syndrome = static_cast<uint8_t>(kind) | (value & 0x1f);
    ack.aeth.msn = m_msn & 0xffffff;
    m_control.push_back(ack);
    m_unacked = 0;
    Wake();
}

void
RdmaQueuePair::ReceiveRequest(const TransportPacket& p)
{
    const uint64_t psn = Unwrap(p.psn, m_epsn);
    const auto op = static_cast<IbOperation>(p.opcode & 0x1f);
    if (psn > m_epsn)
    {
        if (!m_nakSent)
        {
            m_nakSent = true;
            ++m_naksSent;
            SendAck(m_epsn, AckSyndrome::Nak, static_cast<uint8_t>(NakCode::PsnSequenceError));
        }
        return;
    }
    if (op == IbOperation::ReadRequest)
    {
        // New or repeated: serve it from this PSN (a repeat asks for what is left).
        const uint32_t n = PacketsFor(p.reth.dmaLength);
        m_readJobs.push_back(ReadResponseJob{psn, psn + n - 1, psn, p.reth.dmaLength});
        if (psn == m_epsn)
        {
            m_epsn += n;
            m_nakSent = false;
        }
        Wake();
        return;
    }
    if (psn < m_epsn)
    {
        SendAck(m_epsn - 1, AckSyndrome::Ack, 0x1f); // duplicate: say again how far we are
        return;
    }
    m_nakSent = false;
    ++m_epsn;
    m_bytesReceived += p.payload;
    const bool first = op == IbOperation::SendFirst || op == IbOperation::SendOnly ||
                       op == IbOperation::SendOnlyImm || op == IbOperation::WriteFirst ||
                       op == IbOperation::WriteOnly || op == IbOperation::WriteOnlyImm;
    const bool last = op == IbOperation::SendLast || op == IbOperation::SendLastImm ||
                      op == IbOperation::SendOnly || op == IbOperation::SendOnlyImm ||
                      op == IbOperation::WriteLast || op == IbOperation::WriteLastImm ||
                      op == IbOperation::WriteOnly || op == IbOperation::WriteOnlyImm;
    if (first)
    {
        m_messageBytes = 0;
        m_messageStart = Simulator::Now();
    }
    m_messageBytes += p.payload;
    if (last)
    {
        ++m_msn;
        const bool isSend = (p.opcode & 0x1f) <= static_cast<uint8_t>(IbOperation::SendOnlyImm);
        const bool hasImm = op == IbOperation::SendLastImm || op == IbOperation::SendOnlyImm ||
                            op == IbOperation::WriteLastImm || op == IbOperation::WriteOnlyImm;
        if ((isSend || hasImm) && !m_completion.IsNull())
        {
            RdmaCompletion c;
            c.receive = true;
            c.op = isSend ? (hasImm ? RdmaWorkRequest::Op::SendWithImm : RdmaWorkRequest::Op::Send)
                          : RdmaWorkRequest::Op::WriteWithImm;
            c.bytes = m_messageBytes;
            c.imm = p.imm;
            c.posted = m_messageStart;
            c.completed = Simulator::Now();
            m_completion(c);
        }
    }
    if (p.ackRequest || ++m_unacked >= m_ackInterval)
    {
        SendAck(m_epsn - 1, AckSyndrome::Ack, 0x1f);
    }
}

void
RdmaQueuePair::ReceiveResponse(const TransportPacket& p)
{
    if (m_error)
    {
        return;
    }
    const uint64_t psn = Unwrap(p.psn, m_sndUna);
    const auto op = static_cast<IbOperation>(p.opcode & 0x1f);
    if (op == IbOperation::Acknowledge)
    {
        switch (p.aeth.GetKind())
        {
        case AckSyndrome::Ack:
            RetireUpTo(psn + 1);
            break;
        case AckSyndrome::Nak:
            if (p.aeth.GetValue() == static_cast<uint8_t>(NakCode::PsnSequenceError))
            {
                RetireUpTo(psn);
                GoBack(psn);
            }
            else
            {
                Fail(); // a remote access or operational error: nothing to retry
            }
            break;
        case AckSyndrome::RnrNak:
            GoBack(std::max(psn, m_sndUna));
            break;
        default:
            break;
        }
        return;
    }
    // An RDMA READ response: in order only; it also acknowledges what came before.
    RetireUpTo(psn);
    if (m_sendQueue.empty() || m_sendQueue.front().wr.op != RdmaWorkRequest::Op::Read)
    {
        return;
    }
    const PendingWr& w = m_sendQueue.front();
    const uint64_t expected = std::max(m_sndUna, w.firstPsn);
    if (psn < expected || psn > w.lastPsn)
    {
        return; // a duplicate, or not for this read
    }
    if (psn > expected)
    {
        if (m_readRetryPsn != expected)
        {
            m_readRetryPsn = expected; // ask once for what is missing; the timer covers the rest
            GoBack(expected);
        }
        return;
    }
    m_sndUna = psn + 1;
    m_retries = 0;
    if (psn == w.lastPsn)
    {
        CompleteFront(RdmaCompletion::Status::Success);
        RetireUpTo(m_ackedThrough);
    }
    ArmTimer();
}

void
RdmaQueuePair::RetireUpTo(uint64_t psnExclusive)
{
    m_ackedThrough = std::max(m_ackedThrough, psnExclusive);
    uint64_t limit = psnExclusive;
    while (!m_sendQueue.empty())
    {
        const PendingWr& w = m_sendQueue.front();
        if (w.wr.op == RdmaWorkRequest::Op::Read)
        {
            // Only its responses complete a read; an ACK beyond it does not.
            limit = std::min(limit, std::max(m_sndUna, w.firstPsn));
            break;
        }
        if (w.lastPsn >= psnExclusive)
        {
            break;
        }
        CompleteFront(RdmaCompletion::Status::Success);
    }
    if (limit > m_sndUna)
    {
        m_sndUna = limit;
        m_sndNxt = std::max(m_sndNxt, m_sndUna);
        m_retries = 0;
        ArmTimer();
    }
}

void
RdmaQueuePair::CompleteFront(RdmaCompletion::Status status)
{
    const PendingWr w = m_sendQueue.front();
    m_sendQueue.pop_front();
    if (status == RdmaCompletion::Status::Success)
    {
        m_bytesAcked += w.wr.bytes;
    }
    if (!m_completion.IsNull())
    {
        RdmaCompletion c;
        c.wrId = w.wr.wrId;
        c.op = w.wr.op;
        c.bytes = w.wr.bytes;
        c.status = status;
        c.imm = w.wr.imm;
        c.posted = w.posted;
        c.completed = Simulator::Now();
        m_completion(c);
    }
}

void
RdmaQueuePair::GoBack(uint64_t psn)
{
    if (psn >= m_sndNxt)
    {
        return;
    }
    m_goBackTrace(static_cast<uint32_t>(m_sndNxt & BthHeader::kPsnMask),
                  static_cast<uint32_t>(psn & BthHeader::kPsnMask));
    m_sndNxt = psn;
    Wake();
}

void
RdmaQueuePair::ArmTimer()
{
    // A lazy timer: progress only moves the deadline. Cancelling and rescheduling
    // on every ACK would leave one dead event per ACK in the scheduler until its
    // time came, a cost that grows with the fabric.
    if (m_error || m_sendQueue.empty() || m_sndUna >= m_sndNxt)
    {
        m_deadline = Time::Max();
        return;
    }
    m_deadline = Simulator::Now() + m_timeout;
    if (!m_timer.IsRunning())
    {
        m_timer = Simulator::Schedule(m_timeout, &RdmaQueuePair::OnTimeout, this);
    }
}

void
RdmaQueuePair::OnTimeout()
{
    if (m_deadline == Time::Max() || m_sendQueue.empty())
    {
        return; // disarmed since
    }
    if (Simulator::Now() < m_deadline)
    {
        m_timer =
            Simulator::Schedule(m_deadline - Simulator::Now(), &RdmaQueuePair::OnTimeout, this);
        return; // progress was made: wait for the moved deadline
    }
    if (m_sndUna >= m_sndNxt && m_lastPaced >= m_wentBack)
    {
        // Nothing resent since going back, and the NIC's rate limiter is what holds
        // it: the clock starts again with the next packet sent.
        m_deadline = Time::Max();
        return;
    }
    ++m_timeouts;
    ++m_retries;
    m_timeoutTrace(m_retries);
    if (m_retries > m_retryCount)
    {
        Fail();
        return;
    }
    m_readRetryPsn = UINT64_MAX;
    GoBack(m_sndUna);
    m_wentBack = Simulator::Now();
    // The timer runs on: a packet resent restarts it (NextPacket), and one that the
    // rate limiter holds stops it at the next expiry without a retry.
    m_deadline = Simulator::Now() + m_timeout;
    m_timer = Simulator::Schedule(m_timeout, &RdmaQueuePair::OnTimeout, this);
}

void
RdmaQueuePair::Fail()
{
    NS_LOG_FUNCTION(this);
    m_error = true;
    m_timer.Cancel();
    bool first = true;
    while (!m_sendQueue.empty())
    {
        CompleteFront(first ? RdmaCompletion::Status::RetryExceeded
                            : RdmaCompletion::Status::Flushed);
        first = false;
    }
}

void
RdmaQueuePair::Wake()
{
    if (!m_wake.IsNull())
    {
        m_wake();
    }
}

} // namespace ns3
