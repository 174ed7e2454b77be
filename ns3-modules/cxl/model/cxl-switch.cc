#include "ns3/cxl-switch.h"

#include "ns3/abort.h"
#include "ns3/simulator.h"

#include <fmt/format.h>

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(CxlSwitch);

TypeId
CxlSwitch::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::CxlSwitch")
            .SetParent<Object>()
            .SetGroupName("Cxl")
            .AddConstructor<CxlSwitch>()
            .AddAttribute("Latency",
                          "Port-to-port traversal, each way (no primary source; docs/cxl.md)",
                          TimeValue(NanoSeconds(50)), MakeTimeAccessor(&CxlSwitch::m_latency),
                          MakeTimeChecker(Time(0)))
            .AddTraceSource("Forward", "A message crossed the switch",
                            MakeTraceSourceAccessor(&CxlSwitch::m_forwardTrace),
                            "ns3::CxlSwitch::ForwardTracedCallback")
            .AddTraceSource("Route", "A message crossed the switch by port-based routing",
                            MakeTraceSourceAccessor(&CxlSwitch::m_routeTrace),
                            "ns3::CxlSwitch::RouteTracedCallback");
    return tid;
}

CxlSwitch::CxlSwitch() = default;
CxlSwitch::~CxlSwitch() = default;

Ptr<CxlPort>
CxlSwitch::AddUpstreamPort()
{
    Ptr<CxlPort> p = CreateObject<CxlPort>();
    p->SetReceiveCallback(
        MakeCallback(&CxlSwitch::FromHost, this).Bind(static_cast<uint32_t>(m_up.size())));
    m_up.push_back(p);
    return p;
}

Ptr<CxlPort>
CxlSwitch::AddDownstreamPort()
{
    Ptr<CxlPort> p = CreateObject<CxlPort>();
    p->SetReceiveCallback(
        MakeCallback(&CxlSwitch::FromDevice, this).Bind(static_cast<uint32_t>(m_down.size())));
    m_down.push_back(p);
    return p;
}

Ptr<CxlPort>
CxlSwitch::AddFabricPort()
{
    Ptr<CxlPort> p = CreateObject<CxlPort>();
    p->SetReceiveCallback(MakeCallback(&CxlSwitch::Route, this));
    m_fabric.push_back(p);
    return p;
}

void
CxlSwitch::SetRoute(uint16_t pid, Ptr<CxlPort> port)
{
    m_routes[pid] = port;
}

std::string
CxlSwitch::BindRemote(uint32_t host, uint16_t hostPid, uint16_t devicePid, uint32_t ld)
{
    if (host >= m_up.size())
    {
        return fmt::format("upstream port {}: the switch has {}", host, m_up.size());
    }
    if (IsHostBound(host))
    {
        return fmt::format("upstream port {} is bound already", host);
    }
    if (ld >= 16)
    {
        return fmt::format("logical device {}: a multi-logical device has at most 16", ld);
    }
    m_remote[host] = {hostPid, devicePid, ld};
    return "";
}

std::string
CxlSwitch::SetOwner(uint32_t device, uint16_t devicePid, uint32_t ld, uint16_t hostPid)
{
    if (device >= m_down.size())
    {
        return fmt::format("downstream port {}: the switch has {}", device, m_down.size());
    }
    if (ld >= 16)
    {
        return fmt::format("logical device {}: a multi-logical device has at most 16", ld);
    }
    if (IsDeviceBound(device, ld))
    {
        return fmt::format("logical device {} of downstream port {} is bound already", ld, device);
    }
    m_remoteOwner[{device, ld}] = {devicePid, hostPid};
    return "";
}

bool
CxlSwitch::IsHostBound(uint32_t host) const
{
    return m_hostBinding.count(host) > 0 || m_remote.count(host) > 0;
}

bool
CxlSwitch::IsDeviceBound(uint32_t device, uint32_t ld) const
{
    const auto key = std::make_pair(device, ld);
    return m_ldOwner.count(key) > 0 || m_remoteOwner.count(key) > 0;
}

void
CxlSwitch::Route(const CxlMessage& m)
{
    const auto it = m_routes.find(m.dpid);
    NS_ABORT_MSG_IF(it == m_routes.end(), "CxlSwitch: no route to port ID " << m.dpid);
    m_routeTrace(m);
    Simulator::Schedule(m_latency, &CxlPort::Enqueue, it->second, m);
}

std::string
CxlSwitch::Bind(uint32_t host, uint32_t device, uint32_t ld)
{
    if (host >= m_up.size() || device >= m_down.size())
    {
        return fmt::format("upstream port {} or downstream port {}: the switch has {} and {}", host,
                           device, m_up.size(), m_down.size());
    }
    if (m_hostBinding.count(host))
    {
        return fmt::format("upstream port {} is bound already", host);
    }
    const auto key = std::make_pair(device, ld);
    if (ld >= 16)
    {
        return fmt::format("logical device {}: a multi-logical device has at most 16", ld);
    }
    if (m_ldOwner.count(key))
    {
        return fmt::format("logical device {} of downstream port {} is bound to upstream port {}",
                           ld, device, m_ldOwner[key]);
    }
    m_hostBinding[host] = key;
    m_ldOwner[key] = host;
    return "";
}

std::string
CxlSwitch::BindDevice(uint32_t host, uint32_t device)
{
    if (host >= m_up.size() || device >= m_down.size())
    {
        return fmt::format("upstream port {} or downstream port {}: the switch has {} and {}", host,
                           device, m_up.size(), m_down.size());
    }
    m_ioHost[device] = host;
    return "";
}

void
CxlSwitch::FromHost(uint32_t host, const CxlMessage& m)
{
    if (const auto remote = m_remote.find(host); remote != m_remote.end())
    {
        CxlMessage out = m;
        out.logicalDevice = remote->second.ld;
        out.spid = remote->second.hostPid;
        out.dpid = remote->second.devicePid;
        Route(out);
        return;
    }
    auto it = m_hostBinding.find(host);
    NS_ABORT_MSG_IF(it == m_hostBinding.end(),
                    "CxlSwitch: upstream port " << host << " is bound to no device");
    CxlMessage out = m;
    out.logicalDevice = it->second.second;
    m_forwardTrace(out, host, it->second.first);
    Simulator::Schedule(m_latency, &CxlPort::Enqueue, m_down[it->second.first], out);
}

void
CxlSwitch::FromDevice(uint32_t device, const CxlMessage& m)
{
    if (m.type == CxlMessageType::Io)
    {
        const auto io = m_ioHost.find(device);
        NS_ABORT_MSG_IF(io == m_ioHost.end(),
                        "CxlSwitch: downstream port " << device << " is bound to no host");
        m_forwardTrace(m, io->second, device);
        Simulator::Schedule(m_latency, &CxlPort::Enqueue, m_up[io->second], m);
        return;
    }
    if (const auto remote = m_remoteOwner.find({device, m.logicalDevice});
        remote != m_remoteOwner.end())
    {
        CxlMessage out = m;
        out.spid = remote->second.first;
        out.dpid = remote->second.second;
        Route(out);
        return;
    }
    auto it = m_ldOwner.find({device, m.logicalDevice});
    NS_ABORT_MSG_IF(it == m_ldOwner.end(), "CxlSwitch: logical device "
                                               << m.logicalDevice << " of downstream port "
                                               << device << " is bound to no host");
    m_forwardTrace(m, it->second, device);
    Simulator::Schedule(m_latency, &CxlPort::Enqueue, m_up[it->second], m);
}

void
CxlSwitch::DoDispose()
{
    m_routes.clear();
    for (auto* ports : {&m_up, &m_down, &m_fabric})
    {
        for (auto& p : *ports)
        {
            p->SetReceiveCallback(MakeNullCallback<void, const CxlMessage&>());
        }
        ports->clear();
    }
    Object::DoDispose();
}

} // namespace ns3
