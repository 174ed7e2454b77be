// fabemu sweep: many normal runs of one scenario over a grid of keys and seeds, run
// here (-j N at once) or as a Slurm job array, then one table (sweep.csv) and plots.
#ifndef FABEMU_SWEEP_H
#define FABEMU_SWEEP_H

#include "emulator/fabemu/sweep-plan.h"

#include <filesystem>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace fabemu
{

struct SweepOptions
{
    std::string file;
    std::vector<std::string> grid; ///< "KEY=V1,V2,..."
    std::vector<std::string> set;  ///< KEY=VALUE for every run
    unsigned seeds{0};             ///< 0: the file's seed; N: seeds 1..N
    unsigned jobs{1};              ///< runs at once (here), or the array's limit (Slurm)
    bool jobsGiven{false};
    std::string out;
    bool slurm{false};
    bool noWait{false};
    std::vector<std::string> plots; ///< "METRIC[,XKEY[,LINEKEY]]"
    bool quiet{false};
};

/// Plans, checks, runs what is not finished yet (a resumed sweep reruns nothing), and
/// collects. Exit 0 when every run exited 0, 1 when one did not, 2 on bad input.
int RunSweep(const SweepOptions& opt, std::ostream& out, std::ostream& err);

/// `fabemu sweep --collect DIR`: sweep.csv and the plots from the runs finished so far.
int CollectSweep(const std::string& dir, const std::vector<std::string>& plots, std::ostream& out,
                 std::ostream& err);

/// One run of a plan (what a Slurm array task does): DIR/<name>/, its output in
/// DIR/<name>.log, then DIR/<name>.done with its exit code. \p err: a plan not readable.
int RunSweepTask(const std::string& dir, unsigned index, std::ostream& err);

/// The metrics sweep.csv carries after the grid values, in column order.
const std::vector<std::string>& SweepMetrics();

/// What DIR/<run>.done says once the run has ended.
struct RunEnd
{
    int exit;
    double wallTimeS;
};

/// DIR/<run>.done read; none while the run has not ended (or the file is not one).
std::optional<RunEnd> ReadRunEnd(const std::filesystem::path& dir, const SweepRun& run);

/// One run as the table shows it: its exit code once ended, and the metrics of its
/// summary.json (SweepMetrics' names; a metric it lacks is absent).
struct SweepRow
{
    std::optional<int> exit;
    std::map<std::string, double> metrics;
};

/// Every run of \p plan in \p dir, in plan order, each file read once.
std::vector<SweepRow> ReadSweepRows(const std::filesystem::path& dir, const SweepPlan& plan);

/// DIR/sweep.csv: one line per run; the runs not finished have empty metrics.
void WriteSweepCsv(const std::filesystem::path& dir, const SweepPlan& plan,
                   const std::vector<SweepRow>& rows);

/**
 * \brief Draws DIR/plots/<metric>-vs-<key>.png for each spec "METRIC[,XKEY[,LINEKEY]]".
 *
 * The x key defaults to the first grid key, the line key to the next one; other keys and
 * seeds are averaged, and the title says so. An empty \p specs draws the default metric (busbw_gbs
 * when runs have collectives, else fct_slowdown_p99). Returns the PNGs drawn; lines for what was
 * left out go to \p err.
 */
std::vector<std::string> DrawSweepPlots(const std::filesystem::path& dir, const SweepPlan& plan,
                                        const std::vector<SweepRow>& rows,
                                        const std::vector<std::string>& specs, std::ostream& err);

/// DIR/report.md: the sweep, a table of its runs (the metrics some run has), its plots.
void WriteSweepReport(const std::filesystem::path& dir, const SweepPlan& plan,
                      const std::vector<SweepRow>& rows, const std::vector<std::string>& plots);

/// "" when \p spec names a known metric and grid keys of \p plan, else the problem.
std::string CheckPlotSpec(const std::string& spec, const SweepPlan& plan);

} // namespace fabemu

#endif
