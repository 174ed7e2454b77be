#include "emulator/fabemu/launch-prediction.h"

#include <fmt/format.h>

#include <algorithm>
#include <regex>
#include <yaml-cpp/yaml.h>

namespace fabemu
{

namespace
{

/// fabemu-allreduce's first line names its operation and algorithm.
bool
ReadHeader(const std::string& out, std::string& op, std::string& algorithm, std::string& transport)
{
    static const std::regex re(
        "# fabemu-allreduce: ([a-z]+), algorithm ([a-z0-9-]+), [0-9]+ ranks, rank [0-9]+, "
        "transport ([a-z]+)");
    std::smatch m;
    if (!std::regex_search(out, m, re))
    {
        return false;
    }
    op = m[1];
    algorithm = m[2];
    transport = m[3];
    return true;
}

/// The model's algorithm for Gloo's, or empty with \p why.
std::string
ModelAlgorithm(const std::string& op, const std::string& gloo, std::string& why)
{
    if (op == "allgather" && gloo == "ring")
    {
        return "ring"; // Gloo's all-gather ring moves each piece n-1 hops, as the model's
    }
    if (op == "allreduce" && gloo == "ring-chunked")
    {
        return "ring";
    }
    if (op == "allreduce" && gloo == "halving-doubling")
    {
        return "halving-doubling";
    }
    if (op == "allreduce" && gloo == "ring")
    {
        why = "Gloo's ring passes the whole buffer n-1 times, store and forward "
              "(allreduce_ring.h); the model's ring is NCCL's (2(n-1)/n of it): run "
              "--algorithm ring-chunked to compare";
    }
    else
    {
        why = fmt::format("the model has no {} like Gloo's {}", op, gloo);
    }
    return "";
}

} // namespace

std::vector<LaunchPrediction>
PlanLaunchPredictions(const Scenario& s, const nlohmann::json& commands,
                      const std::vector<std::string>& outputs)
{
    std::vector<LaunchPrediction> plans;
    size_t next = 0; // the first command record of the workload at hand
    for (size_t w = 0; w < s.workloads.size(); ++w)
    {
        const auto& wl = s.workloads[w];
        if (wl.type == "command")
        {
            ++next;
            continue;
        }
        if (wl.type != "launch")
        {
            continue;
        }
        const size_t first = next;
        next += wl.hosts.size();
        if (next > commands.size() || next > outputs.size())
        {
            break; // the run stopped before this launch
        }
        LaunchPrediction p;
        p.workload = w;
        p.hosts = wl.hosts;
        std::string op;
        bool allGood = true;
        for (size_t r = first; r < next; ++r)
        {
            const auto& c = commands[r];
            const auto& m = c.value("metrics", nlohmann::json::object());
            if (c.value("exit_code", -1) != 0 || !m.contains("time_s") ||
                !m.value("correct", false))
            {
                allGood = false;
                break;
            }
            p.bytes = std::max<uint64_t>(p.bytes, m.value("size_bytes", 0.0));
            p.measuredTimeS = std::max(p.measuredTimeS, m.value("time_s", 0.0));
            const double bus = m.value("busbw_gbs", 0.0);
            p.measuredBusBwGbs = r == first ? bus : std::min(p.measuredBusBwGbs, bus);
        }
        std::string transport;
        if (!allGood || !ReadHeader(outputs[first], op, p.glooAlgorithm, transport))
        {
            continue; // not fabemu-allreduce, or it failed: nothing to compare
        }
        p.op = op == "allreduce" ? "all-reduce" : op == "allgather" ? "all-gather" : op;
        p.modelAlgorithm = ModelAlgorithm(op, p.glooAlgorithm, p.why);
        if (transport != "ibverbs")
        {
            p.modelAlgorithm.clear();
            p.why = "Gloo ran over " + transport + "; the model's collectives run over RDMA";
        }
        plans.push_back(std::move(p));
    }
    return plans;
}

Scenario
PredictionScenario(const Scenario& s, const std::vector<LaunchPrediction>& group)
{
    YAML::Node root = YAML::Load(ResolvedYaml(s));
    root.remove("endpoints");
    root.remove("expect");
    root.remove("record");
    root["name"] = s.name + "-prediction";
    YAML::Node workloads(YAML::NodeType::Sequence);
    for (const auto& p : group)
    {
        YAML::Node ranks(YAML::NodeType::Sequence);
        for (uint32_t h : p.hosts)
        {
            ranks.push_back("h" + std::to_string(h));
        }
        YAML::Node collective;
        collective["type"] = "collective";
        collective["job"] = "w" + std::to_string(p.workload);
        collective["op"] = p.op;
        collective["algorithm"] = p.modelAlgorithm;
        collective["ranks"] = ranks;
        collective["bytes"] = std::to_string(p.bytes);
        workloads.push_back(collective);
    }
    root["workloads"] = workloads;
    YAML::Emitter text;
    text << root;
    return ParseScenario(text.c_str(), s.file + " (its prediction)");
}

std::vector<std::vector<LaunchPrediction>>
PredictionGroups(const Scenario& s, const std::vector<LaunchPrediction>& plans)
{
    // Launches start in order. One in the foreground ran beside the launches in the
    // background started before it (they run to the end), not beside other
    // foreground ones; a background launch's own figure comes from the first group
    // it is in (with the next launch after it), or its own if none follows.
    std::vector<LaunchPrediction> modelled;
    for (const auto& p : plans)
    {
        if (p.why.empty())
        {
            modelled.push_back(p);
        }
    }
    std::vector<std::vector<LaunchPrediction>> groups;
    std::vector<LaunchPrediction> running; // in the background so far
    for (size_t i = 0; i < modelled.size(); ++i)
    {
        auto group = running;
        group.push_back(modelled[i]);
        if (s.workloads[modelled[i].workload].background)
        {
            running.push_back(modelled[i]);
            if (i + 1 < modelled.size())
            {
                continue; // it is in the next launch's group
            }
        }
        groups.push_back(std::move(group));
    }
    return groups;
}

nlohmann::json
PredictionJson(const LaunchPrediction& p, const nlohmann::json& simulated)
{
    nlohmann::json hosts = nlohmann::json::array();
    for (uint32_t h : p.hosts)
    {
        hosts.push_back("h" + std::to_string(h));
    }
    nlohmann::json row{{"workload", p.workload},
                       {"ranks", hosts},
                       {"op", p.op},
                       {"gloo_algorithm", p.glooAlgorithm},
                       {"bytes", p.bytes},
                       {"measured_time_s", p.measuredTimeS},
                       {"measured_busbw_gbs", p.measuredBusBwGbs}};
    if (!p.why.empty())
    {
        row["why_no_model"] = p.why;
        return row;
    }
    row["model_algorithm"] = p.modelAlgorithm;
    if (simulated.is_null() || simulated.value("state", std::string()) != "completed")
    {
        row["why_no_model"] = simulated.is_null() ? std::string("the simulation gave no result")
                                                  : "the simulated collective did not complete: " +
                                                        simulated.value("reason", std::string("?"));
        return row;
    }
    const double t = simulated["time_s"].get<double>();
    row["model_time_s"] = t;
    row["model_busbw_gbs"] = simulated["busbw_gbs"];
    row["model_analytical_time_s"] = simulated["analytical_time_s"];
    row["measured_over_model"] = t > 0 ? p.measuredTimeS / t : 0.0;
    return row;
}

} // namespace fabemu
