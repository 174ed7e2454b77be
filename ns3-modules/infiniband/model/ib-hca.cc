#include "ns3/ib-hca.h"

#include "ns3/boolean.h"
#include "ns3/bth-header.h"
#include "ns3/byte-header.h"
#include "ns3/ib-opcode.h"
#include "ns3/simulator.h"
#include "ns3/string.h"
#include "ns3/uinteger.h"

#include <vector>

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(IbHca);

TypeId
IbHca::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::IbHca")
            .SetParent<Object>()
            .SetGroupName("Infiniband")
            .AddConstructor<IbHca>()
            .AddAttribute("UseGrh",
                          "Send every packet with a Global Route Header (LNH 3, 40 bytes "
                          "more), as packets to or from another subnet carry",
                          BooleanValue(false), MakeBooleanAccessor(&IbHca::m_useGrh),
                          MakeBooleanChecker())
            .AddAttribute("ServiceLevel", "SL of the QPs the fabric helper connects",
                          UintegerValue(0), MakeUintegerAccessor(&IbHca::m_defaultSl),
                          MakeUintegerChecker<uint8_t>(0, 15))
            .AddAttribute("CctiIncrease", "IB CC: CCTI added per BECN", UintegerValue(1),
                          MakeUintegerAccessor(&IbHca::m_cctiIncrease),
                          MakeUintegerChecker<uint32_t>(1, 255))
            .AddAttribute("CctiLimit", "IB CC: the largest CCTI (the table's last entry)",
                          UintegerValue(127), MakeUintegerAccessor(&IbHca::m_cctiLimit),
                          MakeUintegerChecker<uint32_t>(1, 16383))
            .AddAttribute("CctiTimer", "IB CC: CCTI drops by one this often",
                          TimeValue(MicroSeconds(10)), MakeTimeAccessor(&IbHca::m_cctiTimer),
                          MakeTimeChecker(NanoSeconds(1)))
            .AddAttribute("CctStep",
                          "IB CC: the table's inter-packet delay grows by this per index "
                          "(a linear table, as the CC manager fills it)",
                          TimeValue(NanoSeconds(20)), MakeTimeAccessor(&IbHca::m_cctStep),
                          MakeTimeChecker(Time(0)))
            .AddTraceSource("Ccti", "A flow's CCTI changed: (QPN, new CCTI)",
                            MakeTraceSourceAccessor(&IbHca::m_cctiTrace),
                            "ns3::IbHca::CctiTracedCallback")
            .AddTraceSource("Becn", "A BECN (a CNP) arrived for a flow: (its QPN here)",
                            MakeTraceSourceAccessor(&IbHca::m_becnTrace),
                            "ns3::IbHca::BecnTracedCallback");
    return tid;
}

IbHca::IbHca() = default;

void
IbHca::DoDispose()
{
    m_timer.Cancel();
    m_wakeAt.Cancel();
    m_cnps.clear();
    for (auto& c : m_conns)
    {
        c.qp->Dispose();
    }
    m_conns.clear();
    m_port = nullptr;
    Object::DoDispose();
}

void
IbHca::Setup(Ptr<IbPort> port, uint16_t lid)
{
    m_port = port;
    m_lid = lid;
    port->SetReceiveCallback(MakeCallback(&IbHca::Receive, this));
    port->SetDequeueCallback(MakeCallback(&IbHca::Dequeued, this));
}

Ptr<RdmaQueuePair>
IbHca::CreateQp()
{
    Ptr<RdmaQueuePair> qp = CreateObject<RdmaQueuePair>();
    qp->SetQpn(m_conns.NextQpn());
    qp->SetWakeCallback(MakeCallback(&IbHca::Wake, this));
    Conn c;
    c.qp = qp;
    c.sl = m_defaultSl;
    m_conns.Add(c);
    return qp;
}

void
IbHca::Connect(Ptr<RdmaQueuePair> qp, uint16_t remoteLid, uint32_t remoteQpn, uint8_t sl)
{
    Conn& c = m_conns.At(qp->GetQpn());
    c.remoteLid = remoteLid;
    c.sl = sl;
    qp->SetRemoteQpn(remoteQpn);
}

void
IbHca::DestroyQp(Ptr<RdmaQueuePair> qp)
{
    const auto gone = m_conns.Remove(qp->GetQpn());
    if (!gone)
    {
        return;
    }
    gone->qp->Dispose();
}

void
IbHca::SetSl2Vl(uint8_t sl, uint8_t vl)
{
    NS_ABORT_MSG_IF(sl > 15, "IbHca: SL " << +sl << " (SLs are 0..15)");
    m_sl2vl[sl] = static_cast<int8_t>(vl);
}

uint8_t
IbHca::VlOf(uint8_t sl) const
{
    const uint8_t vls = m_port->GetNumDataVls();
    const int8_t mapped = m_sl2vl[sl & 0xf];
    // Unset, or a VL the port does not have: SL modulo the data VLs.
    return mapped >= 0 && mapped < vls ? static_cast<uint8_t>(mapped)
                                       : static_cast<uint8_t>(sl % vls);
}

uint32_t
IbHca::WireBytes(const TransportPacket& p) const
{
    return kIbLrhBytes + (m_useGrh ? kIbGrhBytes : 0) + p.TransportBytes() + kIbIcrcBytes +
           kIbVcrcBytes;
}

void
IbHca::Dequeued(uint8_t)
{
    Wake(); // a VL queue has room again
}

void
IbHca::Wake()
{
    if (!m_sendScheduled)
    {
        m_sendScheduled = true;
        Simulator::ScheduleNow(&IbHca::TrySend, this);
    }
}

Ptr<Packet>
IbHca::Build(const Conn& c, const TransportPacket& p) const
{
    const uint8_t pad = static_cast<uint8_t>((4 - p.payload % 4) % 4);
    const uint32_t grh = m_useGrh ? kIbGrhBytes : 0;
    std::vector<uint8_t> head(kIbLrhBytes + grh + kMaxTransportHeaderBytes);
    const uint32_t transport = WriteTransportHeaders(p, pad, head.data() + kIbLrhBytes + grh);
    head.resize(kIbLrhBytes + grh + transport);
    LrhHeader lrh;
    lrh.vl = VlOf(c.sl);
    lrh.sl = c.sl;
    lrh.lnh = m_useGrh ? kIbLnhGlobal : kIbLnhLocal;
    lrh.dlid = c.remoteLid;
    lrh.slid = m_lid;
    lrh.pktLen =
        static_cast<uint16_t>((kIbLrhBytes + grh + transport + p.payload + pad + kIbIcrcBytes) / 4);
    lrh.Write(head.data());
    if (m_useGrh)
    {
        GrhHeader g;
        g.tClass = static_cast<uint8_t>(c.sl << 4); // the SL, visible end to end
        g.flowLabel = c.qp->GetQpn() & 0xfffff;     // one flow per QP
        g.payLen = static_cast<uint16_t>(transport + p.payload + pad + kIbIcrcBytes);
        g.sgid = IbGidOfLid(m_lid);
        g.dgid = IbGidOfLid(c.remoteLid);
        g.Write(head.data() + kIbLrhBytes);
    }
    // Payload, pad, ICRC and VCRC: zero bytes of the right length, a zero area that ns-3
    // never allocates (Packet::AddAtEnd would make it real bytes); the headers in front.
    Ptr<Packet> packet = Create<Packet>(p.payload + pad + kIbIcrcBytes + kIbVcrcBytes);
    packet->AddHeader(ByteHeader(head.data(), head.size()));
    return packet;
}

void
IbHca::TrySend()
{
    m_sendScheduled = false;
    if (!m_port)
    {
        return;
    }
    while (!m_cnps.empty() && m_port->GetQueuePackets(m_cnps.front().second) == 0)
    {
        m_port->Enqueue(m_cnps.front().first, m_cnps.front().second, Simulator::Now());
        m_cnps.pop_front();
    }
    const Time now = Simulator::Now();
    Time earliest = Time::Max();
    const size_t n = m_conns.size();
    const size_t first = m_conns.IndexFrom(m_rrQpn);
    for (size_t k = 0; k < n; ++k)
    {
        const size_t idx = (first + k) % n;
        Conn& c = m_conns[idx];
        const uint8_t vl = VlOf(c.sl);
        if (m_port->GetQueuePackets(vl) > 0 || !c.qp->HasPacket())
        {
            continue;
        }
        const bool control = c.qp->HasControlPacket();
        if (!control && c.nextSend > now)
        {
            earliest = std::min(earliest, c.nextSend);
            c.qp->NotePaced();
            continue;
        }
        const auto p = c.qp->NextPacket();
        Ptr<Packet> packet = Build(c, *p);
        if (!control && c.ccti > 0)
        {
            // The table's inter-packet delay, counted from the end of this packet.
            c.nextSend = now + m_port->WireTime(packet->GetSize()) + c.ccti * m_cctStep;
        }
        m_port->Enqueue(packet, vl, now);
        m_rrQpn = c.qp->GetQpn() + 1;
    }
    if (earliest != Time::Max() &&
        (!m_wakeAt.IsRunning() || Simulator::GetDelayLeft(m_wakeAt) > earliest - now))
    {
        m_wakeAt.Cancel();
        m_wakeAt = Simulator::Schedule(earliest - now, &IbHca::Wake, this);
    }
}

void
IbHca::SendCnp(const Conn& c)
{
    TransportPacket cnp;
    cnp.opcode = kIbOpcodeCnp;
    cnp.destQp = c.qp->GetRemoteQpn();
    cnp.becn = true;
    cnp.payload = 16; // reserved bytes, as a RoCEv2 CNP
    m_cnps.emplace_back(Build(c, cnp), VlOf(c.sl));
    ++m_cnpsSent;
    Wake();
}

void
IbHca::OnCctiTimer()
{
    bool any = false;
    for (auto& c : m_conns)
    {
        if (c.ccti > 0)
        {
            --c.ccti;
            m_cctiTrace(c.qp->GetQpn(), c.ccti);
            if (c.ccti == 0)
            {
                c.nextSend = Time(0);
            }
            any = any || c.ccti > 0;
        }
    }
    if (any)
    {
        m_timer = Simulator::Schedule(m_cctiTimer, &IbHca::OnCctiTimer, this);
    }
}

uint32_t
IbHca::GetCcti(Ptr<RdmaQueuePair> qp) const
{
    return m_conns.At(qp->GetQpn()).ccti;
}

void
IbHca::Receive(Ptr<IbPort>, Ptr<Packet> p, uint8_t vl, Time tail)
{
    // The head is here; the packet is whole (and its buffer drained) when the tail is.
    Simulator::Schedule(tail - Simulator::Now(), &IbHca::Deliver, this, p, vl);
}

void
IbHca::Deliver(Ptr<Packet> p, uint8_t vl)
{
    m_port->Release(vl, IbPort::Blocks(p->GetSize()));
    const uint32_t size = p->GetSize();
    std::vector<uint8_t> bytes(
        std::min<uint32_t>(size, kIbLrhBytes + kIbGrhBytes + kMaxTransportHeaderBytes));
    p->CopyData(bytes.data(), static_cast<uint32_t>(bytes.size()));
    // The BTH follows the LRH, or the GRH when the LRH says one is there.
    const uint32_t bth = kIbLrhBytes + ((bytes[1] & 0x3) == kIbLnhGlobal ? kIbGrhBytes : 0);
    TransportPacket t;
    if (bytes.size() <= bth ||
        !ReadTransportHeaders(bytes.data() + bth, static_cast<uint32_t>(bytes.size()) - bth, t))
    {
        return;
    }
    // Payload: what is left after the headers, the pad (BTH PadCnt), ICRC and VCRC.
    const auto info = LookupIbOpcode(t.opcode);
    const uint32_t headers = bth + BthHeader::kSize + info->ExtensionBytes();
    const uint32_t pad = (bytes[bth + 1] >> 4) & 0x3;
    if (size < headers + pad + kIbIcrcBytes + kIbVcrcBytes)
    {
        return;
    }
    t.payload = size - headers - pad - kIbIcrcBytes - kIbVcrcBytes;
    Conn* found = m_conns.Find(t.destQp);
    if (!found)
    {
        ++m_unknownQp; // a QP already destroyed: its late packets go nowhere
        return;
    }
    Conn& c = *found;
    if (t.opcode == kIbOpcodeCnp)
    {
        // A BECN for this flow: throttle it one table step more.
        ++m_becns;
        m_becnTrace(c.qp->GetQpn());
        c.ccti = std::min(c.ccti + m_cctiIncrease, m_cctiLimit);
        m_cctiTrace(c.qp->GetQpn(), c.ccti);
        if (!m_timer.IsRunning())
        {
            m_timer = Simulator::Schedule(m_cctiTimer, &IbHca::OnCctiTimer, this);
        }
        return;
    }
    if (t.fecn)
    {
        SendCnp(c); // the destination returns the mark to the source
    }
    c.qp->Receive(t);
}

} // namespace ns3
