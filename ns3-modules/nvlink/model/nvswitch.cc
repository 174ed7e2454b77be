#include "ns3/nvswitch.h"

#include "ns3/abort.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(NvSwitch);

uint32_t
NvSwitchPorts(uint32_t generation)
{
    // ref 2.2: gen1 (DGX-2) 18 NVLink2 ports; gen2 (HGX A100) 36 [U]; gen3 (HGX H100) 64 [S];
    // gen4, Blackwell's NVLink Switch chip: 72 (a tray's 144 ports over two chips [P]/[D]).
    static const uint32_t ports[] = {0, 18, 36, 64, 72};
    return generation >= 1 && generation <= 4 ? ports[generation] : 0;
}

TypeId
NvSwitch::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::NvSwitch")
            .SetParent<Object>()
            .SetGroupName("Nvlink")
            .AddConstructor<NvSwitch>()
            .AddAttribute("Latency",
                          "From a packet's last byte in to its first byte out (SimAI uses 25 ns "
                          "per GPU-NVSwitch hop; not a measurement)",
                          TimeValue(NanoSeconds(25)), MakeTimeAccessor(&NvSwitch::m_latency),
                          MakeTimeChecker(Time(0)))
            .AddAttribute("Generation",
                          "NVSwitch generation: its port count (1: 18, 2: 36, 3: 64, 4: 72)",
                          UintegerValue(3), MakeUintegerAccessor(&NvSwitch::m_generation),
                          MakeUintegerChecker<uint32_t>())
            .AddTraceSource("Forward", "A packet left for its GPU: (packet, in port, out port)",
                            MakeTraceSourceAccessor(&NvSwitch::m_forwardTrace),
                            "ns3::NvSwitch::ForwardTracedCallback");
    return tid;
}

void
NvSwitch::DoDispose()
{
    m_ports.clear();
    m_index.clear();
    Object::DoDispose();
}

std::string
NvSwitch::Check() const
{
    const uint32_t max = NvSwitchPorts(m_generation);
    if (max == 0)
    {
        return "Generation " + std::to_string(m_generation) +
               " is not an NVSwitch generation (1 to 4)";
    }
    return "";
}

uint32_t
NvSwitch::AddPort(Ptr<NvlinkPort> port, uint32_t gpu)
{
    const auto i = static_cast<uint32_t>(m_ports.size());
    m_ports.push_back(port);
    m_index[PeekPointer(port)] = i;
    m_route[gpu] = i;
    m_owners.emplace_back();
    port->SetReceiveCallback(MakeCallback(&NvSwitch::Received, this));
    port->SetDequeuedCallback(MakeCallback(&NvSwitch::Dequeued, this));
    return i;
}

void
NvSwitch::Received(const NvlinkPacket& p, Ptr<NvlinkPort> in)
{
    Simulator::Schedule(m_latency, &NvSwitch::Forward, this, p, m_index.at(PeekPointer(in)));
}

void
NvSwitch::Forward(NvlinkPacket p, uint32_t in)
{
    const auto it = m_route.find(p.dst);
    NS_ABORT_MSG_IF(it == m_route.end(), "NVSwitch: no port toward GPU " << p.dst);
    ++m_forwarded;
    m_forwardTrace(p, in, it->second);
    m_owners[it->second].push_back(in);
    m_ports[it->second]->Enqueue(p);
}

void
NvSwitch::Dequeued(Ptr<NvlinkPort> out)
{
    // The packet is on its way out: its ingress buffer is free again.
    auto& owners = m_owners[m_index.at(PeekPointer(out))];
    const uint32_t in = owners.front();
    owners.pop_front();
    m_ports[in]->Release();
}

} // namespace ns3
