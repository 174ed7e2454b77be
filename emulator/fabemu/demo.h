// fabemu demo: a small built-in RoCEv2 scenario, run as `fabemu run` runs any.
#ifndef FABEMU_DEMO_H
#define FABEMU_DEMO_H

#include <cstdint>
#include <ostream>
#include <string>

namespace fabemu
{

struct DemoOptions
{
    uint32_t senders{8};
    uint64_t bytes{1'000'000};
    std::string rate{"100Gbps"};
    bool pfc{true};
    std::string cc{"dcqcn"}; ///< dcqcn | none
    std::string out{"results/demo"};
    bool force{false}; ///< replace \c out even if it is not a results folder
    bool quiet{false};
};

/// The demo as a scenario: a star of senders + 1 hosts, every sender into h0.
std::string DemoScenarioYaml(const DemoOptions& opt);
/// Runs that scenario through the normal path (RunScenario): the same results folder,
/// summary.json, plots and report as `fabemu run`.
/// \return an ExitCode
int RunDemo(const DemoOptions& opt, std::ostream& out, std::ostream& err);

} // namespace fabemu

#endif
