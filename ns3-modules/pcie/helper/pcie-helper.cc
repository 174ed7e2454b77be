#include "ns3/pcie-helper.h"

#include "ns3/boolean.h"
#include "ns3/data-rate.h"
#include "ns3/dispose-at-destroy.h"
#include "ns3/uinteger.h"

#include <map>
#include <set>

namespace ns3
{

PcieHelper::PcieHelper()
{
    m_link.SetTypeId(PcieLink::GetTypeId());
    m_port.SetTypeId(PciePort::GetTypeId());
    m_dma.SetTypeId(PcieDmaEngine::GetTypeId());
    m_nicDma.SetTypeId(PcieDmaEngine::GetTypeId());
    // A NIC keeps many reads outstanding: 8-bit extended tags (PCIe Base Spec 2.0+).
    m_nicDma.Set("Tags", UintegerValue(256));
    m_memory.SetTypeId(PcieMemoryTarget::GetTypeId());
    m_endpoint.SetTypeId(PcieEndpoint::GetTypeId());
    m_switch.SetTypeId(PcieSwitch::GetTypeId());
    m_rc.SetTypeId(PcieRootComplex::GetTypeId());
    m_hostMemory.SetTypeId(PcieMemoryTarget::GetTypeId());
    m_gpuMemory.SetTypeId(PcieMemoryTarget::GetTypeId());
    m_nicMemory.SetTypeId(PcieMemoryTarget::GetTypeId());
    m_socketLink.SetTypeId(PcieSocketLink::GetTypeId());
    m_gpuEndpoint.SetTypeId(PcieEndpoint::GetTypeId());
    // deviceQuery's common "2 copy engine(s)" (not checked per GPU model).
    m_gpuEndpoint.Set("DmaEngines", UintegerValue(2));
    // Eight channels of DDR5-4800: 8 x 4800 MT/s x 8 B = 307.2 GB/s (arithmetic, not measured).
    m_hostMemory.Set("Bandwidth", DataRateValue(DataRate(uint64_t(2457600000000))));
    // Reads of host memory come back in 128-byte completions (RCB 128, split at it):
    // calibrated to the measured H2D 54.8 GB/s on Gen5 x16 (docs/pcie.md, ref 2.1).
    m_hostMemory.Set("ReadCompletionBoundary", UintegerValue(128));
    m_hostMemory.Set("SplitAtRcb", BooleanValue(true));
    // H100 SXM HBM3: 3.35 TB/s (NVIDIA's datasheet figure).
    m_gpuMemory.Set("Bandwidth", DataRateValue(DataRate(uint64_t(26800000000000))));
    // A NIC's BAR (doorbells, on-chip): takes writes at once.
    m_nicMemory.Set("Bandwidth", DataRateValue(DataRate(0)));
}

void
PcieHelper::SetSocketLinkAttribute(const std::string& name, const AttributeValue& value)
{
    m_socketLink.Set(name, value);
}

void
PcieHelper::SetGpuEndpointAttribute(const std::string& name, const AttributeValue& value)
{
    m_gpuEndpoint.Set(name, value);
}

void
PcieHelper::SetSwitchAttribute(const std::string& name, const AttributeValue& value)
{
    m_switch.Set(name, value);
}

void
PcieHelper::SetRootComplexAttribute(const std::string& name, const AttributeValue& value)
{
    m_rc.Set(name, value);
}

void
PcieHelper::SetHostMemoryAttribute(const std::string& name, const AttributeValue& value)
{
    m_hostMemory.Set(name, value);
}

void
PcieHelper::SetGpuMemoryAttribute(const std::string& name, const AttributeValue& value)
{
    m_gpuMemory.Set(name, value);
}

void
PcieHelper::SetNicMemoryAttribute(const std::string& name, const AttributeValue& value)
{
    m_nicMemory.Set(name, value);
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
    m_nicDma.Set(name, value);
}

void
PcieHelper::SetNicDmaAttribute(const std::string& name, const AttributeValue& value)
{
    m_nicDma.Set(name, value);
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
        {"ns3::PcieDmaEngine (NIC)", m_nicDma.Create<PcieDmaEngine>()->Check()},
        {"ns3::PcieMemoryTarget", m_memory.Create<PcieMemoryTarget>()->Check()},
        {"ns3::PcieMemoryTarget (host)", m_hostMemory.Create<PcieMemoryTarget>()->Check()},
        {"ns3::PcieMemoryTarget (GPU)", m_gpuMemory.Create<PcieMemoryTarget>()->Check()},
        {"ns3::PcieMemoryTarget (NIC)", m_nicMemory.Create<PcieMemoryTarget>()->Check()},
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
    Ptr<PcieEndpoint> e = DisposedAtDestroy(m_endpoint.Create<PcieEndpoint>());
    e->Setup(DisposedAtDestroy(m_port.Create<PciePort>()),
             DisposedAtDestroy(m_dma.Create<PcieDmaEngine>()),
             DisposedAtDestroy(m_memory.Create<PcieMemoryTarget>()));
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
    pair.link = DisposedAtDestroy(m_link.Create<PcieLink>());
    pair.a = MakeEndpoint();
    pair.b = MakeEndpoint();
    pair.link->Connect(pair.a->GetPort(), pair.b->GetPort());
    pair.a->GetPort()->Start();
    pair.b->GetPort()->Start();
    return pair;
}

Ptr<PcieLink>
PcieHelper::MakeLink(const PcieTreeSpec::LinkSpec& spec, const std::string& name,
                     std::string& error) const
{
    Ptr<PcieLink> link = m_link.Create<PcieLink>();
    if (spec.generation != 0)
    {
        link->SetAttribute("Generation", UintegerValue(spec.generation));
    }
    if (spec.width != 0)
    {
        link->SetAttribute("Width", UintegerValue(spec.width));
    }
    const std::string problem = link->Check();
    if (!problem.empty() && error.empty())
    {
        error = "ns3::PcieLink above '" + name + "': " + problem;
    }
    return link;
}

PcieHelper::Tree
PcieHelper::InstallTree(const PcieTreeSpec& spec) const
{
    Tree result;
    result.error = Check();
    if (!result.Ok())
    {
        return result;
    }
    // Names first, so that a bad description builds nothing.
    std::map<PcieDeviceKind, uint32_t> counts;
    auto nameOf = [&counts](const PcieTreeSpec::Device& d) {
        static const char* const prefix[] = {"gpu", "nic", "nvme"};
        return d.name.empty() ? prefix[int(d.kind)] + std::to_string(counts[d.kind]++) : d.name;
    };
    struct Planned
    {
        std::string name;
        const PcieTreeSpec::Device* device;
        int sw; ///< index into spec.switches, -1: on a root port
    };
    std::vector<Planned> devices;
    std::vector<std::string> switchNames;
    std::set<std::string> seen{"mem"};
    for (size_t s = 0; s < spec.switches.size(); ++s)
    {
        const auto& sw = spec.switches[s];
        switchNames.push_back(sw.name.empty() ? "sw" + std::to_string(s) : sw.name);
        if (!seen.insert(switchNames.back()).second)
        {
            result.error = "PcieTreeSpec: name '" + switchNames.back() + "' used twice";
            return result;
        }
        for (const auto& d : sw.devices)
        {
            devices.push_back({nameOf(d), &d, int(s)});
        }
    }
    for (const auto& d : spec.rootDevices)
    {
        devices.push_back({nameOf(d), &d, -1});
    }
    for (const auto& d : devices)
    {
        if (!seen.insert(d.name).second)
        {
            result.error = "PcieTreeSpec: name '" + d.name + "' used twice";
            return result;
        }
    }
    if (devices.size() > 254)
    {
        result.error = "PcieTreeSpec: more than 254 devices (one bus each)";
        return result;
    }
    if (spec.sockets != 1 && spec.sockets != 2)
    {
        result.error = "PcieTreeSpec: sockets " + std::to_string(spec.sockets) + " (1 or 2)";
        return result;
    }
    for (size_t s = 0; s < spec.switches.size(); ++s)
    {
        if (spec.switches[s].socket >= spec.sockets)
        {
            result.error = "PcieTreeSpec: '" + switchNames[s] + "' on socket " +
                           std::to_string(spec.switches[s].socket) + " of " +
                           std::to_string(spec.sockets);
            return result;
        }
    }
    for (const auto& d : devices)
    {
        if (d.sw < 0 && d.device->socket >= spec.sockets)
        {
            result.error = "PcieTreeSpec: '" + d.name + "' on socket " +
                           std::to_string(d.device->socket) + " of " + std::to_string(spec.sockets);
            return result;
        }
    }
    // Links, checked before anything is wired.
    std::vector<Ptr<PcieLink>> switchLinks;
    std::vector<Ptr<PcieLink>> deviceLinks;
    std::string error;
    for (size_t s = 0; s < spec.switches.size(); ++s)
    {
        switchLinks.push_back(MakeLink(spec.switches[s].upstream, switchNames[s], error));
    }
    for (const auto& d : devices)
    {
        deviceLinks.push_back(MakeLink(d.device->link, d.name, error));
    }
    if (!error.empty())
    {
        result.error = error;
        return result;
    }

    // The tree is not disposed here: it holds the parts but none of them holds it, and its
    // owner may dispose it (the scenario runner's PcieNodeFabric does).
    Ptr<PcieTree> tree = CreateObject<PcieTree>();
    Ptr<PcieRootComplex> rcs[2];
    rcs[0] = DisposedAtDestroy(m_rc.Create<PcieRootComplex>());
    Ptr<PcieMemoryTarget> host = DisposedAtDestroy(m_hostMemory.Create<PcieMemoryTarget>());
    rcs[0]->SetHostMemory(host, 0, spec.hostMemoryBytes);
    tree->SetRootComplex(rcs[0], host, spec.hostMemoryBytes);
    if (spec.sockets == 2)
    {
        rcs[1] = DisposedAtDestroy(m_rc.Create<PcieRootComplex>());
        Ptr<PcieMemoryTarget> host1 = DisposedAtDestroy(m_hostMemory.Create<PcieMemoryTarget>());
        rcs[1]->SetHostMemory(host1, spec.hostMemoryBytes, spec.hostMemoryBytes);
        Ptr<PcieSocketLink> upi = DisposedAtDestroy(m_socketLink.Create<PcieSocketLink>());
        rcs[0]->SetSocketLink(upi, 0);
        rcs[1]->SetSocketLink(upi, 1);
        rcs[0]->AddRemoteAddressRange(spec.hostMemoryBytes, spec.hostMemoryBytes);
        rcs[1]->AddRemoteAddressRange(0, spec.hostMemoryBytes);
        tree->SetSecondSocket(rcs[1], host1, spec.hostMemoryBytes, spec.hostMemoryBytes, upi);
    }
    std::vector<Ptr<PciePort>> ports;
    std::vector<Ptr<PcieSwitch>> switches;
    std::vector<uint32_t> switchRootPort;
    for (size_t s = 0; s < spec.switches.size(); ++s)
    {
        Ptr<PcieSwitch> sw = DisposedAtDestroy(m_switch.Create<PcieSwitch>());
        Ptr<PciePort> rp = DisposedAtDestroy(m_port.Create<PciePort>());
        Ptr<PciePort> up = DisposedAtDestroy(m_port.Create<PciePort>());
        // Links are disposed from where they are wired: a refused spec leaves none behind.
        DisposedAtDestroy(switchLinks[s])->Connect(rp, up);
        sw->SetUpstreamPort(up);
        switchRootPort.push_back(rcs[spec.switches[s].socket]->AddRootPort(rp));
        switches.push_back(sw);
        ports.push_back(rp);
        ports.push_back(up);
        tree->AddSwitch(switchNames[s], sw, switchLinks[s]);
    }
    for (size_t k = 0; k < devices.size(); ++k)
    {
        const auto& d = devices[k];
        const uint64_t base = PcieTree::kDeviceBase + k * spec.deviceWindowBytes;
        const auto requester = static_cast<uint16_t>((k + 1) << 8);
        const ObjectFactory& memory = d.device->kind == PcieDeviceKind::Gpu   ? m_gpuMemory
                                      : d.device->kind == PcieDeviceKind::Nic ? m_nicMemory
                                                                              : m_memory;
        Ptr<PcieEndpoint> e =
            DisposedAtDestroy((d.device->kind == PcieDeviceKind::Gpu ? m_gpuEndpoint : m_endpoint)
                                  .Create<PcieEndpoint>());
        Ptr<PcieDmaEngine> dma = DisposedAtDestroy(
            (d.device->kind == PcieDeviceKind::Nic ? m_nicDma : m_dma).Create<PcieDmaEngine>());
        dma->SetRequesterId(requester); // before Setup: further engines copy it
        e->Setup(DisposedAtDestroy(m_port.Create<PciePort>()), dma,
                 DisposedAtDestroy(memory.Create<PcieMemoryTarget>()));
        Ptr<PciePort> above = DisposedAtDestroy(m_port.Create<PciePort>());
        DisposedAtDestroy(deviceLinks[k])->Connect(above, e->GetPort());
        ports.push_back(above);
        ports.push_back(e->GetPort());
        const auto lastId = static_cast<uint16_t>(requester | 0xff);
        if (d.sw >= 0)
        {
            Ptr<PcieSwitch> sw = switches[d.sw];
            const uint32_t dp = sw->AddDownstreamPort(above);
            sw->AddAddressRange(dp, base, spec.deviceWindowBytes);
            sw->AddRequesterRange(dp, requester, lastId);
        }
        const uint32_t socket = d.sw >= 0 ? spec.switches[d.sw].socket : d.device->socket;
        Ptr<PcieRootComplex> rc = rcs[socket];
        const uint32_t rp = d.sw >= 0 ? switchRootPort[d.sw] : rc->AddRootPort(above);
        rc->AddAddressRange(rp, base, spec.deviceWindowBytes);
        rc->AddRequesterRange(rp, requester, lastId);
        if (spec.sockets == 2)
        {
            rcs[1 - socket]->AddRemoteAddressRange(base, spec.deviceWindowBytes);
            rcs[1 - socket]->AddRemoteRequesterRange(requester, lastId);
        }
        tree->AddEndpoint(d.name, e, deviceLinks[k], base, spec.deviceWindowBytes);
    }
    for (const auto& p : ports)
    {
        p->Start();
    }
    result.tree = tree;
    return result;
}

int64_t
PcieHelper::AssignStreams(const Pair& pair, int64_t stream)
{
    int64_t used = pair.a->GetPort()->AssignStreams(stream);
    used += pair.b->GetPort()->AssignStreams(stream + used);
    return used;
}

} // namespace ns3
