// fabemu run / validate / list / report: scenario files in, results folders out.
#ifndef FABEMU_RUN_H
#define FABEMU_RUN_H

#include "scenarios/src/scenario.h"

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace fabemu
{

enum class ProgressMode
{
    Bar,   ///< a live line on a terminal
    Lines, ///< a plain line every few seconds (pipes, CI logs)
    Quiet,
};

struct RunOptions
{
    std::string file;
    std::string out;   ///< default: results/<name>; replaced only if fabemu wrote it (or force)
    bool force{false}; ///< replace \c out even if it is not a results folder
    std::vector<std::string> set;
    std::optional<uint64_t> seed;
    ProgressMode progress{ProgressMode::Lines};
    std::string cache; ///< image cache for VM endpoints
    /// A partitioned run: `mpirun -np ranks` of this command, on \p engine ("gtw" or
    /// "null"); 1: this process alone, breaking ties between events as the ranks do
    /// (ns3::DeterministicScheduler); 0 (not given): this process, in ns-3's own event
    /// order (ns3::BucketScheduler).
    uint32_t ranks{0};
    std::string engine{"gtw"};
};

int RunScenarioFile(const RunOptions& opt, std::ostream& out, std::ostream& err);
/// The same for a scenario already loaded (opt.file, set and seed unused): preflight,
/// the run, the results folder, the exit code.
int RunScenario(const Scenario& s, const RunOptions& opt, std::ostream& out, std::ostream& err);
int ValidateScenarioFile(const std::string& file, const std::vector<std::string>& set,
                         std::ostream& out, std::ostream& err);
/// `fabemu topo`: the scenario's server inside as a matrix (NodeTopologyMatrix); exit 2 on
/// a bad file or a scenario without topology.node.
int PrintNodeTopology(const std::string& file, const std::vector<std::string>& set,
                      std::ostream& out, std::ostream& err);
/// Builders, workload types and every scenario key with its help and default.
int ListScenarioKeys(std::ostream& out);
/// Every attribute of our models' TypeIds (groups Roce, Rdma, Infiniband, Iwarp, Pcie):
/// name, type, initial value and help, as ns-3's --PrintAttributes; with \p type, that
/// TypeId's only (exit 2 and a did-you-mean for a name not registered).
int ListAttributes(const std::string& type, std::ostream& out, std::ostream& err);
/// Re-renders the plots and report.md of a results folder.
int ReportResults(const std::string& dir, std::ostream& out, std::ostream& err);

} // namespace fabemu

#endif
