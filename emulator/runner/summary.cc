#include "emulator/runner/summary.h"

#include <algorithm>

namespace fabemu
{

using nlohmann::json;
using namespace ns3;

double
Sec(Time t)
{
    return static_cast<double>(t.GetPicoSeconds()) / 1e12;
}

namespace
{

/// One flow of summary.json: FCT, throughput and slowdown for a completed flow only.
json
FlowJson(const FlowRecord& r)
{
    json f = {{"id", r.id},
              {"src", r.spec.srcName.empty() ? "h" + std::to_string(r.spec.src) : r.spec.srcName},
              {"dst", r.spec.dstName.empty() ? "h" + std::to_string(r.spec.dst) : r.spec.dstName},
              {"op", RdmaOpName(r.spec.op)},
              {"bytes", r.spec.bytes},
              {"start_s", Sec(r.spec.start)},
              {"state", FlowStateName(r.state)},
              {"delivered_bytes", r.delivered},
              {"ideal_fct_s", Sec(r.idealFct)},
              {"ok", r.Completed()}};
    if (!r.spec.tag.empty())
    {
        f["workload"] = r.spec.tag;
    }
    if (r.state == FlowState::Failed)
    {
        f["reason"] = r.reason;
    }
    if (r.Completed())
    {
        const double fct = Sec(r.fct);
        f["fct_s"] = fct;
        f["throughput_gbps"] = fct > 0 ? r.spec.bytes * 8.0 / fct / 1e9 : 0;
        f["slowdown"] = r.idealFct.IsStrictlyPositive() ? fct / Sec(r.idealFct) : 0;
    }
    return f;
}

/// summary.json's flows (every flow, by id) and flow_stats; \p delivered counts the bytes
/// delivered in order: all of a completed flow's, what a failed or pending one got through.
json
FlowsJson(const std::vector<FlowRecord>& outcomes, json& stats, uint64_t& delivered)
{
    json flows = json::array();
    std::vector<double> slowdowns;
    std::vector<double> rates;
    size_t failed = 0;
    delivered = 0;
    std::vector<FlowRecord> sorted = outcomes;
    std::sort(sorted.begin(), sorted.end(),
              [](const auto& a, const auto& b) { return a.id < b.id; });
    for (const auto& r : sorted)
    {
        flows.push_back(FlowJson(r));
        delivered += r.Completed() ? r.spec.bytes : r.delivered;
        failed += r.state == FlowState::Failed;
        if (r.Completed())
        {
            slowdowns.push_back(flows.back()["slowdown"].get<double>());
            rates.push_back(flows.back()["throughput_gbps"].get<double>());
        }
    }
    std::sort(slowdowns.begin(), slowdowns.end());
    auto pct = [&slowdowns](double q) {
        return slowdowns.empty()
                   ? 0.0
                   : slowdowns[std::min(slowdowns.size() - 1, size_t(q * slowdowns.size()))];
    };
    double sum = 0;
    double sq = 0;
    for (double x : rates)
    {
        sum += x;
        sq += x * x;
    }
    stats["count"] = sorted.size();
    stats["completed"] = slowdowns.size();
    stats["failed"] = failed;
    stats["pending"] = sorted.size() - slowdowns.size() - failed;
    stats["jain_throughput"] = rates.empty() ? 0.0 : sum * sum / (rates.size() * sq);
    stats["min_throughput_gbps"] =
        rates.empty() ? 0.0 : *std::min_element(rates.begin(), rates.end());
    stats["max_throughput_gbps"] =
        rates.empty() ? 0.0 : *std::max_element(rates.begin(), rates.end());
    stats["fct_slowdown"] = {{"median", pct(0.5)},
                             {"p99", pct(0.99)},
                             {"max", slowdowns.empty() ? 0.0 : slowdowns.back()}};
    return flows;
}

} // namespace

json
RunSummaryJson(double simTimeS, const std::vector<FlowRecord>& flows, const FabricTotals& fabric)
{
    json summary;
    summary["sim_time_s"] = simTimeS;
    uint64_t delivered = 0;
    json stats;
    summary["flows"] = FlowsJson(flows, stats, delivered);
    summary["flow_stats"] = stats;
    summary["fct_slowdown"] = stats["fct_slowdown"];
    summary["totals"] = {{"drops", fabric.fabricDrops},
                         {"congestion_drops", fabric.congestionDrops},
                         {"pfc_pause_frames", fabric.pfcFrames},
                         {"ecn_marks", fabric.ecnMarks},
                         {"cnps", fabric.cnps},
                         {"credit_stalls", fabric.creditStalls},
                         {"bytes_delivered", delivered}};
    summary["totals"].update(fabric.own);
    summary["switch_drops"] = fabric.switchDrops;
    summary["peak_queue_bytes"] = fabric.peakQueueBytes;
    summary["commands"] = json::array();
    if (!fabric.deadlock.is_null())
    {
        summary["deadlock"] = fabric.deadlock;
    }
    return summary;
}

} // namespace fabemu
