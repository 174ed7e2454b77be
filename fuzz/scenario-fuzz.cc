// Fuzz target: the scenario loader on whole YAML documents, as `fabemu validate` and
// `fabemu run` reach it (LoadScenario reads the file, ParseScenario does the rest).
// A ScenarioError is the loader's answer to a bad file, the one exception those commands
// catch (message, exit 2); anything else that escapes, an abort or undefined behaviour is
// a finding. Lines "#--set KEY=VALUE" at the top (YAML comments) are --set overrides too.
// A scenario that loads must also load again from its ResolvedYaml, as run writes it to
// scenario.resolved.yaml.
#include "fuzz/fuzz-check.h"
#include "scenarios/src/scenario.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>
#include <yaml-cpp/yaml.h>

extern "C" int
LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    const std::string text(reinterpret_cast<const char*>(data), size);
    std::vector<std::string> overrides;
    const std::string kSet = "#--set ";
    for (size_t at = 0; at < text.size() && text.compare(at, kSet.size(), kSet) == 0;)
    {
        const size_t end = std::min(text.find('\n', at), text.size());
        overrides.push_back(text.substr(at + kSet.size(), end - at - kSet.size()));
        at = end + 1;
    }
    fabemu::Scenario s;
    try
    {
        s = fabemu::ParseScenario(text, "fuzz.yaml", overrides);
    }
    catch (const fabemu::ScenarioError&)
    {
        return 0;
    }
    const std::string resolved = fabemu::ResolvedYaml(s);
    try
    {
        const fabemu::Scenario again = fabemu::ParseScenario(resolved, "fuzz.yaml");
        FUZZ_CHECK(again.name == s.name && again.workloads.size() == s.workloads.size() &&
                       again.topology.HostCount() == s.topology.HostCount(),
                   "ResolvedYaml loads back to another scenario");
    }
    catch (const fabemu::ScenarioError& e)
    {
        std::fprintf(stderr, "%s\n--- resolved:\n%s\n", e.what(), resolved.c_str());
        FUZZ_CHECK(false, "ResolvedYaml of a scenario that loads does not load");
    }
    return 0;
}
