#include "ns3/nvswitch.h"

#include "ns3/abort.h"
#include "ns3/double.h"
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
            .AddAttribute("NvlsEfficiency",
                          "NVLS: the share of an egress link's rate that the sums and multicast "
                          "copies the switch makes get (each costs payload / efficiency of wire "
                          "time). Calibrated to NCCL's ~480 GB/s NVLS all-reduce busBw on 8 "
                          "H100 (nccl-tests#212); NCCL's own model takes 0.85 on Hopper",
                          DoubleValue(0.83), MakeDoubleAccessor(&NvSwitch::m_nvlsEfficiency),
                          MakeDoubleChecker<double>(0.01, 1.0))
            .AddTraceSource("Forward", "A packet left for its GPU: (packet, in port, out port)",
                            MakeTraceSourceAccessor(&NvSwitch::m_forwardTrace),
                            "ns3::NvSwitch::ForwardTracedCallback")
            .AddTraceSource("Reduce", "NVLS: the last contribution came in and the sum left",
                            MakeTraceSourceAccessor(&NvSwitch::m_reduceTrace),
                            "ns3::NvSwitch::ReduceTracedCallback");
    return tid;
}

void
NvSwitch::DoDispose()
{
    m_ports.clear();
    m_index.clear();
    m_owners.clear();
    m_groups.clear();
    m_sums.clear();
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
    switch (p.kind)
    {
    case NvlinkKind::Reduce:
        Sum(p, in);
        return;
    case NvlinkKind::Multicast:
        Copy(p, in);
        return;
    case NvlinkKind::Unicast:
        break;
    }
    const auto it = m_route.find(p.dst);
    NS_ABORT_MSG_IF(it == m_route.end(), "NVSwitch: no port toward GPU " << p.dst);
    m_forwardTrace(p, in, it->second);
    Emit(p, it->second, Owner{in, nullptr});
}

void
NvSwitch::Sum(const NvlinkPacket& p, uint32_t in)
{
    NS_ABORT_MSG_IF(!OffersNvls(), "NVSwitch gen" << m_generation << " cannot sum packets");
    uint32_t& summed = m_sums[{p.transfer, p.offset}];
    if (++summed < p.fanout)
    {
        m_ports[in]->Release(); // it is in the sum
        return;
    }
    m_sums.erase({p.transfer, p.offset});
    const auto it = m_route.find(p.dst);
    NS_ABORT_MSG_IF(it == m_route.end(), "NVSwitch: no port toward GPU " << p.dst);
    NvlinkPacket sum = p;
    sum.kind = NvlinkKind::Unicast;
    sum.src = kNvlinkSwitchSource;
    sum.extra = static_cast<uint32_t>(p.payload * (1.0 / m_nvlsEfficiency - 1.0) + 0.5);
    ++m_reduced;
    m_reduceTrace(sum);
    m_forwardTrace(sum, in, it->second);
    // The last contribution's buffer holds the sum until it leaves: a busy egress backs up
    // into the contributors.
    Emit(sum, it->second, Owner{in, nullptr});
}

void
NvSwitch::Copy(const NvlinkPacket& p, uint32_t in)
{
    NS_ABORT_MSG_IF(!OffersNvls(), "NVSwitch gen" << m_generation << " cannot multicast");
    const auto group = m_groups.find(p.transfer);
    NS_ABORT_MSG_IF(group == m_groups.end(), "NVSwitch: no multicast group " << p.transfer);
    auto copies = std::make_shared<uint32_t>(static_cast<uint32_t>(group->second.size()));
    for (uint32_t gpu : group->second)
    {
        const auto it = m_route.find(gpu);
        NS_ABORT_MSG_IF(it == m_route.end(), "NVSwitch: no port toward GPU " << gpu);
        NvlinkPacket copy = p;
        copy.kind = NvlinkKind::Unicast;
        copy.dst = gpu;
        copy.extra = static_cast<uint32_t>(p.payload * (1.0 / m_nvlsEfficiency - 1.0) + 0.5);
        ++m_copies;
        m_forwardTrace(copy, in, it->second);
        Emit(copy, it->second, Owner{in, copies});
    }
}

void
NvSwitch::Emit(NvlinkPacket p, uint32_t out, Owner owner)
{
    ++m_forwarded;
    m_owners[out].push_back(std::move(owner));
    m_ports[out]->Enqueue(p);
}

void
NvSwitch::Dequeued(Ptr<NvlinkPort> out)
{
    // The packet is on its way out: its ingress buffer is free again (a multicast
    // packet's once its last copy left; a sum's, its last contribution's).
    auto& owners = m_owners[m_index.at(PeekPointer(out))];
    const Owner owner = owners.front();
    owners.pop_front();
    if (owner.in == kNone || (owner.copies && --*owner.copies > 0))
    {
        return;
    }
    m_ports[owner.in]->Release();
}

} // namespace ns3
