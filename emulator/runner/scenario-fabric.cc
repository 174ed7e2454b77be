#include "emulator/runner/scenario-fabric.h"

#include "emulator/fabemu/time-resolution.h"
#include "emulator/runner/node-fabric.h"

#include "ns3/boolean.h"
#include "ns3/config.h"
#include "ns3/dcqcn-rate-control.h"
#include "ns3/double.h"
#include "ns3/ib-fabric-helper.h"
#include "ns3/ib-hca.h"
#include "ns3/ib-switch.h"
#include "ns3/pcie-helper.h"
#include "ns3/rng-seed-manager.h"
#include "ns3/roce-fabric-helper.h"
#include "ns3/roce-frame.h"
#include "ns3/roce-nic.h"
#include "ns3/simulator.h"
#include "ns3/string.h"
#include "ns3/switch-mmu.h"
#include "ns3/uinteger.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <regex>
#include <sstream>
#include <stdexcept>

namespace fabemu
{

using namespace ns3;

namespace
{

/// Why \p value does not suit ns-3 attribute \p name, or "" when it does.
std::string
AttributeProblem(const std::string& name, const std::string& value)
{
    // Our models' TypeIds register when their libraries load; name them so they do.
    (void)RoceNic::GetTypeId();
    (void)SwitchMmu::GetTypeId();
    (void)IbPort::GetTypeId();
    (void)IbSwitch::GetTypeId();
    (void)IbHca::GetTypeId();
    (void)PcieLink::GetTypeId();
    (void)PciePort::GetTypeId();
    (void)PcieSwitch::GetTypeId();
    (void)PcieRootComplex::GetTypeId();
    (void)PcieDmaEngine::GetTypeId();
    (void)PcieMemoryTarget::GetTypeId();
    (void)PcieEndpoint::GetTypeId();
    (void)RdmaHostInterface::GetTypeId();
    const auto sep = name.rfind("::");
    const std::string cls = name.substr(0, sep);
    const std::string attr = name.substr(sep + 2);
    TypeId tid;
    if (!TypeId::LookupByNameFailSafe(cls, &tid))
    {
        return fmt::format("fabric.set: no ns-3 class '{}'", cls);
    }
    TypeId::AttributeInformation info;
    if (!tid.LookupAttributeByName(attr, &info))
    {
        std::vector<std::string> names;
        for (uint32_t i = 0; i < tid.GetAttributeN(); ++i)
        {
            names.push_back(tid.GetAttribute(i).name);
        }
        const std::string close = Closest(attr, names);
        return fmt::format("fabric.set: {} has no attribute '{}'{}", cls, attr,
                           close.empty() ? "" : fmt::format("; did you mean '{}'?", close));
    }
    // Some ns-3 parsers abort the process on a malformed number instead of
    // failing; numbers are checked here first.
    const std::string type = info.checker->GetValueTypeName();
    static const std::regex unsignedRe("^[0-9]+$");
    static const std::regex signedRe("^[-+]?[0-9]+$");
    static const std::regex realRe(R"(^[-+]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?$)");
    const bool malformed = (type == "ns3::UintegerValue" && !std::regex_match(value, unsignedRe)) ||
                           (type == "ns3::IntegerValue" && !std::regex_match(value, signedRe)) ||
                           (type == "ns3::DoubleValue" && !std::regex_match(value, realRe));
    Ptr<AttributeValue> v = info.checker->Create();
    if (malformed || !v->DeserializeFromString(value, info.checker) || !info.checker->Check(*v))
    {
        return fmt::format("fabric.set: '{}' is not a valid value for {} ({})", value, name,
                           info.checker->GetUnderlyingTypeInformation());
    }
    return "";
}

/// A NIC aborts on an unknown congestion control when its first QP connects.
void
CheckNicCongestionControl(const Scenario& s)
{
    for (const auto& kv : s.fabric.set)
    {
        if (kv.name == "ns3::RoceNic::CongestionControl" && kv.value != "ns3::DcqcnRateControl" &&
            kv.value != "none")
        {
            throw ScenarioError(s.file, kv.mark,
                                fmt::format("fabric.set: {}: '{}' is neither ns3::DcqcnRateControl "
                                            "nor none",
                                            kv.name, kv.value));
        }
    }
}

/// Leaves ns-3 as a run finds it: no simulator, attribute defaults reset.
struct ResetNs3
{
    ~ResetNs3()
    {
        Simulator::Destroy();
        Config::Reset();
    }
};

} // namespace

ScenarioError
FabricError(const Scenario& s, std::initializer_list<const char*> attributes,
            const std::string& key, const std::string& what)
{
    const FabricSpec::Setting* last = nullptr;
    for (const auto& kv : s.fabric.set)
    {
        if (std::find(attributes.begin(), attributes.end(), kv.name) != attributes.end())
        {
            last = &kv;
        }
    }
    if (last)
    {
        return ScenarioError(s.file, last->mark,
                             fmt::format("fabric.set: {}: {}", last->name, what));
    }
    return ScenarioError(s.file, s.MarkOf(key), fmt::format("{}: {}", key, what));
}

void
PreflightScenario(const Scenario& s)
{
    CheckAttributes(s);
    CheckNicCongestionControl(s);
    const ResetNs3 reset;
    Simulator::Destroy();
    Config::Reset();
    UsePicoseconds();
    ApplyFabricDefaults(s);
    if (HasNetwork(s))
    {
        const TopologySpec spec = BuildTopology(s);
        FabricRegistry::Create(s.fabric.type)->Check(s, spec);
        (void)FaultLinks(s, spec);
    }
    for (size_t i = 0; i < s.faults.size() && !HasNetwork(s); ++i)
    {
        if (s.faults[i].Kind() != "delay")
        {
            throw ScenarioError(s.file, s.faults[i].mark,
                                fmt::format("faults.{}: the node builder has no network to "
                                            "break",
                                            i));
        }
    }
    for (const auto& node : NodeFabricsOf(s))
    {
        node->Check(s);
    }
    (void)BuildFlows(s);
}

void
CheckAttributes(const Scenario& s)
{
    if (!s.fabric.set.empty())
    {
        FabricRegistry::Load(s.fabric.type); // a plugin's models register as it loads
    }
    for (const auto& kv : s.fabric.set)
    {
        const std::string why = AttributeProblem(kv.name, kv.value);
        if (!why.empty())
        {
            throw ScenarioError(s.file, kv.mark, why);
        }
    }
}

void
ApplyFabricDefaults(const Scenario& s, RunMode mode)
{
    CheckAttributes(s);
    const auto& f = s.fabric;
    Config::SetDefault("ns3::RdmaQueuePair::Mtu", UintegerValue(f.mtu));
    Config::SetDefault("ns3::SwitchMmu::PfcEnabled", BooleanValue(f.pfc));
    Config::SetDefault("ns3::SwitchMmu::EcnEnabled", BooleanValue(f.ecn));
    Config::SetDefault("ns3::SwitchMmu::Kmin", UintegerValue(f.kmin));
    Config::SetDefault("ns3::SwitchMmu::Kmax", UintegerValue(f.kmax));
    Config::SetDefault("ns3::SwitchMmu::Pmax", DoubleValue(f.pmax));
    Config::SetDefault("ns3::SwitchMmu::BufferSize", UintegerValue(f.bufferBytes));
    // XON two full frames of the path MTU under XOFF.
    Config::SetDefault("ns3::SwitchMmu::ResumeOffset",
                       UintegerValue(2 * RoceV2WriteFrameBytes(f.mtu, true, false)));
    if (f.cc == "dcqcn")
    {
        DcqcnRateControl::ApplyPreset(f.dcqcnPreset);
        Config::SetDefault("ns3::RoceNic::CongestionControl", StringValue("ns3::DcqcnRateControl"));
    }
    else
    {
        Config::SetDefault("ns3::RoceNic::CongestionControl", StringValue("none"));
    }
    Config::SetDefault("ns3::IbSwitch::CcEnabled", BooleanValue(f.cc == "ibcc"));
    FabricRegistry::Create(f.type)->SetModeDefaults(s, mode);
    for (const auto& kv : f.set)
    {
        Config::SetDefault(kv.name, StringValue(kv.value));
    }
    RngSeedManager::SetSeed(static_cast<uint32_t>(s.seed));
    RngSeedManager::SetRun(1);
}

bool
HasNetwork(const Scenario& s)
{
    return s.topology.builder != "node";
}

namespace
{

TopologySpec
BuilderTopology(const Scenario& s)
{
    const auto& t = s.topology;
    auto link = [](const LinkSpec& l) {
        return LinkParams{DataRate(l.bitsPerSecond), PicoSeconds(l.delayPs)};
    };
    if (t.builder == "pair")
    {
        return TopologySpec::Pair(link(t.link));
    }
    if (t.builder == "dumbbell")
    {
        return TopologySpec::Dumbbell(t.hosts, link(t.link), link(t.bottleneck));
    }
    if (t.builder == "leaf-spine")
    {
        return TopologySpec::LeafSpine(t.leaves, t.spines, t.hostsPerLeaf, link(t.link),
                                       link(t.uplink));
    }
    if (t.builder == "ring")
    {
        return TopologySpec::Ring(t.leaves, t.hostsPerLeaf, link(t.link), link(t.uplink));
    }
    if (t.builder == "rail")
    {
        TopologySpec::RailShape shape;
        shape.servers = t.nodes;
        shape.rails = t.RailsPerServer();
        shape.serversPerLeaf = t.serversPerLeaf;
        shape.railSpines = t.railSpines;
        shape.spines = t.spines;
        shape.nicLink = link(t.link);
        shape.leafLink = link(t.uplink);
        shape.spineLink = link(t.spineLink);
        return TopologySpec::Rail(shape);
    }
    if (t.builder == "fat-tree")
    {
        return TopologySpec::FatTree(t.k, link(t.link), link(t.uplink));
    }
    return TopologySpec::Star(t.hosts, link(t.link));
}

} // namespace

std::vector<std::string>
LinkNames(const Scenario& s, const TopologySpec& spec)
{
    const uint32_t rails = s.topology.builder == "rail" ? s.topology.RailsPerServer() : 0;
    std::vector<std::string> hostOf(spec.Nodes().size());
    for (uint32_t h = 0; h < spec.Hosts().size(); ++h)
    {
        hostOf[spec.Hosts()[h]] = rails ? fmt::format("h{}.nic{}", h / rails, h % rails)
                                        : spec.Nodes()[spec.Hosts()[h]].name;
    }
    auto name = [&](uint32_t node) {
        return spec.Nodes()[node].isSwitch ? spec.Nodes()[node].name : hostOf[node];
    };
    std::vector<std::string> names;
    for (const auto& l : spec.Links())
    {
        names.push_back(name(l.a) + "-" + name(l.b));
    }
    return names;
}

nlohmann::json
DeadlockJson(const std::string& kind, const std::vector<std::pair<uint32_t, uint8_t>>& cycle,
             const std::vector<std::string>& names, const std::string& lane)
{
    nlohmann::json waits = nlohmann::json::array();
    for (const auto& [end, number] : cycle)
    {
        const std::string& link = names.at(end / 2);
        const size_t dash = link.find('-'); // node names hold none
        const std::string a = link.substr(0, dash);
        const std::string b = link.substr(dash + 1);
        waits.push_back(
            fmt::format("{}->{} {}{}", end % 2 ? b : a, end % 2 ? a : b, lane, +number));
    }
    return {{"kind", kind}, {"cycle", waits}};
}

uint32_t
FindLink(const Scenario& s, const std::vector<std::string>& names, const std::string& name,
         const SourceMark& mark, const std::string& what)
{
    // Either way round ("s0-h2" is "h2-s0"), or a host alone for its own link.
    const size_t dash = name.find('-');
    const std::string reversed =
        dash == std::string::npos ? name : name.substr(dash + 1) + "-" + name.substr(0, dash);
    auto it = std::find_if(names.begin(), names.end(),
                           [&](const std::string& n) { return n == name || n == reversed; });
    if (it == names.end() && dash == std::string::npos && !name.empty())
    {
        std::vector<size_t> own;
        for (size_t l = 0; l < names.size(); ++l)
        {
            const size_t d = names[l].find('-');
            if (names[l].substr(0, d) == name || names[l].substr(d + 1) == name)
            {
                own.push_back(l);
            }
        }
        if (own.size() == 1)
        {
            return static_cast<uint32_t>(own[0]);
        }
    }
    if (it == names.end())
    {
        const std::string close = Closest(name, names);
        const size_t shown = std::min<size_t>(names.size(), 12);
        throw ScenarioError(
            s.file, mark,
            fmt::format("{}: no link '{}' in this topology{} (links: {}{})", what, name,
                        close.empty() ? "" : "; did you mean '" + close + "'?",
                        fmt::join(names.begin(), names.begin() + static_cast<long>(shown), ", "),
                        shown < names.size() ? ", ..." : ""));
    }
    return static_cast<uint32_t>(it - names.begin());
}

std::vector<uint32_t>
FaultLinks(const Scenario& s, const TopologySpec& spec)
{
    const std::vector<std::string> names = LinkNames(s, spec);
    std::vector<uint32_t> links;
    for (size_t i = 0; i < s.faults.size(); ++i)
    {
        links.push_back(s.faults[i].host >= 0
                            ? kNoLink
                            : FindLink(s, names, s.faults[i].link, s.faults[i].mark,
                                       fmt::format("faults.{}", i)));
    }
    return links;
}

TopologySpec
BuildTopology(const Scenario& s)
{
    TopologySpec spec = BuilderTopology(s);
    const std::vector<std::string> names = LinkNames(s, spec);
    for (const auto& o : s.topology.overrides)
    {
        const uint32_t link = FindLink(s, names, o.name, o.mark, "topology.links");
        LinkParams p = spec.Links()[link].params;
        if (!o.rate.empty())
        {
            p.rate = DataRate(o.bitsPerSecond);
        }
        if (!o.delay.empty())
        {
            p.delay = PicoSeconds(o.delayPs);
        }
        spec.SetLinkParams(link, p);
    }
    return spec;
}

namespace
{

/// Workload \p wi's flow-size CDF; a file that is not one is the scenario's mistake,
/// named at its cdf key with the file's own line (FlowSizeCdf::Load's message).
FlowSizeCdf
LoadCdf(const Scenario& s, size_t wi)
{
    try
    {
        return FlowSizeCdf::Load(s.workloads[wi].cdfPath);
    }
    catch (const std::exception& e)
    {
        throw ScenarioError(s.file, s.MarkOf(fmt::format("workloads.{}.cdf", wi)),
                            fmt::format("workloads.{}.cdf: {}", wi, e.what()));
    }
}

/// The rail workload \p w's flows take on a rail cluster: that of the NIC serving the GPU
/// it names (src first, then dst, then src_mem and dst_mem), as GPUDirect RDMA would; rail
/// 0 (each server's nic0) when it names none. 0 on other builders.
uint32_t
FlowRail(const Scenario& s, const WorkloadSpec& w)
{
    const uint32_t rails = s.topology.RailsPerServer();
    if (rails <= 1)
    {
        return 0;
    }
    for (const std::string* device : {&w.srcDevice, &w.dstDevice, &w.srcMemory, &w.dstMemory})
    {
        if (device->rfind("gpu", 0) == 0)
        {
            return s.topology.node.ServingNic(DeviceNumber(*device)) % rails;
        }
    }
    return 0;
}

} // namespace

std::vector<FlowSpec>
BuildFlows(const Scenario& s, std::vector<size_t>* workloadOf)
{
    std::vector<FlowSpec> flows;
    Ptr<UniformRandomVariable> rng = CreateObject<UniformRandomVariable>();
    rng->SetStream(1); // fixed stream: the seed alone decides the draw
    for (size_t wi = 0; wi < s.workloads.size(); ++wi)
    {
        const auto& w = s.workloads[wi];
        const Time start = PicoSeconds(w.startPs);
        std::vector<FlowSpec> made;
        if (w.type == "bulk")
        {
            made = workload::Bulk(w.src, w.dst, w.bytes, start);
        }
        else if (w.type == "incast")
        {
            made = workload::Incast(w.dst, w.hosts, w.bytes, start);
        }
        else if (w.type == "permutation")
        {
            made = workload::Permutation(w.hosts, w.bytes, start, rng);
        }
        else if (w.type == "all-to-all")
        {
            made = workload::AllToAll(w.hosts, w.bytes, start);
        }
        else if (w.type == "copy" && w.src != w.dst)
        {
            made = workload::Bulk(w.src, w.dst, w.bytes, start); // GPUDirect RDMA
        }
        else if (w.type == "poisson")
        {
            made = workload::Poisson(w.hosts, w.load, LoadCdf(s, wi),
                                     DataRate(s.topology.link.bitsPerSecond), start,
                                     PicoSeconds(w.stopPs), rng);
        }
        const uint32_t rails = s.topology.RailsPerServer();
        const uint32_t rail = FlowRail(s, w);
        const bool onRail = s.topology.builder == "rail";
        const auto op = w.op == "send"   ? RdmaWorkRequest::Op::Send
                        : w.op == "read" ? RdmaWorkRequest::Op::Read
                                         : RdmaWorkRequest::Op::Write;
        for (auto& f : made)
        {
            f.op = op;
            f.serviceLevel = w.sl;
            f.tag = WorkloadLabel(w);
            // A GPU named as src or dst (copy, or bulk: src: h0.gpu0) is the memory there.
            f.srcMemory = w.srcDevice.empty() ? w.srcMemory : w.srcDevice;
            f.dstMemory = w.dstDevice.empty() ? w.dstMemory : w.dstDevice;
            // Names by server; on a rail cluster a flow that names no GPU by its NIC.
            if (!w.srcDevice.empty() || onRail)
            {
                f.srcName =
                    fmt::format("h{}.{}", f.src,
                                w.srcDevice.empty() ? fmt::format("nic{}", rail) : w.srcDevice);
            }
            if (!w.dstDevice.empty() || onRail)
            {
                f.dstName =
                    fmt::format("h{}.{}", f.dst,
                                w.dstDevice.empty() ? fmt::format("nic{}", rail) : w.dstDevice);
            }
            f.src = f.src * rails + rail; // the network's port: server x rails + rail
            f.dst = f.dst * rails + rail;
            flows.push_back(f);
            if (workloadOf)
            {
                workloadOf->push_back(wi);
            }
        }
    }
    return flows;
}

} // namespace fabemu
