// The plots fabemu draws show their data: every shipped simulation scenario rendered,
// each plot's axes checked against its series (from the "# fabemu-check:" line of its
// .gp); and the renderer on hand-made results folders (queue gaps, a deadlock, QP names).
#include "../run-in-process.h"
#include "../scratch-dir.h"
#include "emulator/fabemu/exit-codes.h"
#include "emulator/fabemu/host-command.h"
#include "scenarios/src/results.h"
#include "tests/scenarios/plot-checks.h"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

using namespace fabemu;
namespace fs = std::filesystem;
using nlohmann::json;

namespace
{

const fs::path kScenarios = FABEMU_SCENARIO_DIR;

/// The plots of \p dir, each checked (plot-checks.h); a doctest failure per problem.
std::vector<std::string>
CheckPlots(const fs::path& dir)
{
    const auto f = plotcheck::CheckFolder(dir);
    CAPTURE(dir.string());
    for (const auto& p : f.problems)
    {
        FAIL_CHECK(p);
    }
    return f.plots;
}

bool
HaveGnuplot()
{
    return plotcheck::HaveGnuplot();
}

void
Write(const fs::path& p, const std::string& text)
{
    std::ofstream(p) << text;
}

} // namespace

TEST_CASE("every shipped simulation scenario: each plot shows its data")
{
    const ScratchDir dir("plots");
    std::vector<std::pair<std::string, std::vector<std::string>>> runs;
    for (const auto& e : fs::directory_iterator(kScenarios))
    {
        if (e.path().extension() != ".yaml" ||
            Slurp(e.path()).find("\nendpoints:") != std::string::npos)
        {
            continue;
        }
        runs.push_back({e.path().stem().string(), {}});
    }
    REQUIRE(runs.size() >= 8);
    // A deadlock too: min-hop routing on the ring (no flow completes).
    runs.push_back({"ib-ring-updown", {"fabric.routing=minhop"}});
    for (const auto& [name, set] : runs)
    {
        CAPTURE(name);
        const fs::path out = dir / (name + (set.empty() ? "" : "-set"));
        const RunOutcome r = RunInProcess(kScenarios / (name + ".yaml"), out, set);
        CAPTURE(r.err);
        REQUIRE(fs::exists(out / "summary.json"));
        const auto plots = CheckPlots(out); // and report.md
        CHECK(!plots.empty());
        // Re-rendering an old folder gives the same plots.
        std::ostringstream err;
        CHECK(RenderReport(out, err).size() == (HaveGnuplot() ? plots.size() : 0));
    }
}

TEST_CASE("queue samples left out are an empty queue; a plot of zeros is left out")
{
    const ScratchDir dir("plots-synthetic");
    Write(dir / "summary.json",
          R"({"scenario":"t","fabric":"roce","seed":1,"sim_time_s":0.0001,"wall_time_s":0.012345678,
              "totals":{"drops":0},
              "flow_stats":{"count":2,"completed":0,"failed":1,"pending":1,"jain_throughput":0},
              "flows":[{"id":0,"src":"h1","dst":"h0","op":"write","bytes":1000,"start_s":0,"state":"failed"},
                       {"id":1,"src":"h2","dst":"h0","op":"write","bytes":1000,"start_s":0,"state":"pending"}],
              "expect":[{"metric":"flow_stats.jain_throughput","want":">0","value":0.9999832904171833,"ok":true}]})");
    // Flows that deliver nothing (a deadlock): no throughput plot.
    Write(dir / "throughput.csv",
          "time_ns,flow,gbps\n10000,0,0\n20000,0,0\n10000,1,0\n20000,1,0\n");
    // A queue sampled at 10, 20 and 90 us: 30..80 us were empty.
    Write(dir / "queue.csv",
          "time_ns,node,port,prio,bytes\n10000,0,1,3,2048\n20000,0,1,3,4096\n90000,0,1,3,1024\n");
    Write(dir / "fct.csv", "sip,dip,sport,dport,bytes,start_ns,fct_ns,ideal_fct_ns,slowdown\n");
    std::ostringstream err;
    const auto made = RenderReport(dir, err);
    CHECK(!fs::exists(dir / "plots" / "throughput.gp"));
    CHECK(!fs::exists(dir / "plots" / "fct-slowdown.gp")); // no completed flow
    const std::string gp = Slurp(dir / "plots" / "queue.gp");
    CHECK(gp.find("0.03 0\n") != std::string::npos); // 30 us: drawn as 0
    CHECK(gp.find("0.08 0\n") != std::string::npos);
    CHECK(gp.find("0.09 1\n") != std::string::npos);
    CheckPlots(dir);
    const std::string md = Slurp(dir / "report.md");
    CHECK(md.find("plots/throughput.png: left out, every value is 0") != std::string::npos);
    CHECK(md.find("12.3 ms of wall time") != std::string::npos);
    CHECK(md.find("| 0.999983 |") != std::string::npos);
}

TEST_CASE("plots rendered by one gnuplot; one failing leaves the others drawn, and is named")
{
    if (!HaveGnuplot())
    {
        MESSAGE("gnuplot is not installed: plots are not rendered, nothing to check");
        return;
    }
    const ScratchDir dir("plots-together");
    const fs::path out = dir / "run";
    RunInProcess(kScenarios / "roce-incast-pfc.yaml", out, {});
    const auto plots = CheckPlots(out);
    REQUIRE(plots.size() >= 3);
    const fs::path bin = dir / "bin";
    fs::create_directories(bin);
    const std::string path = std::getenv("PATH");
    const std::string real = FindOnPath("gnuplot");
    REQUIRE(!real.empty());
    // A gnuplot on PATH that notes its scripts and runs the real one: one gnuplot draws
    // them all, in one start.
    const fs::path calls = dir / "calls";
    Write(bin / "gnuplot", "#!/bin/sh\necho \"$*\" >>" + ShellQuote(calls.string()) + "\nexec " +
                               ShellQuote(real) + " \"$@\"\n");
    fs::permissions(bin / "gnuplot", fs::perms::owner_all);
    setenv("PATH", (bin.string() + ":" + path).c_str(), 1);
    std::ostringstream quiet;
    const auto once = RenderReport(out, quiet);
    setenv("PATH", path.c_str(), 1);
    const std::string noted = Slurp(calls);
    CAPTURE(noted);
    CHECK(std::count(noted.begin(), noted.end(), '\n') == 1);
    CHECK(noted.find("queue.gp") != std::string::npos);
    CHECK(once.size() == plots.size());
    for (const auto& p : once)
    {
        CHECK(fs::exists(out / p));
    }
    // A gnuplot on PATH that fails whenever it is given the queue plot, and runs the real
    // one on the others: the queue plot is named, and the others are drawn each by its own.
    Write(bin / "gnuplot", "#!/bin/sh\nfor a in \"$@\"; do if [ \"$a\" = queue.gp ]; then echo "
                           "'no queue today' >&2; exit 1; fi; done\nexec " +
                               ShellQuote(real) + " \"$@\"\n");
    setenv("PATH", (bin.string() + ":" + path).c_str(), 1);
    std::ostringstream err;
    const auto made = RenderReport(out, err);
    setenv("PATH", path.c_str(), 1);
    CAPTURE(err.str());
    CHECK(err.str().find("gnuplot failed on plots/queue.gp: no queue today") != std::string::npos);
    CHECK(made.size() == plots.size() - 1);
    CHECK(!fs::exists(out / "plots" / "queue.png"));
    for (const auto& p : made)
    {
        CHECK(p != "plots/queue.png");
        CHECK(fs::exists(out / p));
    }
}

TEST_CASE("DCQCN rates named by flow; identical senders drawn as one line, labelled by all")
{
    const ScratchDir dir("plots-rates");
    Write(dir / "summary.json",
          R"({"scenario":"t","fabric":"roce","seed":1,"sim_time_s":0.001,
              "flow_stats":{"count":2,"completed":2,"failed":0,"pending":0},
              "flows":[{"id":0,"src":"h1","dst":"h0","op":"write","bytes":1000,"start_s":0,"state":"completed","fct_s":0.001},
                       {"id":1,"src":"h2","dst":"h0","op":"write","bytes":1000,"start_s":0,"state":"completed","fct_s":0.001},
                       {"id":2,"src":"h0","dst":"h3","op":"write","bytes":1000,"start_s":0.0005,"state":"completed","fct_s":0.0005}]})");
    // h1 qp 17 and h2 qp 17 send flows 0 and 1 alike; h0 qp 17, 18 receive them and
    // h0 qp 19 sends flow 2, whose rate never changes.
    Write(dir / "rate.csv",
          "time_ns,host,qpn,rate_bps\n0,1,17,100000000000\n0,2,17,100000000000\n"
          "0,0,17,100000000000\n0,0,18,100000000000\n"
          "100000,1,17,50000000000\n100000,2,17,50000000000\n500000,0,19,100000000000\n");
    std::ostringstream err;
    RenderReport(dir, err);
    const std::string gp = Slurp(dir / "plots" / "dcqcn-rate.gp");
    CHECK(gp.find("flow 0 h1→h0 and flow 1 h2→h0 (2 identical)") != std::string::npos);
    CHECK(gp.find("flow 2 h0→h3") != std::string::npos);
    CHECK(gp.find("qp") == std::string::npos); // every QP mapped to its flow; receivers left out
    CheckPlots(dir);
}

TEST_CASE("report: FCT slowdown percentiles by workload and size bucket, failed flows apart")
{
    nlohmann::json summary;
    auto flow = [](const char* workload, uint64_t bytes, const char* state, double slowdown) {
        nlohmann::json f = {{"workload", workload}, {"bytes", bytes}, {"state", state}};
        if (std::string(state) == "completed")
        {
            f["slowdown"] = slowdown;
        }
        return f;
    };
    summary["flows"] = nlohmann::json::array();
    for (int i = 1; i <= 100; ++i) // small background flows, slowdowns 1..100
    {
        summary["flows"].push_back(flow("background", 5000, "completed", i));
    }
    summary["flows"].push_back(flow("background", 5000, "failed", 0));
    summary["flows"].push_back(flow("incast", 2'000'000, "completed", 7));
    summary["flows"].push_back(flow("incast", 2'000'000, "completed", 9));
    const std::string t = FctTable(summary);
    // Percentile's interpolation between ranks, as the FCT plot's lines: 1..100 gives
    // p50 50.5, p95 95.05, p99 99.01; 7 and 9 give 8, 8.9, 8.98.
    CHECK(t.find("| background | <= 10 KB | 100 | 1 | 50.5 | 95 | 99 |") != std::string::npos);
    CHECK(t.find("| incast | 1-10 MB | 2 | 0 | 8 | 8.9 | 8.98 |") != std::string::npos);
    CHECK(t.find("background") < t.find("incast"));
    nlohmann::json none;
    none["flows"] = nlohmann::json::array({flow("bulk", 10, "failed", 0)});
    CHECK(FctTable(none).empty()); // nothing completed: no table
}

TEST_CASE("report: each fabric's own words and numbers")
{
    CHECK(FabricPhrase("infiniband") == "an InfiniBand fabric");
    CHECK(FabricPhrase("iwarp") == "an iWARP fabric");
    CHECK(FabricPhrase("roce") == "a RoCEv2 fabric");
    CHECK_FALSE(TotalMeansSomething("iwarp", "pfc_pause_frames"));
    CHECK_FALSE(TotalMeansSomething("iwarp", "cnps"));
    CHECK(TotalMeansSomething("iwarp", "tcp_retransmissions"));
    CHECK_FALSE(TotalMeansSomething("infiniband", "pfc_pause_frames"));
    CHECK(TotalMeansSomething("infiniband", "credit_stalls"));
    CHECK_FALSE(TotalMeansSomething("roce", "credit_stalls"));
    CHECK(TotalMeansSomething("roce", "pfc_pause_frames"));
}

TEST_CASE("report: what happened, in words, from the summary alone")
{
    // The main job's shape: two perftest clients and their servers, a collective launch
    // with one rank wrong, congestion on a RoCEv2 fabric, one expectation missed.
    const json summary = json::parse(R"({
      "scenario": "t", "fabric": "roce",
      "totals": {"ecn_marks": 4437, "pfc_pause_frames": 12, "cnps": 3373, "congestion_drops": 0,
                 "credit_stalls": 5, "drops": 6},
      "switch_drops": {"no_route": 6, "congestion": 0},
      "edge": {"dcqcn_cnps_acted_on": 3373, "dcqcn_lowest_rate_bps": 4000000, "pauses_sent": 0},
      "timing_faithful": false, "lag": {"max_ms": 6.21},
      "commands": [
        {"on": "h2", "run": "ib_write_bw -d rxe0 -p 1", "exit_code": 0, "metrics": {"bw_average_mb_sec": 2.16}},
        {"on": "h0", "run": "ib_write_bw -d rxe0 -p 1 10.0.0.3", "exit_code": 0, "metrics": {"bw_average_mb_sec": 2.16}},
        {"on": "h1", "run": "/usr/bin/ib_send_lat -d rxe0 10.0.0.3", "exit_code": 0, "metrics": {"t_typical_usec": 906.6}},
        {"on": "h0", "run": "export RANK=0 WORLD_SIZE=2 MASTER_ADDR=10.0.0.1; fabemu-allreduce --bytes 8MB", "exit_code": 0,
         "metrics": {"busbw_gbs": 0.0026, "time_s": 4.7, "size_bytes": 8388608, "correct": true}},
        {"on": "h1", "run": "export RANK=1 WORLD_SIZE=2 MASTER_ADDR=10.0.0.1; fabemu-allreduce --bytes 8MB", "exit_code": 1,
         "metrics": {"busbw_gbs": 0.0025, "time_s": 4.8, "size_bytes": 8388608, "correct": false}},
        {"on": "h2", "run": "ibv_devices", "started": false, "exit_code": -1}],
      "launch_predictions": [{"workload": 3, "measured_over_model": 1.414}],
      "expect": [{"metric": "totals.ecn_marks", "want": ">0", "value": 4437, "ok": true},
                 {"metric": "commands.1.metrics.bw_average_mb_sec", "want": "3..5", "value": 2.16, "ok": false}]
    })");
    const std::string md = WhatHappenedMd(summary, 48886);
    CAPTURE(md);
    CHECK(md.rfind("## What happened\n\n", 0) == 0);
    CHECK(md.find("6 commands on h0, h1 and h2; 1 FAILED: fabemu-allreduce on h1 (exit 1); 1 NOT "
                  "STARTED.") != std::string::npos);
    // Clients only (their command lines name the server), programs without directories.
    CHECK(md.find("ib_write_bw 2.16 MB/s on h0; ib_send_lat typical 906.6 us on h1; ") !=
          std::string::npos);
    CHECK(md.find("on h2") == std::string::npos);
    // The launch's ranks as one job: the slowest rank's time and busBw, the wrong rank counted.
    CHECK(md.find("fabemu-allreduce on h0 and h1 at 8.39 MB: 4.8 s and busBw 0.0025 GB/s "
                  "(slowest rank), WRONG on 1 of 2 ranks") != std::string::npos);
    CHECK(md.find("the deepest switch queue held 48.9 KB; switches marked CE on 4437 packets; "
                  "switches sent 12 PFC pause frames; 3373 CNPs were sent and DCQCN cut a "
                  "real sender to as low as 4 Mb/s; no packet was dropped for congestion; "
                  "other drops: 6 for no route.") != std::string::npos);
    CHECK(md.find("credits") == std::string::npos); // RoCEv2 has none
    CHECK(md.find("measured time over simulated time 1.41 (workload 3)") != std::string::npos);
    CHECK(md.find("fell up to 6.21 ms behind") != std::string::npos);
    CHECK(md.find("1 of 2 FAILED: `commands.1.metrics.bw_average_mb_sec` wanted 3..5, got 2.16") !=
          std::string::npos);

    // InfiniBand: credits, no PFC; nothing congested says so; all expectations held.
    const json ib = json::parse(R"({"fabric": "infiniband",
      "totals": {"pfc_pause_frames": 3, "credit_stalls": 0, "drops": 0},
      "flow_stats": {"count": 4, "completed": 3, "failed": 1, "pending": 0},
      "expect": [{"metric": "x", "want": 0, "value": 0, "ok": true}]})");
    const std::string quiet = WhatHappenedMd(ib, 0);
    CAPTURE(quiet);
    CHECK(quiet.find("- **Simulated flows:** 3 of 4 completed; 1 FAILED.") != std::string::npos);
    CHECK(quiet.find("- **Congestion:** no sign of it") != std::string::npos);
    CHECK(quiet.find("**Expectations:** all 1 held.") != std::string::npos);
    CHECK(quiet.find("Real software") == std::string::npos);
    CHECK(WhatHappenedMd(json::object(), 0).empty());
}

TEST_CASE("faults are marked on every plot over time, at their time, with what they were")
{
    const ScratchDir dir("plots-faults");
    Write(dir / "summary.json", R"({"scenario":"t","fabric":"roce","seed":1,"sim_time_s":0.0001,
        "faults":[{"at_s":0.00005,"link":"s0-s1","kind":"rate","value":"10Gbps","applied":true},
                  {"at_s":0.5,"host":"h1","kind":"crash","value":"vm","applied":true}]})");
    Write(dir / "queue.csv",
          "time_ns,node,port,prio,bytes\n10000,0,1,3,2048\n20000,0,1,3,4096\n90000,0,1,3,1024\n");
    // One fault inside the plot's 10..90 us, one after it (not drawn: outside the axis).
    Write(dir / "faults.csv",
          "time_s,link,kind,value\n0.000050000,s0-s1,rate,10Gbps\n0.5,h1,crash,vm\n");
    std::ostringstream err;
    RenderReport(dir, err);
    const std::string gp = Slurp(dir / "plots" / "queue.gp");
    CHECK(gp.find("set arrow from 0.05, graph 0 to 0.05, graph 1 nohead") != std::string::npos);
    CHECK(gp.find("\"s0-s1 rate 10Gbps\"") != std::string::npos);
    CHECK(gp.find("h1 crash vm") == std::string::npos);
    CHECK(Slurp(dir / "report.md").find("Dashed lines: the faults (faults.csv).") !=
          std::string::npos);
    CheckPlots(dir);
}
