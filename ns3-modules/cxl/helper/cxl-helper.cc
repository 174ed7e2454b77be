#include "ns3/cxl-helper.h"

#include "ns3/cxl-port.h"

#include <fmt/format.h>

#include <cmath>

namespace ns3
{

CxlHelper::CxlHelper()
{
    m_link.SetTypeId(CxlLink::GetTypeId());
    m_expander.SetTypeId(CxlMemoryExpander::GetTypeId());
    m_client.SetTypeId(CxlMemoryClient::GetTypeId());
    m_switch.SetTypeId(CxlSwitch::GetTypeId());
}

void
CxlHelper::SetLinkAttribute(const std::string& name, const AttributeValue& value)
{
    m_link.Set(name, value);
}

void
CxlHelper::SetExpanderAttribute(const std::string& name, const AttributeValue& value)
{
    m_expander.Set(name, value);
}

void
CxlHelper::SetClientAttribute(const std::string& name, const AttributeValue& value)
{
    m_client.Set(name, value);
}

void
CxlHelper::SetSwitchAttribute(const std::string& name, const AttributeValue& value)
{
    m_switch.Set(name, value);
}

CxlHelper::Direct
CxlHelper::InstallDirect() const
{
    Direct d;
    d.link = m_link.Create<CxlLink>();
    d.error = d.link->Check();
    if (!d.Ok())
    {
        return d;
    }
    d.expander = m_expander.Create<CxlMemoryExpander>();
    d.client = m_client.Create<CxlMemoryClient>();
    Ptr<CxlPort> host = CreateObject<CxlPort>();
    d.link->Connect(host, d.expander->AddPort());
    d.client->SetPort(host);
    return d;
}

CxlHelper::Pool
CxlHelper::InstallPool(uint32_t hosts) const
{
    Pool p;
    p.deviceLink = m_link.Create<CxlLink>();
    p.error = p.deviceLink->Check();
    p.expander = m_expander.Create<CxlMemoryExpander>();
    if (p.Ok() && (hosts == 0 || hosts > p.expander->GetLogicalDevices()))
    {
        p.error = fmt::format("{} hosts pool an expander of {} logical devices (LogicalDevices)",
                              hosts, p.expander->GetLogicalDevices());
    }
    if (!p.Ok())
    {
        return p;
    }
    p.cxlSwitch = m_switch.Create<CxlSwitch>();
    p.deviceLink->Connect(p.cxlSwitch->AddDownstreamPort(), p.expander->AddPort());
    for (uint32_t h = 0; h < hosts; ++h)
    {
        Ptr<CxlLink> link = m_link.Create<CxlLink>();
        Ptr<CxlPort> port = CreateObject<CxlPort>();
        link->Connect(port, p.cxlSwitch->AddUpstreamPort());
        Ptr<CxlMemoryClient> client = m_client.Create<CxlMemoryClient>();
        client->SetPort(port);
        p.error = p.cxlSwitch->Bind(h, 0, h);
        NS_ASSERT(p.Ok());
        p.hostLinks.push_back(link);
        p.clients.push_back(client);
    }
    return p;
}

Time
CxlHelper::IdleReadLatency(const Direct& d)
{
    const CxlLinkSpec spec = d.link->GetSpec();
    // A line back: one header slot and four data slots, in whole flits.
    const uint32_t responseFlits = static_cast<uint32_t>(
        std::ceil((1.0 + CxlDataSlots(CxlMessageType::S2mDrs)) / spec.Slots()));
    TimeValue host;
    d.client->GetAttribute("HostLatency", host);
    return host.Get() + 2 * d.link->GetDelay() + (1 + responseFlits) * d.link->GetFlitTime() +
           d.expander->GetControllerLatency() + d.expander->GetLineTime() +
           d.expander->GetDramLatency();
}

} // namespace ns3
