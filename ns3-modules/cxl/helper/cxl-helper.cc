#include "ns3/cxl-helper.h"

#include "ns3/abort.h"
#include "ns3/cxl-port.h"
#include "ns3/uinteger.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iterator>

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

std::vector<Ptr<CxlLink>>
CxlHelper::Servers::AllLinks() const
{
    std::vector<Ptr<CxlLink>> all = poolHostLinks;
    all.insert(all.end(), fabricLinks.begin(), fabricLinks.end());
    for (const auto* byServer : {&expanderLinks, &deviceLinks})
    {
        for (const auto& server : *byServer)
        {
            std::copy_if(server.begin(), server.end(), std::back_inserter(all),
                         [](const Ptr<CxlLink>& l) { return l != nullptr; });
        }
    }
    for (const auto& server : links)
    {
        all.insert(all.end(), server.begin(), server.end());
    }
    if (poolLink)
    {
        all.push_back(poolLink);
    }
    return all;
}

void
CxlHelper::Servers::Dispose()
{
    for (const auto& link : AllLinks())
    {
        link->Dispose();
    }
    for (const auto& cpu : cpus)
    {
        cpu->Dispose();
    }
    for (const auto& server : expanders)
    {
        for (const auto& e : server)
        {
            e->Dispose();
        }
    }
    for (const auto& leaf : leafSwitches)
    {
        leaf->Dispose();
    }
    for (const auto& server : portSwitches)
    {
        for (const auto& sw : server)
        {
            if (sw)
            {
                sw->Dispose();
            }
        }
    }
    for (const Ptr<Object>& o : {Ptr<Object>(poolSwitch), Ptr<Object>(pool), Ptr<Object>(manager)})
    {
        if (o)
        {
            o->Dispose();
        }
    }
}

CxlHelper::SharedPort
CxlHelper::InstallSharedPort() const
{
    SharedPort p;
    p.rootLink = m_link.Create<CxlLink>();
    p.error = p.rootLink->Check();
    if (!p.Ok())
    {
        return p;
    }
    p.cpu = CreateObject<CxlCpu>();
    p.cxlSwitch = m_switch.Create<CxlSwitch>();
    Ptr<CxlPort> root = CreateObject<CxlPort>();
    p.rootLink->Connect(root, p.cxlSwitch->AddUpstreamPort());
    p.cpu->AddRootPort(root);
    p.expander = m_expander.Create<CxlMemoryExpander>();
    // A link's ports keep no pointer to it: the caller holds every link (disposing one
    // disposes its two ports).
    p.deviceLinks = {m_link.Create<CxlLink>(), m_link.Create<CxlLink>()};
    p.deviceLinks[0]->Connect(p.cxlSwitch->AddDownstreamPort(), p.expander->AddPort());
    p.gpu = CreateObject<CxlDmaEngine>();
    Ptr<CxlPort> gpuPort = CreateObject<CxlPort>();
    p.deviceLinks[1]->Connect(p.cxlSwitch->AddDownstreamPort(), gpuPort);
    p.gpu->SetPort(gpuPort);
    p.error = p.cxlSwitch->Bind(0, 0, 0);
    if (p.Ok())
    {
        p.error = p.cxlSwitch->BindDevice(0, 1);
    }
    p.cpu->TraceConnectWithoutContext("IoRx", MakeCallback(&CxlDmaEngine::Delivered, p.gpu));
    return p;
}

CxlHelper::Servers
CxlHelper::InstallServers(uint32_t servers, uint32_t expanders, bool hasPool,
                          const std::vector<uint32_t>& pool,
                          const std::vector<std::vector<uint32_t>>& leaves,
                          const std::vector<bool>& shared) const
{
    Servers out;
    if (const std::string wrong = m_link.Create<CxlLink>()->Check(); !wrong.empty())
    {
        out.error = wrong;
        return out;
    }
    if (hasPool)
    {
        out.pool = m_expander.Create<CxlMemoryExpander>();
        out.pool->SetAttribute("LogicalDevices", UintegerValue(std::max<size_t>(pool.size(), 1)));
        out.poolSwitch = m_switch.Create<CxlSwitch>();
        out.poolLink = m_link.Create<CxlLink>();
        out.poolLink->Connect(out.poolSwitch->AddDownstreamPort(), out.pool->AddPort());
    }
    out.poolRootPort.assign(servers, CxlCpu::kLocal);
    for (uint32_t h = 0; h < servers; ++h)
    {
        Ptr<CxlCpu> cpu = CreateObject<CxlCpu>();
        out.expanders.emplace_back();
        out.links.emplace_back();
        out.expanderLinks.emplace_back(expanders, nullptr);
        out.deviceLinks.emplace_back(expanders, nullptr);
        out.portSwitches.emplace_back(expanders, nullptr);
        out.devicePorts.emplace_back(expanders, nullptr);
        for (uint32_t k = 0; k < expanders; ++k)
        {
            Ptr<CxlLink> link = m_link.Create<CxlLink>();
            Ptr<CxlMemoryExpander> e = m_expander.Create<CxlMemoryExpander>();
            Ptr<CxlPort> root = CreateObject<CxlPort>();
            cpu->AddRootPort(root);
            out.expanders.back().push_back(e);
            out.links.back().push_back(link);
            if (k >= shared.size() || !shared[k])
            {
                link->Connect(root, e->AddPort());
                continue;
            }
            // A switch on the root port: the expander and the device below it.
            Ptr<CxlSwitch> sw = m_switch.Create<CxlSwitch>();
            link->Connect(root, sw->AddUpstreamPort());
            Ptr<CxlLink> toExpander = m_link.Create<CxlLink>();
            toExpander->Connect(sw->AddDownstreamPort(), e->AddPort());
            Ptr<CxlLink> toDevice = m_link.Create<CxlLink>();
            Ptr<CxlPort> device = CreateObject<CxlPort>();
            toDevice->Connect(sw->AddDownstreamPort(), device);
            const std::string bound = sw->Bind(0, 0, 0) + sw->BindDevice(0, 1);
            NS_ABORT_MSG_IF(!bound.empty(), bound);
            out.expanderLinks.back()[k] = toExpander;
            out.deviceLinks.back()[k] = toDevice;
            out.portSwitches.back()[k] = sw;
            out.devicePorts.back()[k] = device;
        }
        out.cpus.push_back(cpu);
    }
    for (size_t ld = 0; hasPool && ld < pool.size(); ++ld)
    {
        const uint32_t h = pool[ld];
        if (h >= servers)
        {
            out.error = fmt::format("pool host h{}: there are {} servers", h, servers);
            return out;
        }
    }
    if (!leaves.empty())
    {
        out.error = AddLeaves(out, pool, leaves);
        return out;
    }
    for (size_t ld = 0; hasPool && ld < pool.size(); ++ld)
    {
        const uint32_t h = pool[ld];
        Ptr<CxlLink> link = m_link.Create<CxlLink>();
        Ptr<CxlPort> root = CreateObject<CxlPort>();
        link->Connect(root, out.poolSwitch->AddUpstreamPort());
        out.poolRootPort[h] = out.cpus[h]->AddRootPort(root);
        out.poolHostLinks.push_back(link);
        out.error = out.poolSwitch->Bind(static_cast<uint32_t>(ld), 0, static_cast<uint32_t>(ld));
        if (!out.Ok())
        {
            return out;
        }
    }
    return out;
}

std::string
CxlHelper::AddLeaves(Servers& out, const std::vector<uint32_t>& pool,
                     const std::vector<std::vector<uint32_t>>& leaves) const
{
    const CxlLinkSpec spec = m_link.Create<CxlLink>()->GetSpec();
    if (!out.poolSwitch)
    {
        return "leaf switches go under the pool's switch: there is no pool";
    }
    if (spec.version.empty() || spec.version[0] != '3')
    {
        return fmt::format("switches under switches route by port ID, which CXL {} does not "
                           "have (CXL 3.0 on)",
                           spec.version);
    }
    out.manager = CreateObject<CxlFabricManager>();
    const uint32_t spine = out.manager->AddSwitch(out.poolSwitch);
    uint16_t poolPid = 0;
    if (std::string wrong = out.manager->AddDevice(spine, 0, &poolPid); !wrong.empty())
    {
        return wrong;
    }
    std::vector<int64_t> leafOf(out.cpus.size(), -1);
    for (size_t k = 0; k < leaves.size(); ++k)
    {
        Ptr<CxlSwitch> leaf = m_switch.Create<CxlSwitch>();
        const uint32_t index = out.manager->AddSwitch(leaf);
        const auto [down, up] = out.manager->Link(index, spine);
        Ptr<CxlLink> link = m_link.Create<CxlLink>();
        link->Connect(down, up);
        out.leafSwitches.push_back(leaf);
        out.fabricLinks.push_back(link);
        for (uint32_t h : leaves[k])
        {
            if (h >= out.cpus.size() || leafOf[h] >= 0)
            {
                return fmt::format("leaf switch {}: h{} is not a server, or on two switches", k, h);
            }
            leafOf[h] = static_cast<int64_t>(k);
        }
    }
    for (size_t ld = 0; ld < pool.size(); ++ld)
    {
        const uint32_t h = pool[ld];
        if (leafOf[h] < 0)
        {
            return fmt::format("pool host h{} is on no switch", h);
        }
        Ptr<CxlSwitch> leaf = out.leafSwitches[leafOf[h]];
        Ptr<CxlLink> link = m_link.Create<CxlLink>();
        Ptr<CxlPort> root = CreateObject<CxlPort>();
        link->Connect(root, leaf->AddUpstreamPort());
        out.poolRootPort[h] = out.cpus[h]->AddRootPort(root);
        out.poolHostLinks.push_back(link);
        uint16_t pid = 0;
        std::string wrong = out.manager->AddHost(static_cast<uint32_t>(leafOf[h]) + 1,
                                                 leaf->GetNUpstreamPorts() - 1, &pid);
        if (wrong.empty())
        {
            wrong = out.manager->Bind(pid, poolPid, static_cast<uint32_t>(ld));
        }
        if (!wrong.empty())
        {
            return wrong;
        }
    }
    return "";
}

Time
CxlHelper::IdleReadLatency(const Direct& d)
{
    TimeValue host;
    d.client->GetAttribute("HostLatency", host);
    return IdleReadLatency(host.Get(), {d.link}, Time(0), d.expander, false);
}

Time
CxlHelper::IdleReadLatency(Time host, const std::vector<Ptr<CxlLink>>& path, Time switchLatency,
                           Ptr<CxlMemoryExpander> memory, bool rowHit)
{
    Time t = host + memory->GetControllerLatency() + memory->GetLineTime() +
             memory->GetDramLatency(rowHit);
    for (size_t k = 0; k < path.size(); ++k)
    {
        // A request's flit one way; a line's header slot and four data slots back.
        const CxlLinkSpec spec = path[k]->GetSpec();
        const auto responseFlits = static_cast<uint32_t>(
            std::ceil((1.0 + CxlDataSlots(CxlMessageType::S2mDrs)) / spec.Slots()));
        t += 2 * path[k]->GetDelay() + (1 + responseFlits) * path[k]->GetFlitTime();
        if (k > 0)
        {
            t += 2 * switchLatency;
        }
    }
    return t;
}

} // namespace ns3
