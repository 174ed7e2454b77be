#include "ns3/roce-switch.h"

#include "ns3/abort.h"
#include "ns3/enum.h"
#include "ns3/log.h"
#include "ns3/node.h"
#include "ns3/pfc-header.h"
#include "ns3/roce-channel.h"
#include "ns3/roce-packet.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

#include <algorithm>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("RoceSwitch");
NS_OBJECT_ENSURE_REGISTERED(RoceSwitch);

const char*
SwitchDropReasonName(SwitchDropReason r)
{
    switch (r)
    {
    case SwitchDropReason::BufferFull:
        return "buffer_full";
    case SwitchDropReason::HeadroomOverflow:
        return "headroom_overflow";
    case SwitchDropReason::NoRoute:
        return "no_route";
    case SwitchDropReason::NotIp:
        return "not_ip";
    case SwitchDropReason::Malformed:
        return "malformed";
    case SwitchDropReason::PfcWatchdog:
        return "pfc_watchdog";
    }
    return "unknown";
}

TypeId
RoceSwitch::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::RoceSwitch")
            .SetParent<Object>()
            .SetGroupName("Roce")
            .AddConstructor<RoceSwitch>()
            .AddAttribute("EcmpSeed", "Added to the node id to seed this switch's ECMP hash",
                          UintegerValue(0), MakeUintegerAccessor(&RoceSwitch::m_ecmpSeed),
                          MakeUintegerChecker<uint32_t>())
            .AddAttribute("PauseQuanta",
                          "Quanta in each PFC XOFF frame (refreshed at half their time)",
                          UintegerValue(0xffff), MakeUintegerAccessor(&RoceSwitch::m_pauseQuanta),
                          MakeUintegerChecker<uint16_t>(1))
            .AddAttribute("PfcWatchdogRecovery",
                          "What the ports' PFC watchdog does once it fires: ignore the "
                          "priority's pauses this long (Junos' default recovery, 200 ms; 0: "
                          "report only). Detection is RoceNetDevice::PfcWatchdogTime",
                          TimeValue(MilliSeconds(200)),
                          MakeTimeAccessor(&RoceSwitch::m_watchdogRecovery),
                          MakeTimeChecker(Time(0)))
            .AddAttribute(
                "PfcWatchdogAction",
                "What the ports' PFC watchdog does for its recovery: Forward (ignore "
                "the pauses, send) or Drop (empty the queue, drop what arrives; "
                "counted as pfc_watchdog drops)",
                EnumValue(RoceNetDevice::Forward), MakeEnumAccessor(&RoceSwitch::m_watchdogAction),
                MakeEnumChecker(RoceNetDevice::Forward, "Forward", RoceNetDevice::Drop, "Drop"))
            .AddAttribute("LinkDetectionTime",
                          "How long after one of its links goes down, or comes back, the "
                          "fabric's ECMP routes change: the link's loss detected, and "
                          "routing converged (a fault: link down)",
                          TimeValue(MilliSeconds(1)),
                          MakeTimeAccessor(&RoceSwitch::m_linkDetection), MakeTimeChecker(Time()))
            .AddAttribute("MaxFrameBytes", "Largest frame, for sizing PFC headroom",
                          UintegerValue(9018), MakeUintegerAccessor(&RoceSwitch::m_maxFrameBytes),
                          MakeUintegerChecker<uint32_t>(64))
            .AddAttribute("EcnMarkingPoint",
                          "When RED decides a frame's ECN mark: Dequeue (on the queue it "
                          "leaves behind, as HPCC's simulator) or Enqueue (on the queue it joins)",
                          EnumValue(Dequeue), MakeEnumAccessor(&RoceSwitch::m_markingPoint),
                          MakeEnumChecker(Dequeue, "Dequeue", Enqueue, "Enqueue"))
            .AddTraceSource("Drop", "A frame was dropped: (frame, ingress port, reason)",
                            MakeTraceSourceAccessor(&RoceSwitch::m_dropTrace),
                            "ns3::RoceSwitch::DropTracedCallback")
            .AddTraceSource("EcnMark", "A frame was marked CE: (frame, egress port, priority)",
                            MakeTraceSourceAccessor(&RoceSwitch::m_ecnTrace),
                            "ns3::RoceSwitch::EcnTracedCallback")
            .AddTraceSource("Pfc", "PFC sent upstream: (ingress port, priority, pause=true/resume)",
                            MakeTraceSourceAccessor(&RoceSwitch::m_pfcTrace),
                            "ns3::RoceSwitch::PfcTracedCallback");
    return tid;
}

RoceSwitch::RoceSwitch()
    : m_mmu(CreateObject<SwitchMmu>()),
      m_uniform(CreateObject<UniformRandomVariable>())
{
}

void
RoceSwitch::DoDispose()
{
    for (auto& port : m_ports)
    {
        for (auto& ev : port.refresh)
        {
            ev.Cancel();
        }
        port.device->SetOwner(nullptr, 0); // a frame still on its way is the port's own
        port.device = nullptr;
    }
    m_ports.clear();
    m_mmu = nullptr;
    Object::DoDispose();
}

uint32_t
RoceSwitch::AddPort(Ptr<RoceNetDevice> device)
{
    const uint32_t index = static_cast<uint32_t>(m_ports.size());
    NS_ABORT_MSG_IF(index >= kMaxPorts, "RoceSwitch: more than " << kMaxPorts << " ports");
    m_ports.push_back(Port{device, {}, {}});
    m_portOf[PeekPointer(device)] = index;
    device->SetAttribute("PfcWatchdogRecovery", TimeValue(m_watchdogRecovery));
    device->SetAttribute("PfcWatchdogAction", EnumValue(m_watchdogAction));
    device->SetOwner(this, index);
    return index;
}

std::vector<uint64_t>
RoceSwitch::Headroom() const
{
    // Headroom absorbs what arrives after XOFF is decided: the frame being
    // received, the XOFF's own trip upstream behind a frame in transmission,
    // the upstream frame already started, and two cable delays of data.
    std::vector<uint64_t> headroom;
    for (const auto& port : m_ports)
    {
        Ptr<RoceChannel> ch = DynamicCast<RoceChannel>(port.device->GetChannel());
        const Time delay = ch ? ch->GetLinkDelay() : Time(0);
        const double bdp = port.device->GetDataRate().GetBitRate() * delay.GetSeconds() / 8;
        headroom.push_back(static_cast<uint64_t>(2 * bdp) +
                           3 * RoceNetDevice::WireBytes(m_maxFrameBytes) + 64);
    }
    return headroom;
}

int64_t
RoceSwitch::AssignStreams(int64_t stream)
{
    m_uniform->SetStream(stream);
    return 1;
}

std::string
RoceSwitch::MmuProblem() const
{
    return m_mmu->PortsProblem(Headroom());
}

void
RoceSwitch::ConfigureMmu()
{
    m_mmu->ConfigurePorts(Headroom());
}

uint32_t
RoceSwitch::RouteSet4(uint32_t dst) const
{
    const uint32_t offset = dst - m_routes4Base;
    if (offset < m_routes4Dense.size())
    {
        const uint8_t set = m_routes4Dense[offset];
        if (set < kDenseInMap)
        {
            return set;
        }
        if (set == kDenseNone)
        {
            return kNoRoute;
        }
    }
    const auto it = m_routes4.find(dst);
    return it == m_routes4.end() ? kNoRoute : it->second;
}

void
RoceSwitch::AddRoute(Ipv4Address dst, uint32_t port)
{
    NS_ABORT_MSG_IF(port >= m_ports.size(), "route to port " << port << " that does not exist");
    const uint32_t before = RouteSet4(dst.Get());
    std::vector<uint32_t> ports = before == kNoRoute ? std::vector<uint32_t>{} : m_portSets[before];
    ports.push_back(port);
    const auto [set, fresh] =
        m_portSetIndex.try_emplace(ports, static_cast<uint32_t>(m_portSets.size()));
    if (fresh)
    {
        m_portSets.push_back(ports);
    }
    if (m_routes4Dense.empty() && m_routes4.empty())
    {
        m_routes4Base = dst.Get(); // the first route: the table starts here
    }
    const uint32_t offset = dst.Get() - m_routes4Base;
    if (offset < kDenseSpan)
    {
        if (offset >= m_routes4Dense.size())
        {
            m_routes4Dense.resize(offset + 1, kDenseNone); // hosts in address order: at the end
        }
        if (set->second < kDenseInMap)
        {
            // (A set's number only grows as a route takes more ports: a route once in
            // the map never comes back to a small number.)
            m_routes4Dense[offset] = static_cast<uint8_t>(set->second);
            return;
        }
        m_routes4Dense[offset] = kDenseInMap;
    }
    m_routes4[dst.Get()] = set->second;
}

std::vector<uint32_t>
RoceSwitch::GetRoute(Ipv4Address dst) const
{
    const uint32_t set = RouteSet4(dst.Get());
    return set == kNoRoute ? std::vector<uint32_t>{} : m_portSets[set];
}

void
RoceSwitch::ClearRoutes()
{
    m_routes4Dense.clear(); // the port sets stay: the next routes mostly use them again
    m_routes4.clear();
    m_routes6.clear();
}

uint32_t
RoceSwitch::GetPortIndex(Ptr<const RoceNetDevice> device) const
{
    const auto it = m_portOf.find(PeekPointer(device));
    NS_ABORT_MSG_IF(it == m_portOf.end(), "RoceSwitch: the device is not a port here");
    return it->second;
}

void
RoceSwitch::AddRoute(Ipv6Address dst, uint32_t port)
{
    NS_ABORT_MSG_IF(port >= m_ports.size(), "route to port " << port << " that does not exist");
    uint8_t b[16];
    dst.GetBytes(b);
    m_routes6[std::string(reinterpret_cast<char*>(b), 16)].push_back(port);
}

const std::vector<uint32_t>*
RoceSwitch::Lookup(const ParsedFrame& f) const
{
    if (f.ipVersion == 4)
    {
        const uint32_t dst = static_cast<uint32_t>(f.dstIp[0]) << 24 | f.dstIp[1] << 16 |
                             f.dstIp[2] << 8 | f.dstIp[3];
        const uint32_t set = RouteSet4(dst);
        return set == kNoRoute ? nullptr : &m_portSets[set];
    }
    auto it = m_routes6.find(std::string(reinterpret_cast<const char*>(f.dstIp.data()), 16));
    return it == m_routes6.end() ? nullptr : &it->second;
}

uint32_t
RoceSwitch::SelectPort(const std::vector<uint32_t>& ports, const ParsedFrame& f) const
{
    if (ports.size() == 1)
    {
        return ports[0];
    }
    // FNV-1a over the 5-tuple, seeded per switch so tiers do not polarise.
    if (!m_ecmpNodeId)
    {
        // The node's id, asked once: Node::GetId() is a call into ns-3 at every frame else.
        Ptr<Node> node = m_ports.empty() ? nullptr : m_ports[0].device->GetNode();
        if (node)
        {
            m_ecmpNodeId = node->GetId();
        }
    }
    const uint32_t h = Hash5Tuple(2166136261u ^ (m_ecmpSeed + m_ecmpNodeId.value_or(0)), f);
    return ports[h % ports.size()];
}

uint32_t
RoceSwitch::Hash5Tuple(uint32_t h, const ParsedFrame& f)
{
    auto mix = [&h](uint8_t b) {
        h ^= b;
        h *= 16777619u;
    };
    const size_t ipBytes = f.ipVersion == 4 ? 4 : 16;
    for (size_t i = 0; i < ipBytes; ++i)
    {
        mix(f.srcIp[i]);
        mix(f.dstIp[i]);
    }
    mix(f.ipProtocol);
    mix(f.srcPort >> 8);
    mix(f.srcPort & 0xff);
    mix(f.dstPort >> 8);
    mix(f.dstPort & 0xff);
    return h;
}

void
RoceSwitch::Drop(Ptr<const Packet> frame, uint32_t port, SwitchDropReason reason)
{
    ++m_drops;
    ++m_dropsByReason[static_cast<size_t>(reason)];
    m_dropTrace(frame, port, reason);
}

std::vector<Ptr<RoceNetDevice>>
RoceSwitch::GetEgressHolding(Ptr<const RoceNetDevice> in, uint8_t prio) const
{
    std::vector<Ptr<RoceNetDevice>> out;
    const auto it = m_portOf.find(PeekPointer(in));
    if (it == m_portOf.end())
    {
        return out;
    }
    for (const Port& port : m_ports)
    {
        if (port.device->IsHolding(prio, static_cast<uint16_t>(it->second)))
        {
            out.push_back(port.device);
        }
    }
    return out;
}

void
RoceSwitch::WatchdogDropped(uint32_t /*outPort*/, Ptr<const Packet> frame, uint8_t /*prio*/,
                            uint16_t inPort)
{
    // The Drop trace names the port it came in by; its buffer is freed by FrameDequeued,
    // which follows.
    Drop(frame, inPort, SwitchDropReason::PfcWatchdog);
}

void
RoceSwitch::FrameReceived(uint32_t inPort, Ptr<Packet> frame, const ParsedFrame& f)
{
    if (f.kind == FrameKind::Malformed)
    {
        Drop(frame, inPort, SwitchDropReason::Malformed);
        return;
    }
    if (f.kind != FrameKind::Roce && f.kind != FrameKind::Ip)
    {
        Drop(frame, inPort, SwitchDropReason::NotIp);
        return;
    }
    const auto* ports = Lookup(f);
    if (!ports)
    {
        Drop(frame, inPort, SwitchDropReason::NoRoute);
        return;
    }
    const uint32_t outPort = SelectPort(*ports, f);
    const uint8_t prio = f.vlan ? f.pcp : static_cast<uint8_t>(f.dscp >> 3);
    const uint32_t bytes = frame->GetSize();

    if (m_mmu->Admit(inPort, outPort, prio, bytes) == SwitchMmu::Charge::Dropped)
    {
        Drop(frame, inPort,
             m_mmu->IsLossless(prio) ? SwitchDropReason::HeadroomOverflow
                                     : SwitchDropReason::BufferFull);
        return;
    }
    Port& out = m_ports[outPort];
    if (m_markingPoint == Enqueue)
    {
        MaybeMark(frame, f, outPort, prio, out.device->GetQueueBytes(prio));
    }
    out.device->Enqueue(frame, prio, static_cast<uint16_t>(inPort));
    CheckPause(inPort, prio);
}

void
RoceSwitch::MaybeMark(Ptr<Packet> frame, const ParsedFrame& f, uint32_t port, uint8_t prio,
                      uint64_t queueBytes)
{
    const double p = m_mmu->MarkProbability(port, prio, queueBytes);
    if (p > 0 && (p >= 1 || m_uniform->GetValue() < p) && MarkCongestionExperienced(frame, f))
    {
        ++m_ecnMarks;
        m_ecnTrace(frame, port, prio);
    }
}

void
RoceSwitch::BeforeTransmit(uint32_t outPort, Ptr<Packet> frame, uint8_t prio)
{
    if (m_markingPoint != Dequeue || !m_mmu->IsEcnEnabled())
    {
        return;
    }
    // What this frame leaves behind.
    const uint64_t queueBytes = m_ports[outPort].device->GetQueueBytes(prio);
    if (m_mmu->MarkProbability(outPort, prio, queueBytes) > 0)
    {
        MaybeMark(frame, PeekFrame(frame), outPort, prio, queueBytes);
    }
}

void
RoceSwitch::FrameDequeued(uint32_t outPort, Ptr<const Packet> frame, uint8_t prio, uint16_t inPort)
{
    // Its size is the one admitted: a frame's bytes may change on its way, never its size.
    m_mmu->Release(inPort, outPort, prio, frame->GetSize());
    CheckPause(inPort, prio);
}

void
RoceSwitch::CheckPause(uint32_t inPort, uint8_t prio)
{
    Port& port = m_ports[inPort];
    if (!port.pausing[prio] && m_mmu->ShouldPause(inPort, prio))
    {
        port.pausing[prio] = true;
        m_pfcTrace(inPort, prio, true);
        SendPause(inPort, prio);
    }
    else if (port.pausing[prio] && m_mmu->ShouldResume(inPort, prio))
    {
        port.pausing[prio] = false;
        port.refresh[prio].Cancel();
        ++m_pausesSent;
        port.device->SendPause(prio, 0);
        m_pfcTrace(inPort, prio, false);
    }
}

void
RoceSwitch::SendPause(uint32_t inPort, uint8_t prio)
{
    Port& port = m_ports[inPort];
    if (!port.pausing[prio])
    {
        return;
    }
    ++m_pausesSent;
    port.device->SendPause(prio, m_pauseQuanta);
    const Time pause = PfcHeader::QuantaToTime(m_pauseQuanta, port.device->GetDataRate());
    port.refresh[prio] = Simulator::Schedule(pause / 2, &RoceSwitch::SendPause, this, inPort, prio);
}

} // namespace ns3
