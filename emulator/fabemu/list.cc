// fabemu list: fabric types, builders, workload types and every scenario key, from the
// same key tables the scenario parser reads (scenarios/src/scenario-keys.cc).
#include "emulator/fabemu/exit-codes.h"
#include "emulator/fabemu/run.h"
#include "emulator/runner/fabric.h"
#include "scenarios/src/scenario.h"

#include "ns3/ib-switch.h"
#include "ns3/pcie-link.h"
#include "ns3/rdma-queue-pair.h"
#include "ns3/roce-switch.h"
#include "ns3/type-id.h"

#include <fmt/format.h>

#include <map>
#include <set>

namespace fabemu
{

namespace
{

/// Our models' TypeIds by name: those of our modules' groups.
std::map<std::string, ns3::TypeId>
ModelTypeIds()
{
    // One TypeId of each library: each is then loaded, and registers all of its own.
    for (auto tid : {ns3::RoceSwitch::GetTypeId(), ns3::RdmaQueuePair::GetTypeId(),
                     ns3::IbSwitch::GetTypeId(), ns3::PcieLink::GetTypeId()})
    {
        (void)tid;
    }
    for (const auto& fabric : FabricRegistry::Names())
    {
        FabricRegistry::Load(fabric); // the plugins' (iwarp) too
    }
    static const std::set<std::string> groups{"Roce", "Rdma", "Infiniband", "Iwarp", "Pcie"};
    std::map<std::string, ns3::TypeId> types;
    for (uint16_t i = 0; i < ns3::TypeId::GetRegisteredN(); ++i)
    {
        const ns3::TypeId tid = ns3::TypeId::GetRegistered(i);
        if (groups.count(tid.GetGroupName()) > 0)
        {
            types.emplace(tid.GetName(), tid);
        }
    }
    return types;
}

void
PrintAttributes(const ns3::TypeId& tid, std::ostream& out)
{
    out << tid.GetName() << "\n";
    if (tid.GetAttributeN() == 0)
    {
        out << "  (no attributes)\n";
    }
    for (size_t i = 0; i < tid.GetAttributeN(); ++i)
    {
        const auto info = tid.GetAttribute(i);
        const std::string type = info.checker->HasUnderlyingTypeInformation()
                                     ? info.checker->GetUnderlyingTypeInformation()
                                     : info.checker->GetValueTypeName();
        out << fmt::format("  {} ({}) initial {}\n    {}\n", info.name, type,
                           info.initialValue->SerializeToString(info.checker), info.help);
    }
}

} // namespace

int
ListAttributes(const std::string& type, std::ostream& out, std::ostream& err)
{
    const auto types = ModelTypeIds();
    if (type.empty())
    {
        for (const auto& [name, tid] : types)
        {
            PrintAttributes(tid, out);
        }
        return kExitOk;
    }
    const auto it = types.find(type);
    if (it == types.end())
    {
        std::vector<std::string> names;
        for (const auto& [name, tid] : types)
        {
            names.push_back(name);
        }
        const std::string near = Closest(type, names);
        err << fmt::format("fabemu list: no model type '{}'{}\n", type,
                           near.empty() ? "" : fmt::format("; did you mean '{}'?", near))
            << "Run 'fabemu list --attributes' for every type.\n";
        return kExitBadInput;
    }
    PrintAttributes(it->second, out);
    return kExitOk;
}

int
ListScenarioKeys(std::ostream& out)
{
    auto names = [](const std::vector<KeyHelp>& rows) {
        std::vector<std::string> n;
        for (const auto& r : rows)
        {
            n.push_back(r.key);
        }
        return fmt::format("{}", fmt::join(n, ", "));
    };
    out << "Topology builders: " << names(BuilderHelp()) << "\n";
    out << "Fabric types: " << names(FabricTypeHelp())
        << " (each runs simulated hosts and real VM endpoints)\n\n";
    out << "Fabric types:\n";
    for (const auto& f : FabricTypeHelp())
    {
        out << fmt::format("  {:<12} {}\n  {:<12} only its keys: {}\n", f.key, f.help, "", f.type);
    }
    out << "\nTopology builders:\n";
    for (const auto& b : BuilderHelp())
    {
        out << fmt::format("  {:<12} {}{}\n", b.key, b.help,
                           b.type.empty() ? "" : fmt::format(" (keys: {})", b.type));
    }
    out << "\nWorkload types:\n";
    for (const auto& w : WorkloadTypes())
    {
        out << fmt::format("  {:<12} keys: {}\n  {:<12} {}\n", w.key, w.type, "", w.help);
    }
    out << "\nScenario keys (--set KEY=VALUE takes each; docs/scenarios.md has them with "
           "examples):\n";
    for (const auto& k : Keys())
    {
        out << fmt::format("  {:<28} {:<28} default {}\n  {:<28} {}{}\n", k.key, k.type,
                           k.defaultValue, "", k.help,
                           k.appliesTo.empty() ? "" : " [" + k.appliesTo + "]");
    }
    return kExitOk;
}

} // namespace fabemu
