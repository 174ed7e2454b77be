#include "emulator/fabemu/demo.h"

#include "emulator/fabemu/exit-codes.h"
#include "emulator/fabemu/run.h"
#include "scenarios/src/scenario.h"

#include "ns3/data-rate.h"

#include <fmt/format.h>

namespace fabemu
{

std::string
DemoScenarioYaml(const DemoOptions& opt)
{
    return fmt::format(R"(# fabemu demo: an N:1 RoCEv2 incast over one switch.
name: demo
description: {senders}:1 RoCEv2 incast into h0 at {rate}, PFC {pfc}, CC {cc}
seed: 1
duration: 10s
fabric:
  type: roce
  pfc: {pfcBool}
  cc: {cc}
  dcqcn: paper
topology:
  builder: star
  hosts: {hosts}
  link: {{rate: {rate}, delay: 1us}}
workloads:
  - {{type: incast, dst: h0, srcs: all, bytes: {bytes}}}
record:
  pcap: [h0]
  queue_interval: 1us
)",
                       fmt::arg("senders", opt.senders), fmt::arg("rate", opt.rate),
                       fmt::arg("pfc", opt.pfc ? "on" : "off"),
                       fmt::arg("pfcBool", opt.pfc ? "true" : "false"), fmt::arg("cc", opt.cc),
                       fmt::arg("hosts", opt.senders + 1), fmt::arg("bytes", opt.bytes));
}

int
RunDemo(const DemoOptions& opt, std::ostream& out, std::ostream& err)
{
    if (opt.senders < 1 || opt.senders > 256)
    {
        err << "fabemu demo: --senders must be 1..256, not " << opt.senders << "\n";
        return kExitBadInput;
    }
    if (opt.bytes < 1 || opt.bytes > (uint64_t(1) << 40))
    {
        err << "fabemu demo: --bytes must be 1..1099511627776, not " << opt.bytes << "\n";
        return kExitBadInput;
    }
    if (opt.cc != "dcqcn" && opt.cc != "none")
    {
        err << "fabemu demo: --cc must be dcqcn or none, not '" << opt.cc << "'\n";
        return kExitBadInput;
    }
    // Named here, before the scenario's own check would name topology.link.rate.
    ns3::DataRateValue parsed;
    if (!parsed.DeserializeFromString(opt.rate, ns3::MakeDataRateChecker()) ||
        parsed.Get().GetBitRate() == 0)
    {
        err << "fabemu demo: --rate '" << opt.rate << "' is not a data rate (e.g. 100Gbps)\n";
        return kExitBadInput;
    }
    Scenario s;
    try
    {
        s = ParseScenario(DemoScenarioYaml(opt), "fabemu demo");
    }
    catch (const ScenarioError& e)
    {
        err << e.what() << "\n";
        return kExitBadInput;
    }
    // The normal path from here: results folder, summary, plots, report, exit code.
    RunOptions run;
    run.out = opt.out;
    run.force = opt.force;
    run.progress = opt.quiet ? ProgressMode::Quiet : ProgressMode::Lines;
    return RunScenario(s, run, out, err);
}

} // namespace fabemu
