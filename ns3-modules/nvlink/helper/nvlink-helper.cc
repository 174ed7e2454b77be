#include "ns3/nvlink-helper.h"

#include "ns3/uinteger.h"

namespace ns3
{

NvlinkHelper::NvlinkHelper()
{
    m_link.SetTypeId(NvlinkLink::GetTypeId());
    m_port.SetTypeId(NvlinkPort::GetTypeId());
    m_switch.SetTypeId(NvSwitch::GetTypeId());
    m_gpu.SetTypeId(NvlinkGpu::GetTypeId());
}

void
NvlinkHelper::SetLinkAttribute(const std::string& name, const AttributeValue& value)
{
    m_link.Set(name, value);
}

void
NvlinkHelper::SetPortAttribute(const std::string& name, const AttributeValue& value)
{
    m_port.Set(name, value);
}

void
NvlinkHelper::SetSwitchAttribute(const std::string& name, const AttributeValue& value)
{
    m_switch.Set(name, value);
}

void
NvlinkHelper::SetGpuAttribute(const std::string& name, const AttributeValue& value)
{
    m_gpu.Set(name, value);
}

Ptr<NvlinkLink>
NvlinkHelper::MakeLink(uint32_t links, std::string& error) const
{
    Ptr<NvlinkLink> l = m_link.Create<NvlinkLink>();
    l->SetAttribute("Links", UintegerValue(links));
    error = l->Check();
    return error.empty() ? l : nullptr;
}

Ptr<NvlinkNode>
NvlinkHelper::MakeGpus(uint32_t gpus) const
{
    Ptr<NvlinkNode> node = CreateObject<NvlinkNode>();
    for (uint32_t g = 0; g < gpus; ++g)
    {
        node->AddGpu(m_gpu.Create<NvlinkGpu>());
    }
    return node;
}

NvlinkHelper::Node
NvlinkHelper::InstallSwitched(uint32_t gpus, const std::vector<uint32_t>& split) const
{
    Node out;
    Ptr<NvlinkNode> node = MakeGpus(gpus);
    for (size_t s = 0; s < split.size(); ++s)
    {
        Ptr<NvSwitch> sw = m_switch.Create<NvSwitch>();
        if (const std::string why = sw->Check(); !why.empty())
        {
            out.error = "ns3::NvSwitch: " + why;
            return out;
        }
        const uint32_t ports = NvSwitchPorts([&sw] {
            UintegerValue g;
            sw->GetAttribute("Generation", g);
            return static_cast<uint32_t>(g.Get());
        }());
        if (gpus * split[s] > ports)
        {
            out.error = "NVSwitch " + std::to_string(s) + ": " + std::to_string(gpus) + " GPUs x " +
                        std::to_string(split[s]) + " links need " +
                        std::to_string(gpus * split[s]) + " ports; this generation has " +
                        std::to_string(ports);
            return out;
        }
        node->AddSwitch(sw);
        for (uint32_t g = 0; g < gpus; ++g)
        {
            if (split[s] == 0)
            {
                continue;
            }
            Ptr<NvlinkLink> link = MakeLink(split[s], out.error);
            if (!link)
            {
                out.error = "ns3::NvlinkLink: " + out.error;
                return out;
            }
            Ptr<NvlinkPort> gp = m_port.Create<NvlinkPort>();
            Ptr<NvlinkPort> sp = m_port.Create<NvlinkPort>();
            link->Connect(gp, sp);
            node->AddLink(link, "gpu" + std::to_string(g) + "-nvs" + std::to_string(s));
            const uint32_t port = node->GetGpu(g)->AddPort(gp);
            sw->AddPort(sp, g);
            node->AddSwitchPort(g, static_cast<uint32_t>(s), port);
            for (uint32_t peer = 0; peer < gpus; ++peer)
            {
                if (peer != g)
                {
                    node->GetGpu(g)->AddRoute(peer, port);
                }
            }
        }
    }
    out.node = node;
    return out;
}

NvlinkHelper::Node
NvlinkHelper::InstallMesh(uint32_t gpus, const std::vector<Edge>& edges) const
{
    Node out;
    Ptr<NvlinkNode> node = MakeGpus(gpus);
    for (const auto& e : edges)
    {
        if (e.a >= gpus || e.b >= gpus || e.a == e.b)
        {
            out.error = "a mesh edge joins GPU " + std::to_string(e.a) + " and GPU " +
                        std::to_string(e.b) + " of " + std::to_string(gpus);
            return out;
        }
        Ptr<NvlinkLink> link = MakeLink(e.links, out.error);
        if (!link)
        {
            out.error = "ns3::NvlinkLink: " + out.error;
            return out;
        }
        Ptr<NvlinkPort> pa = m_port.Create<NvlinkPort>();
        Ptr<NvlinkPort> pb = m_port.Create<NvlinkPort>();
        link->Connect(pa, pb);
        node->AddLink(link, "gpu" + std::to_string(e.a) + "-gpu" + std::to_string(e.b));
        node->GetGpu(e.a)->AddRoute(e.b, node->GetGpu(e.a)->AddPort(pa));
        node->GetGpu(e.b)->AddRoute(e.a, node->GetGpu(e.b)->AddPort(pb));
    }
    out.node = node;
    return out;
}

} // namespace ns3
