// fabemu sweep's plan: the cross product of a grid of scenario keys (and seeds) as a
// list of named runs, checked before any of them starts, kept in DIR/sweep.json.
#ifndef FABEMU_SWEEP_PLAN_H
#define FABEMU_SWEEP_PLAN_H

#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace fabemu
{

/// One grid axis: a scenario key (as --set takes it) and the values it sweeps.
struct GridAxis
{
    std::string key;
    std::vector<std::string> values;
};

/// One combination: a normal `fabemu run` into DIR/<name>.
struct SweepRun
{
    std::string name;                ///< folder name: "003-fabric.cc=none,seed=2"
    std::vector<std::string> values; ///< one per grid axis, in axis order
    std::optional<uint64_t> seed;    ///< with --seeds; else the file's seed
    /// The run's --set list: the sweep's own --set, then one KEY=VALUE per axis, then seed.
    std::vector<std::string> Overrides(const std::vector<std::string>& fixed,
                                       const std::vector<GridAxis>& grid) const;
};

struct SweepPlan
{
    std::string file;             ///< the scenario file, absolute
    std::vector<std::string> set; ///< --set for every run
    std::vector<GridAxis> grid;
    unsigned seeds{0}; ///< 0: the file's seed; N: seeds 1..N
    std::vector<SweepRun> runs;

    nlohmann::json Json() const;
    static SweepPlan FromJson(const nlohmann::json& j);
    /// DIR/sweep.json; throws std::runtime_error naming the file when it is not a plan.
    static SweepPlan Read(const std::filesystem::path& dir);
    void Write(const std::filesystem::path& dir) const;
    /// Whether \p other sweeps the same file, keys, values and seeds.
    bool SameAs(const SweepPlan& other) const;
};

/// Parses "KEY=V1,V2,..." (throws std::invalid_argument naming the flag and what is wrong).
GridAxis ParseGridAxis(const std::string& flag);

/**
 * \brief The cross product of \p grid (first axis slowest) and seeds 1..\p seeds.
 *
 * Throws std::invalid_argument for a key given twice, or a seed key with \p seeds.
 */
SweepPlan MakeSweepPlan(const std::string& file, const std::vector<std::string>& set,
                        const std::vector<GridAxis>& grid, unsigned seeds);

/**
 * \brief Loads and preflights every run's scenario as `fabemu run` would.
 * \return "" when all are valid, else the first problem: the combination, where the key
 *         sits in the file ("file:LINE:COL", or that the grid adds it), and why.
 */
std::string CheckSweepPlan(const SweepPlan& plan);

/// Where \p key ("a.b.0.c") sits in the YAML \p file: "file:LINE:COL", or "" if absent.
std::string KeyPosition(const std::string& file, const std::string& key);

} // namespace fabemu

#endif
