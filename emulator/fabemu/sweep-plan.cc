#include "emulator/fabemu/sweep-plan.h"

#include "emulator/runner/scenario-fabric.h"
#include "scenarios/src/scenario.h"

#include <fmt/format.h>

#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>
#include <yaml-cpp/yaml.h>

namespace fabemu
{

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace
{

/// A folder name's characters: the value as written where it is safe, '_' elsewhere.
std::string
Safe(const std::string& s)
{
    std::string out;
    for (char c : s)
    {
        const bool ok = std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' ||
                        c == '_' || c == '+' || c == '=' || c == ',';
        out += ok ? c : '_';
    }
    return out;
}

std::string
RunName(size_t index, const std::vector<GridAxis>& grid, const std::vector<std::string>& values,
        const std::optional<uint64_t>& seed)
{
    std::vector<std::string> parts;
    for (size_t a = 0; a < grid.size(); ++a)
    {
        // The last part of a long key names it well enough: workloads.0.load -> load,
        // ns3::SwitchMmu::Kmin -> Kmin.
        const std::string& key = grid[a].key;
        const size_t dot = key.find_last_of(".:");
        parts.push_back(Safe(dot == std::string::npos ? key : key.substr(dot + 1)) + "=" +
                        Safe(values[a]));
    }
    if (seed)
    {
        parts.push_back(fmt::format("seed={}", *seed));
    }
    return fmt::format("{:03}-{}", index, fmt::join(parts, ","));
}

} // namespace

std::vector<std::string>
SweepRun::Overrides(const std::vector<std::string>& fixed, const std::vector<GridAxis>& grid) const
{
    std::vector<std::string> set = fixed;
    for (size_t a = 0; a < grid.size(); ++a)
    {
        set.push_back(grid[a].key + "=" + values[a]);
    }
    if (seed)
    {
        set.push_back(fmt::format("seed={}", *seed));
    }
    return set;
}

GridAxis
ParseGridAxis(const std::string& flag)
{
    const size_t eq = flag.find('=');
    if (eq == std::string::npos || eq == 0)
    {
        throw std::invalid_argument(fmt::format(
            "--grid '{}' must be KEY=V1,V2,... (for example fabric.cc=dcqcn,none)", flag));
    }
    GridAxis axis{flag.substr(0, eq), {}};
    std::stringstream ss(flag.substr(eq + 1));
    for (std::string v; std::getline(ss, v, ',');)
    {
        if (v.empty())
        {
            throw std::invalid_argument(
                fmt::format("--grid '{}': an empty value (two commas, or one at an end)", flag));
        }
        if (std::find(axis.values.begin(), axis.values.end(), v) != axis.values.end())
        {
            throw std::invalid_argument(fmt::format("--grid '{}': '{}' is given twice", flag, v));
        }
        axis.values.push_back(v);
    }
    if (axis.values.empty() || flag.back() == ',')
    {
        throw std::invalid_argument(fmt::format("--grid '{}' has no value after '='", flag));
    }
    return axis;
}

SweepPlan
MakeSweepPlan(const std::string& file, const std::vector<std::string>& set,
              const std::vector<GridAxis>& grid, unsigned seeds)
{
    std::set<std::string> keys;
    for (const auto& axis : grid)
    {
        if (!keys.insert(axis.key).second)
        {
            throw std::invalid_argument(fmt::format(
                "--grid: key '{}' is given twice; give its values in one --grid", axis.key));
        }
        if (axis.key == "seed" && seeds > 0)
        {
            throw std::invalid_argument("--grid seed=... and --seeds both set the seed: use one");
        }
    }
    SweepPlan plan;
    plan.file = fs::absolute(file).lexically_normal().string();
    plan.set = set;
    plan.grid = grid;
    plan.seeds = seeds;
    size_t combos = 1;
    for (const auto& axis : grid)
    {
        combos *= axis.values.size();
    }
    for (size_t c = 0; c < combos; ++c)
    {
        std::vector<std::string> values(grid.size());
        size_t rest = c;
        for (size_t a = grid.size(); a-- > 0;) // the last axis changes fastest
        {
            values[a] = grid[a].values[rest % grid[a].values.size()];
            rest /= grid[a].values.size();
        }
        for (unsigned k = 0; k < std::max(1U, seeds); ++k)
        {
            SweepRun run;
            run.values = values;
            if (seeds > 0)
            {
                run.seed = k + 1;
            }
            run.name = RunName(plan.runs.size(), grid, values, run.seed);
            plan.runs.push_back(std::move(run));
        }
    }
    return plan;
}

std::string
KeyPosition(const std::string& file, const std::string& key)
{
    try
    {
        YAML::Node at = YAML::LoadFile(file);
        std::stringstream ss(key);
        for (std::string part; std::getline(ss, part, '.');)
        {
            if (at.IsSequence())
            {
                if (part.empty() || part.find_first_not_of("0123456789") != std::string::npos ||
                    std::stoul(part) >= at.size())
                {
                    return "";
                }
                at.reset(at[std::stoul(part)]);
            }
            else if (at.IsMap() && at[part])
            {
                at.reset(at[part]);
            }
            else
            {
                return "";
            }
        }
        return fmt::format("{}:{}:{}", file, at.Mark().line + 1, at.Mark().column + 1);
    }
    catch (const std::exception&)
    {
        return "";
    }
}

std::string
CheckSweepPlan(const SweepPlan& plan)
{
    for (const auto& run : plan.runs)
    {
        try
        {
            PreflightScenario(LoadScenario(plan.file, run.Overrides(plan.set, plan.grid)));
        }
        catch (const ScenarioError& e)
        {
            // Which axis is to blame: the key the message names, else every axis.
            std::vector<std::string> where;
            for (size_t a = 0; a < plan.grid.size(); ++a)
            {
                const std::string& key = plan.grid[a].key;
                const std::string pos = KeyPosition(plan.file, key);
                where.push_back(fmt::format("{}={} ({})", key, run.values[a],
                                            pos.empty() ? "not in the file: the grid adds it"
                                                        : "the file has it at " + pos));
            }
            return fmt::format("combination {} [{}{}]: {}", run.name, fmt::join(where, "; "),
                               run.seed ? fmt::format("; seed={}", *run.seed) : "", e.what());
        }
    }
    return "";
}

json
SweepPlan::Json() const
{
    json j = {{"fabemu_sweep", 1}, {"file", file},          {"set", set},
              {"seeds", seeds},    {"grid", json::array()}, {"runs", json::array()}};
    for (const auto& axis : grid)
    {
        j["grid"].push_back({{"key", axis.key}, {"values", axis.values}});
    }
    for (const auto& run : runs)
    {
        j["runs"].push_back({{"name", run.name},
                             {"values", run.values},
                             {"seed", run.seed ? json(*run.seed) : json(nullptr)}});
    }
    return j;
}

SweepPlan
SweepPlan::FromJson(const json& j)
{
    SweepPlan p;
    p.file = j.at("file").get<std::string>();
    p.set = j.at("set").get<std::vector<std::string>>();
    p.seeds = j.at("seeds").get<unsigned>();
    for (const auto& a : j.at("grid"))
    {
        p.grid.push_back(
            {a.at("key").get<std::string>(), a.at("values").get<std::vector<std::string>>()});
    }
    for (const auto& r : j.at("runs"))
    {
        SweepRun run;
        run.name = r.at("name").get<std::string>();
        run.values = r.at("values").get<std::vector<std::string>>();
        if (!r.at("seed").is_null())
        {
            run.seed = r.at("seed").get<uint64_t>();
        }
        if (run.values.size() != p.grid.size())
        {
            throw std::runtime_error("run " + run.name + " has not one value per grid key");
        }
        p.runs.push_back(std::move(run));
    }
    return p;
}

SweepPlan
SweepPlan::Read(const fs::path& dir)
{
    const fs::path file = dir / "sweep.json";
    std::ifstream in(file);
    if (!in)
    {
        throw std::runtime_error(
            fmt::format("{} is not a sweep folder (no sweep.json)", dir.string()));
    }
    try
    {
        return FromJson(json::parse(in));
    }
    catch (const std::exception& e)
    {
        throw std::runtime_error(
            fmt::format("{} is not a fabemu sweep plan: {}", file.string(), e.what()));
    }
}

void
SweepPlan::Write(const fs::path& dir) const
{
    const fs::path tmp = dir / "sweep.json.tmp";
    std::ofstream(tmp) << Json().dump(2) << "\n";
    fs::rename(tmp, dir / "sweep.json");
}

bool
SweepPlan::SameAs(const SweepPlan& other) const
{
    return Json() == other.Json();
}

} // namespace fabemu
