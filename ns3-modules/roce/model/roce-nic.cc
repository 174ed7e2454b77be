#include "ns3/roce-nic.h"

#include "ns3/abort.h"
#include "ns3/boolean.h"
#include "ns3/bth-header.h"
#include "ns3/ib-opcode.h"
#include "ns3/log.h"
#include "ns3/make-event.h"
#include "ns3/pointer.h"
#include "ns3/roce-packet.h"
#include "ns3/simulator-impl-cache.h"
#include "ns3/simulator.h"
#include "ns3/string.h"
#include "ns3/uinteger.h"

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("RoceNic");
NS_OBJECT_ENSURE_REGISTERED(RoceNic);

TypeId
RoceNic::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::RoceNic")
            .SetParent<Object>()
            .SetGroupName("Roce")
            .AddConstructor<RoceNic>()
            .AddAttribute("Priority", "802.1Q priority (PCP) of RDMA traffic", UintegerValue(3),
                          MakeUintegerAccessor(&RoceNic::m_priority),
                          MakeUintegerChecker<uint8_t>(0, 7))
            .AddAttribute("Dscp", "DSCP of RDMA traffic", UintegerValue(26),
                          MakeUintegerAccessor(&RoceNic::m_dscp),
                          MakeUintegerChecker<uint8_t>(0, 63))
            .AddAttribute("Vlan", "Tag frames with 802.1Q (priority in the PCP)",
                          BooleanValue(true), MakeBooleanAccessor(&RoceNic::m_vlan),
                          MakeBooleanChecker())
            .AddAttribute("EcnCapable", "Send data as ECT(0), so switches may mark it",
                          BooleanValue(true), MakeBooleanAccessor(&RoceNic::m_ecnCapable),
                          MakeBooleanChecker())
            .AddAttribute("ComputeIcrc", "Compute each frame's ICRC (off saves time in large runs)",
                          BooleanValue(true), MakeBooleanAccessor(&RoceNic::m_computeIcrc),
                          MakeBooleanChecker())
            .AddAttribute(
                "CongestionControl", "Reaction point per QP: ns3::DcqcnRateControl, or none",
                StringValue("none"), MakeStringAccessor(&RoceNic::m_cc), MakeStringChecker())
            .AddAttribute("NotificationPoint",
                          "DCQCN notification point (CnpInterval, CnpPriority, CnpDscp); "
                          "null: Setup makes one from its attribute defaults",
                          PointerValue(), MakePointerAccessor(&RoceNic::m_np),
                          MakePointerChecker<DcqcnNotificationPoint>())
            .AddTraceSource("CnpSent", "This NIC sent a CNP: (QP number it is about)",
                            MakeTraceSourceAccessor(&RoceNic::m_cnpTxTrace),
                            "ns3::RoceNic::QpTracedCallback")
            .AddTraceSource("QpRate", "A QP's congestion control changed its rate: (QP, bit/s)",
                            MakeTraceSourceAccessor(&RoceNic::m_rateTrace),
                            "ns3::RoceNic::QpRateTracedCallback")
            .AddTraceSource("CnpReceived", "A CNP arrived for a local QP: (QP number)",
                            MakeTraceSourceAccessor(&RoceNic::m_cnpRxTrace),
                            "ns3::RoceNic::QpTracedCallback");
    return tid;
}

RoceNic::RoceNic() = default;

void
RoceNic::DoDispose()
{
    m_wake.Cancel();
    for (auto& c : m_conns)
    {
        c.qp->Dispose();
        c.pacer->Dispose();
    }
    m_conns.clear();
    if (m_device)
    {
        m_device->SetOwner(nullptr, 0);
    }
    m_device = nullptr;
    m_np = nullptr;
    Object::DoDispose();
}

void
RoceNic::Setup(Ptr<RoceNetDevice> device, Ipv4Address address)
{
    m_device = device;
    m_address = address;
    if (!m_np)
    {
        m_np = CreateObject<DcqcnNotificationPoint>(); // CnpInterval, CnpPriority, CnpDscp
    }
    device->SetOwner(this, 0);
}

Ptr<RdmaQueuePair>
RoceNic::CreateQp()
{
    NS_ABORT_MSG_IF(!m_device, "ns3::RoceNic::CreateQp before Setup (the NIC has no port)");
    Ptr<RdmaQueuePair> qp = CreateObject<RdmaQueuePair>();
    qp->SetQpn(m_conns.NextQpn());
    qp->SetWakeCallback(MakeCallback(&RoceNic::Wake, this));
    Ptr<FlowPacer> pacer = CreateObject<FlowPacer>();
    pacer->SetLineRate(m_device->GetDataRate());
    m_conns.Add(Conn{qp, Ipv4Address(), Mac48Address(), 0, pacer, m_priority});
    return qp;
}

void
RoceNic::Connect(Ptr<RdmaQueuePair> qp, Ipv4Address remoteIp, Mac48Address remoteMac,
                 uint32_t remoteQpn, uint16_t srcPort)
{
    Conn& c = m_conns.At(qp->GetQpn());
    qp->SetRemoteQpn(remoteQpn);
    c.remoteIp = remoteIp;
    c.remoteMac = remoteMac;
    c.srcPort = srcPort;
    if (m_cc == "ns3::DcqcnRateControl")
    {
        Ptr<DcqcnRateControl> cc = CreateObject<DcqcnRateControl>();
        cc->TraceConnectWithoutContext("Rate",
                                       MakeCallback(&RoceNic::OnRate, this).Bind(qp->GetQpn()));
        c.pacer->SetRateControl(cc);
    }
    else
    {
        NS_ABORT_MSG_IF(m_cc != "none", "ns3::RoceNic::CongestionControl: unknown '"
                                            << m_cc << "' (ns3::DcqcnRateControl or none)");
    }
}

void
RoceNic::OnRate(uint32_t qpn, uint64_t /*oldRate*/, uint64_t newRate)
{
    m_rateTrace(qpn, newRate);
}

void
RoceNic::SetQpPriority(Ptr<RdmaQueuePair> qp, uint8_t priority)
{
    NS_ABORT_MSG_IF(priority > 7, "QP priority " << +priority << " is out of range 0..7");
    m_conns.At(qp->GetQpn()).priority = priority;
}

void
RoceNic::DestroyQp(Ptr<RdmaQueuePair> qp)
{
    const auto gone = m_conns.Remove(qp->GetQpn());
    if (!gone)
    {
        return;
    }
    gone->qp->Dispose();
    gone->pacer->Dispose();
    m_np->Forget(qp->GetQpn());
}

Ptr<DcqcnRateControl>
RoceNic::GetRateControl(Ptr<RdmaQueuePair> qp) const
{
    return m_conns.At(qp->GetQpn()).pacer->GetRateControl();
}

void
RoceNic::ScheduleTrySend(Time at)
{
    // Simulator::Now, IsExpired, GetDelayLeft, Cancel and Schedule, on the implementation
    // itself (SimulatorImplCache): a NIC wakes once or more for every frame it sends.
    SimulatorImpl* sim = SimulatorImplCache::Get();
    const Time delay = std::max(Time(0), at - sim->Now());
    if (!sim->IsExpired(m_wake))
    {
        if (sim->GetDelayLeft(m_wake) <= delay)
        {
            return;
        }
        sim->Cancel(m_wake);
    }
    m_wake = sim->Schedule(delay, MakeEvent(&RoceNic::TrySend, this));
}

void
RoceNic::Wake()
{
    ScheduleTrySend(Time(0));
}

void
RoceNic::FrameDequeued(uint32_t /*port*/, Ptr<const Packet> /*frame*/, uint8_t /*prio*/,
                       uint16_t /*from*/)
{
    ScheduleTrySend(Time(0));
}

Ptr<Packet>
RoceNic::Frame(const Conn& c, const TransportPacket& p, uint8_t priority, uint8_t dscp,
               bool ecnCapable) const
{
    RoceFrameSpec spec;
    Mac48Address src = Mac48Address::ConvertFrom(m_device->GetAddress());
    src.CopyTo(spec.srcMac.data());
    c.remoteMac.CopyTo(spec.dstMac.data());
    spec.vlan = m_vlan;
    spec.pcp = priority;
    spec.dscp = dscp;
    const bool data =
        p.payload > 0 || (p.opcode & 0x1f) == static_cast<uint8_t>(IbOperation::ReadRequest);
    spec.ecn = ecnCapable && data ? 2 : 0;
    spec.srcIpv4 = m_address.Get();
    spec.dstIpv4 = c.remoteIp.Get();
    spec.srcPort = c.srcPort;
    spec.transport = p;
    return MakeRoceV2Packet(spec, m_computeIcrc);
}

void
RoceNic::TrySend()
{
    if (!m_device)
    {
        return;
    }
    const Time now = SimulatorImplCache::Now();
    // One frame at most waits in each priority queue: the QPs feel a pause at once.
    auto roomFor = [this](uint8_t prio) { return m_device->GetQueueFrames(prio) == 0; };
    for (;;)
    {
        if (!m_cnps.empty() && roomFor(m_np->GetCnpPriority()))
        {
            m_device->Enqueue(m_cnps.front(), m_np->GetCnpPriority());
            m_cnps.pop_front();
            continue;
        }
        Time earliest = Time::Max();
        Conn* pick = nullptr;
        const size_t n = m_conns.size();
        const size_t first = m_conns.IndexFrom(m_rrQpn);
        for (size_t k = 0; k < n && !pick; ++k)
        {
            const size_t idx = (first + k) % n;
            Conn& c = m_conns[idx];
            if (!roomFor(c.priority) || !c.qp->HasPacket())
            {
                continue;
            }
            if (!c.qp->HasControlPacket() && c.pacer->GetNextSend() > now)
            {
                earliest = std::min(earliest, c.pacer->GetNextSend());
                c.qp->NotePaced();
                continue;
            }
            pick = &c;
            m_rrQpn = c.qp->GetQpn() + 1;
        }
        if (!pick)
        {
            if (earliest != Time::Max())
            {
                ScheduleTrySend(earliest);
            }
            return;
        }
        const bool control = pick->qp->HasControlPacket();
        const auto p = pick->qp->NextPacket();
        Ptr<Packet> frame = Frame(*pick, *p, pick->priority, m_dscp, m_ecnCapable);
        if (!control)
        {
            pick->pacer->OnSent(frame->GetSize());
        }
        m_device->Enqueue(frame, pick->priority);
    }
}

void
RoceNic::SendCnp(Conn& c)
{
    TransportPacket cnp;
    cnp.opcode = kIbOpcodeCnp;
    cnp.destQp = c.qp->GetRemoteQpn();
    cnp.becn = true;
    cnp.payload = 16; // reserved bytes (IBA annex A17.9.3)
    m_cnps.push_back(Frame(c, cnp, m_np->GetCnpPriority(), m_np->GetCnpDscp(), false));
    ++m_cnpsSent;
    m_cnpTxTrace(c.qp->GetQpn());
    ScheduleTrySend(Time(0));
}

void
RoceNic::FrameReceived(uint32_t /*port*/, Ptr<Packet> frame, const ParsedFrame& f)
{
    if (f.kind != FrameKind::Roce)
    {
        return;
    }
    Conn* found = m_conns.Find(f.destQp);
    if (!found)
    {
        return; // no such QP here: real NICs drop it silently too
    }
    Conn& c = *found;
    if (f.opcode == kIbOpcodeCnp)
    {
        ++m_cnpsReceived;
        m_cnpRxTrace(c.qp->GetQpn());
        c.pacer->OnCnp();
        return;
    }
    // Headers only: the L2/L3/L4 prefix plus BTH and extension headers.
    std::array<uint8_t, kFrameHeaderPrefix + kMaxTransportHeaderBytes> prefix;
    const uint32_t got =
        frame->CopyData(prefix.data(), std::min<uint32_t>(frame->GetSize(),
                                                          f.bthOffset + kMaxTransportHeaderBytes));
    TransportPacket tp;
    if (got <= f.bthOffset || !ReadTransportHeaders(prefix.data() + f.bthOffset,
                                                    got - static_cast<uint32_t>(f.bthOffset), tp))
    {
        return;
    }
    tp.payload = static_cast<uint32_t>(f.payloadLength);
    m_bytesReceived += tp.payload;
    if (f.ecn == 3)
    {
        ++m_ceReceived;
        // No congestion control, no notification point: nothing would act on a CNP.
        if (m_cc != "none" && m_np->OnMarked(c.qp->GetQpn()))
        {
            SendCnp(c);
        }
    }
    c.qp->Receive(tp);
}

} // namespace ns3
