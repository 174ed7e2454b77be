// fabemu list: fabric types, builders, workload types and every scenario key, from the
// same key tables the scenario parser reads (scenarios/src/scenario-keys.cc).
#include "exit-codes.h"
#include "run.h"
#include "scenario.h"

#include <fmt/format.h>

namespace fabemu
{

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
