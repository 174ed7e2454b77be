// summary.json's run part, one builder for simulation and emulation.
#ifndef FABEMU_SUMMARY_H
#define FABEMU_SUMMARY_H

#include "emulator/runner/fabric.h"

#include "ns3/rdma-workload.h"

#include <nlohmann/json.hpp>

#include <vector>

namespace fabemu
{

/// A time in seconds for summary.json: the picoseconds it holds over 1e12, so that
/// 90.82752 us is 9.082752e-05 and not 9.082751999999996e-05 (Time::GetSeconds).
double Sec(ns3::Time t);

/**
 * \brief sim_time_s, flows (every flow, by id), flow_stats, fct_slowdown, totals
 * (the fabric's, and bytes_delivered: all of a completed flow's bytes, what a failed
 * or pending one got through), switch_drops, peak_queue_bytes and an empty commands list.
 */
nlohmann::json RunSummaryJson(double simTimeS, const std::vector<ns3::FlowRecord>& flows,
                              const FabricTotals& fabric);

} // namespace fabemu

#endif
