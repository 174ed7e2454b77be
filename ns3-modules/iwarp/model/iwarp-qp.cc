#include "ns3/iwarp-qp.h"

#include "ns3/boolean.h"
#include "ns3/log.h"
#include "ns3/packet.h"
#include "ns3/simulator.h"
#include "ns3/tcp-header.h"
#include "ns3/tcp-socket-base.h"
#include "ns3/uinteger.h"

#include <algorithm>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("IwarpQp");
NS_OBJECT_ENSURE_REGISTERED(IwarpQp);

namespace
{

bool
IsSendOp(RdmaWorkRequest::Op op)
{
    return op == RdmaWorkRequest::Op::Send || op == RdmaWorkRequest::Op::SendWithImm;
}

} // namespace

TypeId
IwarpQp::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::IwarpQp")
            .SetParent<RdmaQp>()
            .SetGroupName("Iwarp")
            .AddConstructor<IwarpQp>()
            .AddAttribute(
                "Markers",
                "Ask the peer for MPA markers (every 512 octets) on what this end receives",
                BooleanValue(false), MakeBooleanAccessor(&IwarpQp::m_markers), MakeBooleanChecker())
            .AddAttribute("Crc", "Ask for MPA CRC32c on every FPDU (used if either end asks)",
                          BooleanValue(true), MakeBooleanAccessor(&IwarpQp::m_crc),
                          MakeBooleanChecker())
            .AddAttribute("MpaRevision",
                          "MPA revision offered: 1 (RFC 5044) or 2 (RFC 6581, IRD/ORD exchanged)",
                          UintegerValue(2), MakeUintegerAccessor(&IwarpQp::m_revision),
                          MakeUintegerChecker<uint8_t>(1, 2))
            .AddAttribute("MaxUlpdu",
                          "Largest ULPDU length accepted; a larger one is a framing error",
                          UintegerValue(16384), MakeUintegerAccessor(&IwarpQp::m_maxUlpduAccepted),
                          MakeUintegerChecker<uint32_t>(64, 65535))
            .AddTraceSource("Terminate", "A Terminate message sent or received, with its cause",
                            MakeTraceSourceAccessor(&IwarpQp::m_terminateTrace),
                            "ns3::IwarpQp::TerminateCallback");
    return tid;
}

IwarpQp::IwarpQp() = default;

void
IwarpQp::DoDispose()
{
    if (m_socket)
    {
        m_socket->SetRecvCallback(MakeNullCallback<void, Ptr<Socket>>());
        m_socket->SetSendCallback(MakeNullCallback<void, Ptr<Socket>, uint32_t>());
        m_socket->SetCloseCallbacks(MakeNullCallback<void, Ptr<Socket>>(),
                                    MakeNullCallback<void, Ptr<Socket>>());
        m_socket = nullptr;
    }
    m_readsWaiting.clear();
    m_tx.clear();
    m_sendQueue.clear();
    RdmaQp::DoDispose();
}

void
IwarpQp::Attach(Ptr<Socket> socket, bool initiator)
{
    m_socket = socket;
    m_initiator = initiator;
    UintegerValue v;
    socket->GetAttribute("SegmentSize", v);
    m_mss = static_cast<uint32_t>(v.Get());
    socket->GetAttribute("SndBufSize", v);
    m_sndBuf = static_cast<uint32_t>(v.Get());
    socket->SetRecvCallback(MakeCallback(&IwarpQp::HandleRead, this));
    socket->SetSendCallback(MakeCallback(&IwarpQp::HandleSend, this));
    socket->SetCloseCallbacks(MakeCallback(&IwarpQp::PeerClosed, this),
                              MakeCallback(&IwarpQp::PeerClosed, this));
    socket->TraceConnectWithoutContext("Tx", MakeCallback(&IwarpQp::TcpTx, this));
    socket->TraceConnectWithoutContext("EcnEchoSeq", MakeCallback(&IwarpQp::EcnEcho, this));
    if (initiator)
    {
        socket->SetConnectCallback(MakeCallback(&IwarpQp::ConnectionSucceeded, this),
                                   MakeCallback(&IwarpQp::ConnectionFailed, this));
    }
    else
    {
        m_state = State::AwaitRequest;
    }
}

void
IwarpQp::RegisterMemory(uint32_t stag, uint64_t base, std::shared_ptr<std::vector<uint8_t>> bytes)
{
    NS_ABORT_MSG_IF(stag == 0, "STag 0 means no region");
    m_regions[stag] = Region{base, std::move(bytes)};
}

void
IwarpQp::PostRecv(uint32_t lkey, uint64_t addr, uint32_t length)
{
    m_recvQueue.push_back(RecvBuffer{lkey, addr, length});
}

void
IwarpQp::ConnectionSucceeded(Ptr<Socket>)
{
    MpaRequestReply req;
    req.reply = false;
    req.markers = m_markers;
    req.crc = m_crc;
    req.revision = m_revision;
    req.enhanced = m_revision == 2;
    WriteStream(req.Serialize());
    m_state = State::AwaitReply;
}

void
IwarpQp::ConnectionFailed(Ptr<Socket>)
{
    NS_LOG_WARN("TCP connection failed");
    EnterError(RdmaCompletion::Status::Flushed);
}

void
IwarpQp::PeerClosed(Ptr<Socket>)
{
    if (m_state != State::Error && (!m_sendQueue.empty() || !m_tx.empty()))
    {
        NS_LOG_WARN("connection closed with work outstanding");
        EnterError(RdmaCompletion::Status::Flushed);
    }
}

void
IwarpQp::WriteStream(const std::vector<uint8_t>& bytes)
{
    const int sent =
        m_socket->Send(Create<Packet>(bytes.data(), static_cast<uint32_t>(bytes.size())));
    NS_ABORT_MSG_IF(sent != static_cast<int>(bytes.size()),
                    "TCP refused bytes it said it had room for");
    m_streamWritten += bytes.size();
}

void
IwarpQp::StartFullOperation(bool txMarkers, bool crc)
{
    m_framer.emplace(txMarkers, crc);
    m_deframer.emplace(m_markers, crc, m_maxUlpduAccepted);
    m_state = State::Established;
    if (!m_handshake.empty())
    {
        m_deframer->Push(m_handshake.data(), m_handshake.size());
        m_handshake.clear();
    }
    Pump();
}

bool
IwarpQp::ProcessHandshake()
{
    const size_t need = MpaRequestReply::FrameBytes(m_handshake.data(), m_handshake.size());
    if (need == 0 || m_handshake.size() < need)
    {
        return false;
    }
    std::string error;
    auto frame = MpaRequestReply::Parse(m_handshake.data(), need, error);
    const bool expectReply = m_state == State::AwaitReply;
    if (frame && frame->reply != expectReply)
    {
        error = expectReply ? "an MPA request where the reply was due"
                            : "an MPA reply where a request was due";
        frame.reset();
    }
    if (!frame || frame->reject)
    {
        NS_LOG_WARN("MPA connection set-up failed: " << (frame ? "rejected by the peer" : error));
        m_terminateSent = TerminateCause{TerminateCause::Llp, 0, terminate::kMpaRequestReply};
        m_terminateTrace(*m_terminateSent);
        EnterError(RdmaCompletion::Status::Flushed);
        m_socket->Close();
        return false;
    }
    m_handshake.erase(m_handshake.begin(), m_handshake.begin() + static_cast<std::ptrdiff_t>(need));
    if (expectReply)
    {
        m_negotiatedRevision = frame->revision;
        StartFullOperation(frame->markers, frame->crc || m_crc);
    }
    else
    {
        MpaRequestReply rep;
        rep.reply = true;
        rep.markers = m_markers;
        rep.crc = m_crc || frame->crc;
        rep.revision = std::min(m_revision, frame->revision);
        rep.enhanced = rep.revision == 2;
        m_negotiatedRevision = rep.revision;
        WriteStream(rep.Serialize());
        StartFullOperation(frame->markers, rep.crc);
    }
    return true;
}

void
IwarpQp::HandleRead(Ptr<Socket> s)
{
    Ptr<Packet> p;
    std::vector<uint8_t> buf;
    while ((p = s->Recv()))
    {
        if (m_state == State::Error || m_state == State::Terminating)
        {
            continue; // a terminated stream is read and dropped
        }
        buf.resize(p->GetSize());
        p->CopyData(buf.data(), buf.size());
        if (m_state == State::Established)
        {
            m_deframer->Push(buf.data(), buf.size());
        }
        else
        {
            m_handshake.insert(m_handshake.end(), buf.begin(), buf.end());
        }
    }
    if (m_state == State::AwaitReply || m_state == State::AwaitRequest)
    {
        ProcessHandshake();
    }
    if (m_state == State::Established)
    {
        ProcessFpdus();
    }
}

void
IwarpQp::ProcessFpdus()
{
    while (m_state == State::Established)
    {
        std::optional<TerminateCause> error;
        auto ulpdu = m_deframer->Next(error);
        if (error)
        {
            SendTerminate(*error);
            return;
        }
        if (!ulpdu)
        {
            return;
        }
        ++m_fpdusReceived;
        TerminateCause cause;
        auto seg = DdpSegment::Parse(ulpdu->data(), ulpdu->size(), cause);
        if (!seg)
        {
            SendTerminate(cause);
            return;
        }
        Receive(*seg);
    }
}

std::optional<TerminateCause>
IwarpQp::Place(uint32_t stag, uint64_t to, const std::vector<uint8_t>& payload, bool tagged)
{
    using namespace terminate;
    if (stag == 0)
    {
        return std::nullopt; // no region: counted, not kept
    }
    auto it = m_regions.find(stag);
    if (it == m_regions.end())
    {
        return tagged ? TerminateCause{TerminateCause::Ddp, kDdpTagged, kDdpTaggedInvalidStag}
                      : TerminateCause{TerminateCause::Rdmap, kRdmapRemoteProtection,
                                       kRdmapInvalidStag};
    }
    const Region& r = it->second;
    if (to < r.base || to - r.base + payload.size() > r.bytes->size())
    {
        return tagged ? TerminateCause{TerminateCause::Ddp, kDdpTagged, kDdpTaggedBaseBounds}
                      : TerminateCause{TerminateCause::Ddp, kDdpUntagged, kDdpUntaggedTooLong};
    }
    std::copy(payload.begin(), payload.end(),
              r.bytes->begin() + static_cast<std::ptrdiff_t>(to - r.base));
    return std::nullopt;
}

void
IwarpQp::Receive(const DdpSegment& s)
{
    using namespace terminate;
    switch (static_cast<RdmapOpcode>(s.opcode))
    {
    case RdmapOpcode::Write:
    case RdmapOpcode::ReadResponse: {
        const bool response = s.opcode == uint8_t(RdmapOpcode::ReadResponse);
        if (response && m_readsWaiting.empty())
        {
            SendTerminate({TerminateCause::Rdmap, kRdmapRemoteOperation, kRdmapOpcode});
            return;
        }
        if (auto err = Place(s.stag, s.to, s.payload, true))
        {
            SendTerminate(*err);
            return;
        }
        m_bytesReceived += s.payload.size();
        if (response && s.last)
        {
            m_readsWaiting.front()->done = true;
            m_readsWaiting.pop_front();
            CompleteReady();
        }
        return;
    }
    case RdmapOpcode::Send:
    case RdmapOpcode::SendInvalidate:
    case RdmapOpcode::SendSe:
    case RdmapOpcode::SendSeInvalidate: {
        if (s.msn != m_rxMsn[kQnSend])
        {
            SendTerminate({TerminateCause::Ddp, kDdpUntagged, kDdpUntaggedInvalidMsn});
            return;
        }
        if (s.mo != m_sendReceived)
        {
            SendTerminate({TerminateCause::Ddp, kDdpUntagged, kDdpUntaggedInvalidMo});
            return;
        }
        if (m_sendReceived == 0)
        {
            m_sendStarted = Simulator::Now();
        }
        if (!m_recvQueue.empty())
        {
            const RecvBuffer& rb = m_recvQueue.front();
            if (uint64_t(s.mo) + s.payload.size() > rb.length)
            {
                SendTerminate({TerminateCause::Ddp, kDdpUntagged, kDdpUntaggedTooLong});
                return;
            }
            if (auto err = Place(rb.lkey, rb.addr + s.mo, s.payload, false))
            {
                SendTerminate(*err);
                return;
            }
        }
        m_sendReceived += s.payload.size();
        m_bytesReceived += s.payload.size();
        if (!s.last)
        {
            return;
        }
        if (s.opcode == uint8_t(RdmapOpcode::SendInvalidate) ||
            s.opcode == uint8_t(RdmapOpcode::SendSeInvalidate))
        {
            m_regions.erase(s.rsvdUlp);
        }
        if (!m_recvQueue.empty())
        {
            m_recvQueue.pop_front();
        }
        ++m_rxMsn[kQnSend];
        RdmaCompletion c;
        c.op = RdmaWorkRequest::Op::Send;
        c.bytes = m_sendReceived;
        c.receive = true;
        c.solicited = s.opcode == uint8_t(RdmapOpcode::SendSe) ||
                      s.opcode == uint8_t(RdmapOpcode::SendSeInvalidate);
        c.posted = m_sendStarted;
        c.completed = Simulator::Now();
        m_sendReceived = 0;
        if (!m_completion.IsNull())
        {
            m_completion(c);
        }
        return;
    }
    case RdmapOpcode::ReadRequest: {
        if (s.msn != m_rxMsn[kQnReadRequest])
        {
            SendTerminate({TerminateCause::Ddp, kDdpUntagged, kDdpUntaggedInvalidMsn});
            return;
        }
        ++m_rxMsn[kQnReadRequest];
        if (s.srcStag != 0)
        {
            auto it = m_regions.find(s.srcStag);
            if (it == m_regions.end())
            {
                SendTerminate({TerminateCause::Rdmap, kRdmapRemoteProtection, kRdmapInvalidStag});
                return;
            }
            const Region& r = it->second;
            if (s.srcTo < r.base || s.srcTo - r.base + s.readSize > r.bytes->size())
            {
                SendTerminate({TerminateCause::Rdmap, kRdmapRemoteProtection, kRdmapBaseBounds});
                return;
            }
        }
        m_tx.push_back(Tagged(RdmapOpcode::ReadResponse, s.sinkStag, s.sinkTo, s.readSize,
                              s.srcStag, s.srcTo));
        Pump();
        return;
    }
    case RdmapOpcode::Terminate:
        m_terminateReceived = s.cause;
        m_terminateTrace(s.cause);
        NS_LOG_WARN("peer terminated the connection: " << s.cause.ToString());
        EnterError(RdmaCompletion::Status::RemoteError);
        m_socket->Close();
        return;
    }
}

void
IwarpQp::PostSend(const RdmaWorkRequest& wr)
{
    if (m_state == State::Error)
    {
        FailLocally(wr, RdmaCompletion::Status::Flushed);
        return;
    }
    if (wr.op == RdmaWorkRequest::Op::SendWithImm || wr.op == RdmaWorkRequest::Op::WriteWithImm)
    {
        FailLocally(wr, RdmaCompletion::Status::Unsupported); // RFC 5040 has no immediate data
        return;
    }
    if (wr.lkey != 0)
    {
        auto it = m_regions.find(wr.lkey);
        if (it == m_regions.end() || wr.localAddr < it->second.base ||
            wr.localAddr - it->second.base + wr.bytes > it->second.bytes->size())
        {
            FailLocally(wr, RdmaCompletion::Status::LengthError);
            return;
        }
    }
    if (IsSendOp(wr.op) && wr.bytes > UINT32_MAX)
    {
        FailLocally(wr, RdmaCompletion::Status::LengthError); // the message offset is 32 bits
        return;
    }
    m_sendQueue.push_back(PendingWr{wr, Simulator::Now()});
    PendingWr* p = &m_sendQueue.back();
    TxMessage m;
    m.bytes = wr.bytes;
    switch (wr.op)
    {
    case RdmaWorkRequest::Op::Write:
        m = Tagged(RdmapOpcode::Write, wr.rkey, wr.remoteAddr, wr.bytes, wr.lkey, wr.localAddr);
        break;
    case RdmaWorkRequest::Op::Read:
        m.header.opcode = uint8_t(RdmapOpcode::ReadRequest);
        m.header.qn = kQnReadRequest;
        m.header.sinkStag = wr.lkey;
        m.header.sinkTo = wr.localAddr;
        m.header.readSize = static_cast<uint32_t>(wr.bytes);
        m.header.srcStag = wr.rkey;
        m.header.srcTo = wr.remoteAddr;
        m.bytes = 0; // the request carries no payload
        break;
    default:
        // Send, with Solicited Event and/or with Invalidate (RFC 5040 4.5, 5.2).
        m.header.opcode = uint8_t(
            wr.invalidateKey != 0
                ? (wr.solicited ? RdmapOpcode::SendSeInvalidate : RdmapOpcode::SendInvalidate)
                : (wr.solicited ? RdmapOpcode::SendSe : RdmapOpcode::Send));
        m.header.rsvdUlp = wr.invalidateKey;
        m.header.qn = kQnSend;
        m.srcKey = wr.lkey;
        m.srcAddr = wr.localAddr;
        break;
    }
    m.wr = p;
    m_tx.push_back(m);
    Pump();
}

IwarpQp::TxMessage
IwarpQp::Tagged(RdmapOpcode opcode, uint32_t stag, uint64_t to, uint64_t bytes, uint32_t srcKey,
                uint64_t srcAddr)
{
    TxMessage m;
    m.header.opcode = uint8_t(opcode);
    m.header.tagged = true;
    m.header.stag = stag;
    m.header.to = to;
    m.bytes = bytes;
    m.srcKey = srcKey;
    m.srcAddr = srcAddr;
    return m;
}

void
IwarpQp::FillPayload(const TxMessage& m, uint32_t n, std::vector<uint8_t>& out) const
{
    if (m.srcKey != 0)
    {
        const Region& r = m_regions.at(m.srcKey);
        auto from = r.bytes->begin() + static_cast<std::ptrdiff_t>(m.srcAddr - r.base + m.sent);
        out.insert(out.end(), from, from + n);
        return;
    }
    for (uint32_t i = 0; i < n; ++i)
    {
        out.push_back(static_cast<uint8_t>(m.sent + i));
    }
}

void
IwarpQp::Pump()
{
    if (m_state != State::Established && m_state != State::Terminating)
    {
        return;
    }
    const uint32_t maxUlpdu = m_framer->MaxUlpdu(m_mss);
    std::vector<uint8_t> ulpdu;
    std::vector<uint8_t> fpdu;
    while (!m_tx.empty() && m_socket->GetTxAvailable() >= m_mss)
    {
        TxMessage& m = m_tx.front();
        DdpSegment& h = m.header;
        const bool untagged = !h.tagged;
        if (untagged && m.sent == 0 && h.msn == 0)
        {
            h.msn = m_txMsn[h.qn]++; // one MSN per message on its queue
        }
        const uint32_t room = maxUlpdu - h.HeaderBytes();
        const auto n = static_cast<uint32_t>(std::min<uint64_t>(room, m.bytes - m.sent));
        DdpSegment seg = h;
        seg.last = m.sent + n == m.bytes;
        if (seg.tagged)
        {
            seg.to = h.to + m.sent;
        }
        else
        {
            seg.mo = static_cast<uint32_t>(m.sent);
        }
        ulpdu.clear();
        seg.Serialize(ulpdu);
        FillPayload(m, n, ulpdu);
        fpdu.clear();
        m_framer->Frame(ulpdu, fpdu);
        WriteStream(fpdu);
        ++m_fpdusSent;
        m_payloadSent += n;
        m.sent += n;
        if (seg.last)
        {
            if (m.wr)
            {
                m.wr->framed = true;
                m.wr->streamEnd = m_streamWritten;
                if (m.wr->wr.op == RdmaWorkRequest::Op::Read)
                {
                    m_readsWaiting.push_back(m.wr);
                }
            }
            const bool closing = h.opcode == uint8_t(RdmapOpcode::Terminate);
            m_tx.pop_front();
            if (closing)
            {
                m_tx.clear();
                m_state = State::Error;
                m_socket->Close();
                return;
            }
        }
    }
    CompleteReady();
}

void
IwarpQp::HandleSend(Ptr<Socket>, uint32_t)
{
    Pump();
}

void
IwarpQp::CompleteReady()
{
    if (!m_socket)
    {
        return;
    }
    // TCP keeps unacknowledged and unsent octets in its buffer; the rest are acknowledged.
    const uint64_t inBuffer = m_sndBuf - m_socket->GetTxAvailable();
    const uint64_t acked = m_streamWritten - std::min<uint64_t>(inBuffer, m_streamWritten);
    while (!m_sendQueue.empty())
    {
        PendingWr& p = m_sendQueue.front();
        const bool ready =
            p.wr.op == RdmaWorkRequest::Op::Read ? p.done : p.framed && p.streamEnd <= acked;
        if (!ready)
        {
            return;
        }
        Complete(p, RdmaCompletion::Status::Success);
        m_sendQueue.pop_front();
    }
}

void
IwarpQp::Complete(PendingWr& p, RdmaCompletion::Status status)
{
    RdmaCompletion c;
    c.wrId = p.wr.wrId;
    c.op = p.wr.op;
    c.bytes = p.wr.bytes;
    c.status = status;
    c.posted = p.posted;
    c.completed = Simulator::Now();
    if (!m_completion.IsNull())
    {
        m_completion(c);
    }
}

void
IwarpQp::FailLocally(const RdmaWorkRequest& wr, RdmaCompletion::Status status)
{
    PendingWr p{wr, Simulator::Now()};
    Simulator::ScheduleNow(&IwarpQp::Complete, this, p, status);
}

void
IwarpQp::SendTerminate(const TerminateCause& cause)
{
    NS_LOG_WARN("terminating the connection: " << cause.ToString());
    m_terminateSent = cause;
    m_terminateTrace(cause);
    TxMessage m;
    m.header.opcode = uint8_t(RdmapOpcode::Terminate);
    m.header.qn = kQnTerminate;
    m.header.cause = cause;
    // The Terminate goes before anything still queued, which is never sent.
    m_tx.clear();
    m_tx.push_back(m);
    std::deque<PendingWr> flushed;
    flushed.swap(m_sendQueue);
    m_readsWaiting.clear();
    m_state = State::Terminating;
    Pump(); // sends the Terminate (now, or once TCP has room) and closes
    for (PendingWr& p : flushed)
    {
        Complete(p, RdmaCompletion::Status::Flushed);
    }
}

void
IwarpQp::EnterError(RdmaCompletion::Status status)
{
    m_state = State::Error;
    m_tx.clear();
    m_readsWaiting.clear();
    std::deque<PendingWr> flushed;
    flushed.swap(m_sendQueue);
    for (PendingWr& p : flushed)
    {
        Complete(p, status);
    }
}

void
IwarpQp::Close()
{
    m_closeRequested = true;
    if (m_socket)
    {
        m_socket->Close();
    }
}

void
IwarpQp::TcpTx(Ptr<const Packet> p, const TcpHeader& h, Ptr<const TcpSocketBase>)
{
    if (p->GetSize() == 0)
    {
        return;
    }
    if (m_txSeen && h.GetSequenceNumber() < m_highestTx)
    {
        ++m_retransmissions;
        return;
    }
    m_txSeen = true;
    m_highestTx = h.GetSequenceNumber() + SequenceNumber32(p->GetSize());
}

void
IwarpQp::EcnEcho(SequenceNumber32, SequenceNumber32)
{
    ++m_ecnEchoes;
}

} // namespace ns3
