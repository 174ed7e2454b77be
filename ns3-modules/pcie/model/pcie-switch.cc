#include "ns3/pcie-switch.h"

#include "ns3/boolean.h"
#include "ns3/log.h"
#include "ns3/pcie-spec.h"
#include "ns3/simulator.h"
#include "ns3/trace-source-accessor.h"

#include <algorithm>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("PcieSwitch");
NS_OBJECT_ENSURE_REGISTERED(PcieSwitch);

TypeId
PcieSwitch::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::PcieSwitch")
            .SetParent<Object>()
            .SetGroupName("Pcie")
            .AddConstructor<PcieSwitch>()
            .AddAttribute("Latency",
                          "Cut-through latency, first bit in to first bit out (Broadcom "
                          "PEX88000 Gen4: 105 ns; PEX9700 Gen3: about 150 ns)",
                          TimeValue(NanoSeconds(105)), MakeTimeAccessor(&PcieSwitch::m_latency),
                          MakeTimeChecker(Time(0)))
            .AddAttribute("AcsRedirect",
                          "ACS P2P request/completion redirect: peer-to-peer TLPs go upstream "
                          "to the root complex, which sends them back down",
                          BooleanValue(false), MakeBooleanAccessor(&PcieSwitch::m_acsRedirect),
                          MakeBooleanChecker())
            .AddTraceSource("Forward", "A TLP was forwarded (TLP, ingress port, egress port)",
                            MakeTraceSourceAccessor(&PcieSwitch::m_forwardTrace),
                            "ns3::PcieSwitch::ForwardTracedCallback")
            .AddTraceSource("Unroutable", "A TLP no port claims was dropped (TLP, ingress port)",
                            MakeTraceSourceAccessor(&PcieSwitch::m_unroutableTrace),
                            "ns3::PcieSwitch::UnroutableTracedCallback");
    return tid;
}

PcieSwitch::PcieSwitch() : m_ports(1)
{
    m_table.SetDefaultPort(int(kUpstream));
}

void
PcieSwitch::DoDispose()
{
    m_ports.clear();
    Object::DoDispose();
}

void
PcieSwitch::Wire(uint32_t i)
{
    Ptr<PciePort> port = m_ports[i].port;
    port->SetReceiveCallback(
        Callback<void, const PcieTlp&>([this, i](const PcieTlp& tlp) { Receive(i, tlp); }));
    port->SetDequeueCallback(
        Callback<void, PcieFcType>([this, i](PcieFcType type) { Dequeued(i, type); }));
}

void
PcieSwitch::SetUpstreamPort(Ptr<PciePort> port)
{
    m_ports[kUpstream].port = port;
    Wire(kUpstream);
}

uint32_t
PcieSwitch::AddDownstreamPort(Ptr<PciePort> port)
{
    const auto i = static_cast<uint32_t>(m_ports.size());
    m_ports.push_back({port, {}});
    Wire(i);
    return i;
}

void
PcieSwitch::AddAddressRange(uint32_t port, uint64_t base, uint64_t size)
{
    m_table.AddAddressRange(int(port), base, size);
}

void
PcieSwitch::AddRequesterRange(uint32_t port, uint16_t first, uint16_t last)
{
    m_table.AddRequesterRange(int(port), first, last);
}

void
PcieSwitch::Receive(uint32_t in, const PcieTlp& tlp)
{
    int out = m_table.Route(tlp);
    if (out == PcieRoutingTable::kNone || uint32_t(out) == in || !m_ports[out].port)
    {
        // A TLP from upstream that no downstream port claims (an Unsupported Request in
        // the spec; no completion is generated here).
        NS_LOG_WARN("unroutable TLP at port " << in << " address " << tlp.address);
        ++m_unroutable;
        m_unroutableTrace(tlp, in);
        m_ports[in].port->Release(tlp);
        return;
    }
    if (m_acsRedirect && in != kUpstream && uint32_t(out) != kUpstream)
    {
        ++m_redirected;
        out = int(kUpstream);
    }
    const Ptr<PcieLink> link = m_ports[in].port->GetLink();
    const Time wire = link->WireTime(
        PcieTlpWireBytes(link->GetGeneration(), tlp.headerBytes, tlp.payload, tlp.ecrc));
    const Time wait = m_latency - wire;
    if (wait.IsStrictlyPositive())
    {
        Simulator::Schedule(wait, &PcieSwitch::Forward, this, in, uint32_t(out), tlp);
    }
    else
    {
        Forward(in, uint32_t(out), tlp);
    }
}

void
PcieSwitch::Forward(uint32_t in, uint32_t out, PcieTlp tlp)
{
    ++m_forwarded;
    m_forwardTrace(tlp, in, out);
    m_ports[out].held[int(tlp.Type())].push_back({in, tlp});
    m_ports[out].port->Enqueue(tlp);
}

void
PcieSwitch::Dequeued(uint32_t out, PcieFcType type)
{
    // Per type, a port sends in the order it was given TLPs: the front one just left.
    auto& held = m_ports[out].held[int(type)];
    const Held h = held.front();
    held.pop_front();
    m_ports[h.in].port->Release(h.tlp);
}

} // namespace ns3
