/*
 * Real against model: for each launch of fabemu-allreduce in a scenario with VM
 * endpoints, the same collective (operation, ranks in order, the largest size)
 * simulated on the same fabric and topology, so report.md can put the real
 * library's time beside the model's (issue 20, docs/endpoints.md).
 *
 * Gloo's algorithms map onto the collective model's where they move the same
 * bytes between the same ranks: ring-chunked onto ring (a reduce-scatter then an
 * all-gather around the ring, 2(n-1)/n of the buffer from each rank) and
 * halving-doubling onto halving-doubling. Gloo's plain ring has no counterpart:
 * it passes the whole buffer n-1 times round the ring, each hop waiting for the
 * one before (gloo/allreduce_ring.h), so its row says so instead of a figure.
 */
#ifndef FABEMU_LAUNCH_PREDICTION_H
#define FABEMU_LAUNCH_PREDICTION_H

#include "scenarios/src/scenario.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace fabemu
{

/// One launch of fabemu-allreduce as it ran, and the collective that models it.
struct LaunchPrediction
{
    size_t workload{0};          ///< its index in the scenario's workloads
    std::vector<uint32_t> hosts; ///< its ranks' hosts, rank 0 first
    std::string op;              ///< the model's name: all-reduce, all-gather
    std::string glooAlgorithm;   ///< as fabemu-allreduce printed it
    std::string modelAlgorithm;  ///< empty when the model has none like it
    uint64_t bytes{0};           ///< the largest size measured
    double measuredTimeS{0};     ///< the slowest rank's time at that size
    double measuredBusBwGbs{0};  ///< the slowest rank's busBw at that size
    std::string why;             ///< why there is no prediction; empty when there is
};

/// The launches of fabemu-allreduce in \p s, read from the run's \p commands (the
/// summary's, one per rank in launch order, with their metrics) and \p outputs (each
/// one's whole output): what each measured and what models it. Launches whose ranks
/// did not all succeed are left out: there is nothing to compare.
std::vector<LaunchPrediction> PlanLaunchPredictions(const Scenario& s,
                                                    const nlohmann::json& commands,
                                                    const std::vector<std::string>& outputs);

/// \p s without its endpoints, expectations and captures, its workloads replaced by
/// the collectives that model \p group, all starting at once (job "wK" for workload
/// K), run until they end.
Scenario PredictionScenario(const Scenario& s, const std::vector<LaunchPrediction>& group);

/// The launches of \p plans that ran at the same time, each group to be simulated
/// together and ending with the launch it is for: each launch with the launches in
/// the background started before it (they run to the end). A background launch is
/// also in the group of the next launch after it, or ends its own.
std::vector<std::vector<LaunchPrediction>> PredictionGroups(
    const Scenario& s, const std::vector<LaunchPrediction>& plans);

/// summary.json's row for \p p (launch_predictions): what it measured beside
/// \p simulated (the collective row of the prediction's summary; null where there is
/// none), and the ratio of the times. report.md draws them (results.cc).
nlohmann::json PredictionJson(const LaunchPrediction& p, const nlohmann::json& simulated);

} // namespace fabemu

#endif
