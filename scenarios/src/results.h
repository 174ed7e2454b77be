/*
 * What a run leaves for people to look at: the expectations checked against
 * summary.json, metrics read from the output of tools users know (perftest),
 * CSV files, gnuplot plots and report.md. RenderReport() works only from the
 * files in a results folder, so `fabemu report DIR` re-renders any old run.
 */
#ifndef FABEMU_RESULTS_H
#define FABEMU_RESULTS_H

#include "scenarios/src/scenario.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <ostream>
#include <string>
#include <vector>

namespace fabemu
{

/// Checks each expectation against \p summary; returns the "expect" array
/// [{metric, want, value, ok}] and sets \p allOk. A metric with '*' must hold
/// for every element; a metric missing from the summary fails with value null.
nlohmann::json CheckExpectations(const std::vector<Expectation>& expect,
                                 const nlohmann::json& summary, bool& allOk);

/// The result table of a perftest run (ib_write_bw, ib_send_lat, ...): the
/// column names of its "#bytes" header made into keys (bw_average_mb_sec,
/// t_typical_usec, ...) with the numbers of the last result line. Empty when
/// the output has no such table; only {"untimed": why} when perftest says it
/// could not time the run (its 0.00 figures are then no measurement).
nlohmann::json PerftestMetrics(const std::string& output);

/// The table of a collective benchmark in nccl-tests' format (fabemu-allreduce,
/// nccl-tests' all_reduce_perf): for the largest size, size_bytes, time_s,
/// algbw_gbs and busbw_gbs (the first, out-of-place, columns where both are
/// printed); avg_busbw_gbs; wrong, the #wrong column summed over every size, and
/// correct (wrong is 0). Empty when the output has no such table; no wrong and no
/// correct when the table was not checked (nccl-tests' -c 0 prints N/A).
nlohmann::json CollectiveTableMetrics(const std::string& output);

/// ucx_perftest's summary ("Final:" line): iterations; latency_*_us (latency tests) or
/// overhead_*_us (bandwidth tests) at p50, average and overall; bw_average_mb_sec and
/// bw_overall_mb_sec; msg_rate_overall. Empty when the output has none.
nlohmann::json UcxPerftestMetrics(const std::string& output);

/// A command's metrics: its perftest table, else its collective table, else its
/// ucx_perftest summary, else none.
nlohmann::json CommandMetrics(const std::string& output);

/// The last \p lines lines of \p text.
std::string Tail(const std::string& text, size_t lines);

/// Writes \p rows (space-separated fields, one row per line) as CSV with \p header.
void WriteCsv(const std::filesystem::path& path, const std::string& header,
              const std::string& rows);

/// The rows of a CSV file WriteCsv wrote, header skipped, each split at its commas.
std::vector<std::vector<std::string>> ReadCsv(const std::filesystem::path& path);

/// (Re)writes plots/*.gp, plots/*.png (when gnuplot is there) and report.md in
/// \p dir from its summary.json and CSV files. Returns the plots made.
/// "a RoCEv2 fabric", "an InfiniBand fabric", "an iWARP fabric" for fabric.type \p type.
std::string FabricPhrase(const std::string& type);

/// Whether summary.json's total \p key means something on fabric \p type (iWARP has no
/// PFC, CNPs or credits; RoCEv2 no credits; InfiniBand no PFC).
bool TotalMeansSomething(const std::string& type, const std::string& key);

/// p50/p95/p99 FCT slowdown of the completed flows by size bucket and workload, as a
/// markdown table ("" without completed flows); failed flows counted apart.
std::string FctTable(const nlohmann::json& summary);

/// summary.json's memory as aligned text (the terminal) or a markdown table (report.md):
/// each memory workload's target, achieved bandwidth and latency percentiles.
std::string MemoryTable(const nlohmann::json& memory);
std::string MemoryTableMd(const nlohmann::json& memory);
/// report.md's opening "## What happened": a few lines in words from \p summary (the
/// real commands and what they measured, simulated flows, congestion and what the
/// fabric did about it, real against model, timing, expectations); \p peakQueueBytes
/// is the deepest switch queue of queue.csv, or 0 when unknown. "" with nothing to say.
std::string WhatHappenedMd(const nlohmann::json& summary, double peakQueueBytes);
/// report.md's faults: each fault's time, link, kind, value and whether it happened.
std::string FaultsTableMd(const nlohmann::json& faults);

std::vector<std::string> RenderReport(const std::filesystem::path& dir, std::ostream& err);

} // namespace fabemu

#endif
