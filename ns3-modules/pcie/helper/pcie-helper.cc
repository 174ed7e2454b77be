#include "pcie-helper.h"

namespace ns3
{

PcieHelper::PcieHelper()
{
    m_link.SetTypeId(PcieLink::GetTypeId());
    m_port.SetTypeId(PciePort::GetTypeId());
    m_dma.SetTypeId(PcieDmaEngine::GetTypeId());
    m_memory.SetTypeId(PcieMemoryTarget::GetTypeId());
    m_endpoint.SetTypeId(PcieEndpoint::GetTypeId());
}

void
PcieHelper::SetLinkAttribute(const std::string& name, const AttributeValue& value)
{
    m_link.Set(name, value);
}

void
PcieHelper::SetPortAttribute(const std::string& name, const AttributeValue& value)
{
    m_port.Set(name, value);
}

void
PcieHelper::SetDmaAttribute(const std::string& name, const AttributeValue& value)
{
    m_dma.Set(name, value);
}

void
PcieHelper::SetMemoryAttribute(const std::string& name, const AttributeValue& value)
{
    m_memory.Set(name, value);
}

void
PcieHelper::SetEndpointAttribute(const std::string& name, const AttributeValue& value)
{
    m_endpoint.Set(name, value);
}

std::string
PcieHelper::Check() const
{
    const std::pair<std::string, std::string> checks[] = {
        {"ns3::PcieLink", m_link.Create<PcieLink>()->Check()},
        {"ns3::PciePort", m_port.Create<PciePort>()->Check()},
        {"ns3::PcieDmaEngine", m_dma.Create<PcieDmaEngine>()->Check()},
        {"ns3::PcieMemoryTarget", m_memory.Create<PcieMemoryTarget>()->Check()},
    };
    for (const auto& [type, problem] : checks)
    {
        if (!problem.empty())
        {
            return type + ": " + problem;
        }
    }
    return "";
}

Ptr<PcieEndpoint>
PcieHelper::MakeEndpoint() const
{
    Ptr<PcieEndpoint> e = m_endpoint.Create<PcieEndpoint>();
    e->Setup(m_port.Create<PciePort>(), m_dma.Create<PcieDmaEngine>(),
             m_memory.Create<PcieMemoryTarget>());
    return e;
}

PcieHelper::Pair
PcieHelper::Install() const
{
    Pair pair;
    pair.error = Check();
    if (!pair.Ok())
    {
        return pair;
    }
    pair.link = m_link.Create<PcieLink>();
    pair.a = MakeEndpoint();
    pair.b = MakeEndpoint();
    pair.link->Connect(pair.a->GetPort(), pair.b->GetPort());
    pair.a->GetPort()->Start();
    pair.b->GetPort()->Start();
    return pair;
}

int64_t
PcieHelper::AssignStreams(const Pair& pair, int64_t stream)
{
    int64_t used = pair.a->GetPort()->AssignStreams(stream);
    used += pair.b->GetPort()->AssignStreams(stream + used);
    return used;
}

} // namespace ns3
