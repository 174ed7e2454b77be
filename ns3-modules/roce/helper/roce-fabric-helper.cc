#include "roce-fabric-helper.h"

#include "roce-channel.h"

#include "ns3/abort.h"

#include <map>

namespace ns3
{

Ipv4Address
RoceFabricHelper::GetHostAddress(uint32_t i) const
{
    return Ipv4Address(0x0a000001 + i);
}

void
RoceFabricHelper::Install(const TopologySpec& spec)
{
    const auto& nodes = spec.Nodes();
    std::vector<Ptr<Node>> ns3Nodes(nodes.size());
    std::vector<uint32_t> hostIndex(nodes.size(), UINT32_MAX);
    for (uint32_t h = 0; h < spec.Hosts().size(); ++h)
    {
        hostIndex[spec.Hosts()[h]] = h;
    }
    for (uint32_t i = 0; i < nodes.size(); ++i)
    {
        ns3Nodes[i] = CreateObject<Node>();
    }
    for (uint32_t h : spec.Hosts())
    {
        m_hostNodes.Add(ns3Nodes[h]);
    }

    // One device per link end; remember which device of a node serves which link.
    std::vector<std::map<uint32_t, Ptr<RoceNetDevice>>> devOf(nodes.size());
    for (uint32_t l = 0; l < spec.Links().size(); ++l)
    {
        const auto& link = spec.Links()[l];
        Ptr<RoceChannel> cable = CreateObject<RoceChannel>();
        cable->SetAttribute("Delay", TimeValue(link.params.delay));
        for (uint32_t end : {link.a, link.b})
        {
            Ptr<RoceNetDevice> dev = CreateObject<RoceNetDevice>();
            dev->SetAddress(Mac48Address::Allocate());
            dev->SetDataRate(link.params.rate);
            ns3Nodes[end]->AddDevice(dev);
            dev->Attach(cable);
            devOf[end][l] = dev;
            m_devices.push_back(dev);
        }
    }

    for (uint32_t h = 0; h < spec.Hosts().size(); ++h)
    {
        const uint32_t node = spec.Hosts()[h];
        NS_ABORT_MSG_IF(devOf[node].size() != 1,
                        nodes[node].name << " has " << devOf[node].size()
                                         << " links; a host has exactly one NIC");
        Ptr<RoceNic> nic = CreateObject<RoceNic>();
        nic->Setup(devOf[node].begin()->second, GetHostAddress(h));
        ns3Nodes[node]->AggregateObject(nic);
        m_nics.push_back(nic);
    }

    const auto hops = spec.NextHops();
    for (uint32_t u = 0; u < nodes.size(); ++u)
    {
        if (!nodes[u].isSwitch)
        {
            continue;
        }
        Ptr<RoceSwitch> sw = CreateObject<RoceSwitch>();
        ns3Nodes[u]->AggregateObject(sw);
        m_switchNodes.Add(ns3Nodes[u]);
        std::map<uint32_t, uint32_t> portOfLink;
        for (const auto& [link, dev] : devOf[u])
        {
            portOfLink[link] = sw->AddPort(dev);
        }
        sw->ConfigureMmu();
        for (uint32_t h = 0; h < spec.Hosts().size(); ++h)
        {
            for (uint32_t link : hops[u][h])
            {
                sw->AddRoute(GetHostAddress(h), portOfLink.at(link));
            }
        }
        m_switches.push_back(sw);
    }
}

std::pair<Ptr<RdmaQueuePair>, Ptr<RdmaQueuePair>>
RoceFabricHelper::Connect(uint32_t a, uint32_t b)
{
    Ptr<RoceNic> na = GetNic(a);
    Ptr<RoceNic> nb = GetNic(b);
    Ptr<RdmaQueuePair> qa = na->CreateQp();
    Ptr<RdmaQueuePair> qb = nb->CreateQp();
    // Each connection its own UDP source port: the ECMP entropy rxe also gives.
    const uint16_t port = static_cast<uint16_t>(49152 + (m_connections++ % 16384));
    na->Connect(qa, nb->GetAddress(), Mac48Address::ConvertFrom(nb->GetDevice()->GetAddress()),
                qb->GetQpn(), port);
    nb->Connect(qb, na->GetAddress(), Mac48Address::ConvertFrom(na->GetDevice()->GetAddress()),
                qa->GetQpn(), port);
    return {qa, qb};
}

uint64_t
RoceFabricHelper::TotalDrops() const
{
    uint64_t n = 0;
    for (const auto& sw : m_switches)
    {
        n += sw->GetDrops();
    }
    return n;
}

uint64_t
RoceFabricHelper::TotalPfcFrames() const
{
    uint64_t n = 0;
    for (const auto& sw : m_switches)
    {
        n += sw->GetPausesSent();
    }
    return n;
}

uint64_t
RoceFabricHelper::TotalEcnMarks() const
{
    uint64_t n = 0;
    for (const auto& sw : m_switches)
    {
        n += sw->GetEcnMarks();
    }
    return n;
}

uint64_t
RoceFabricHelper::TotalCnps() const
{
    uint64_t n = 0;
    for (const auto& nic : m_nics)
    {
        n += nic->GetCnpsSent();
    }
    return n;
}

} // namespace ns3
