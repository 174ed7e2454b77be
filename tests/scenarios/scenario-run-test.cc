// fabemu run on simulation-only scenarios: reproducible results, overrides that
// reach the model, bad input that leaves nothing behind.
#include "../run-in-process.h"
#include "../scratch-dir.h"
#include "../shell.h"
#include "emulator/fabemu/exit-codes.h"
#include "emulator/fabemu/run.h"
#include "scenarios/src/results.h"
#include "scenarios/src/scenario.h"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <filesystem>
#include <fstream>
#include <sstream>

using namespace fabemu;
namespace fs = std::filesystem;

namespace
{

const fs::path kScenarios = FABEMU_SCENARIO_DIR;

using Outcome = RunOutcome;

Outcome
Run(const fs::path& file, const fs::path& out, std::vector<std::string> set = {})
{
    return RunInProcess(file, out, std::move(set));
}

} // namespace

TEST_CASE("same file and seed twice: identical summary and CSVs; another seed differs")
{
    const ScratchDir dir("repro");
    const fs::path file = kScenarios / "leaf-spine-websearch.yaml";
    REQUIRE(Run(file, dir / "a").code == kExitOk);
    REQUIRE(Run(file, dir / "b").code == kExitOk);
    auto a = Summary(dir / "a");
    auto b = Summary(dir / "b");
    a.erase("wall_time_s");
    b.erase("wall_time_s");
    CHECK(a.dump() == b.dump());
    for (const char* csv : {"fct.csv", "fct.txt", "pfc.csv", "queue.csv", "throughput.csv",
                            "rate.csv", "scenario.resolved.yaml"})
    {
        CAPTURE(csv);
        CHECK(fs::file_size(dir / "a" / csv) > 0);
        CHECK(Slurp(dir / "a" / csv) == Slurp(dir / "b" / csv));
    }
    REQUIRE(Run(file, dir / "c", {"seed=2"}).code == kExitOk);
    CHECK(Slurp(dir / "a" / "fct.csv") != Slurp(dir / "c" / "fct.csv"));
}

TEST_CASE("--set overrides reach the model: a higher Kmax marks fewer frames")
{
    // Without DCQCN the queues do not react to marks, so marking is the only difference.
    const ScratchDir dir("kmax");
    const fs::path file = kScenarios / "roce-incast-pfc.yaml";
    REQUIRE(Run(file, dir / "base").code == kExitOk);
    // By scenario key and by ns-3 attribute name: both reach SwitchMmu::Kmin.
    // Marked at dequeue, a frame sees the queue it leaves; PFC holds that queue in the
    // megabytes, far above the default Kmax of 200 KB, so nearly every frame is marked.
    const auto byKey = Run(file, dir / "key", {"fabric.ecn.kmax=8MB"});
    const auto byAttr = Run(file, dir / "attr", {"ns3::SwitchMmu::Kmax=8388608"});
    CHECK(byKey.code != kExitBadInput);
    CHECK(byAttr.code != kExitBadInput);
    const uint64_t base = Summary(dir / "base")["totals"]["ecn_marks"];
    const uint64_t key = Summary(dir / "key")["totals"]["ecn_marks"];
    const uint64_t attr = Summary(dir / "attr")["totals"]["ecn_marks"];
    CHECK(base > 0);
    CHECK(key < base / 10);
    CHECK(attr == key); // the same value by either route gives the same run
    const std::string resolved = Slurp(dir / "key" / "scenario.resolved.yaml");
    CHECK(resolved.find("kmax: 8388608") != std::string::npos);
}

namespace
{

/// fct.txt rows as (bytes, start_ns, fct_ns, ideal_ns), in file order.
std::vector<std::array<uint64_t, 4>>
FctRows(const fs::path& file)
{
    std::ifstream in(file);
    std::vector<std::array<uint64_t, 4>> rows;
    std::string sip, dip;
    uint64_t sport = 0, dport = 0, bytes = 0, start = 0, fct = 0, ideal = 0;
    while (in >> sip >> dip >> sport >> dport >> bytes >> start >> fct >> ideal)
    {
        rows.push_back({bytes, start, fct, ideal});
    }
    return rows;
}

} // namespace

TEST_CASE(
    "one web-search scenario on RoCEv2 and on iWARP by changing only fabric.type; the FCTs compare")
{
    const ScratchDir dir("iwarp-vs-roce");
    const fs::path file = kScenarios / "iwarp-vs-roce.yaml";
    REQUIRE(Run(file, dir / "roce").code == kExitOk);
    REQUIRE(Run(file, dir / "iwarp", {"fabric.type=iwarp"}).code == kExitOk);
    auto roce = FctRows(dir / "roce" / "fct.txt");
    auto iwarp = FctRows(dir / "iwarp" / "fct.txt");
    REQUIRE(roce.size() >= 30);
    REQUIRE(iwarp.size() == roce.size());
    auto byStart = [](auto& v) {
        std::sort(v.begin(), v.end(), [](auto& a, auto& b) { return a[1] < b[1]; });
    };
    byStart(roce);
    byStart(iwarp);
    std::vector<double> sr;
    std::vector<double> si;
    for (size_t i = 0; i < roce.size(); ++i)
    {
        CHECK(iwarp[i][0] == roce[i][0]); // the same flows: sizes and start times
        CHECK(iwarp[i][1] == roce[i][1]);
        CHECK(iwarp[i][2] >= iwarp[i][3] * 99 / 100); // nothing beats its ideal FCT
        sr.push_back(double(roce[i][2]) / roce[i][3]);
        si.push_back(double(iwarp[i][2]) / iwarp[i][3]);
    }
    std::sort(sr.begin(), sr.end());
    std::sort(si.begin(), si.end());
    MESSAGE("median slowdown RoCEv2 " << sr[sr.size() / 2] << ", iWARP " << si[si.size() / 2]);
    // Both near their ideal at 30% load; TCP's slow start and DCTCP's queue keep iWARP's a bit
    // above.
    CHECK(si[si.size() / 2] < 3.0);
    CHECK(sr[sr.size() / 2] < 3.0);
    const auto s = Summary(dir / "iwarp");
    CHECK(s["totals"]["pfc_pause_frames"] == 0);
    CHECK(s["totals"]["ecn_marks"] > 0);
    CHECK(s["totals"]["ecn_echoes"] > 0);
    CHECK(fs::file_size(dir / "iwarp" / "queue.csv") > 40); // switch queue depths, as on RoCE
    CHECK(Slurp(dir / "iwarp" / "scenario.resolved.yaml").find("type: iwarp") != std::string::npos);
    // The resolved file loads back to the same run.
    REQUIRE(Run(dir / "iwarp" / "scenario.resolved.yaml", dir / "again").code == kExitOk);
    CHECK(Slurp(dir / "again" / "fct.txt") == Slurp(dir / "iwarp" / "fct.txt"));
}

TEST_CASE("bad input: exit 2, the culprit named, no results folder")
{
    const ScratchDir dir("bad");
    const fs::path file = dir / "bad.yaml";
    std::ofstream(file) << "name: bad\nfabric:\n  set:\n    ns3::SwitchMmu::Kmim: 10\n";
    auto r = Run(file, dir / "out");
    CHECK(r.code == kExitBadInput);
    CHECK(r.err.find(file.string() + ":4:5: fabric.set: ns3::SwitchMmu has no attribute 'Kmim'; "
                                     "did you mean 'Kmin'?") != std::string::npos);
    std::ofstream(file) << "name: bad\nfabric:\n  set:\n    ns3::SwitchMmu::Kmin: ten\n";
    r = Run(file, dir / "out");
    CHECK(r.code == kExitBadInput);
    CHECK(r.err.find(":4:5: fabric.set: 'ten' is not a valid value") != std::string::npos);
    // A fabric that cannot be built as asked: the model's limit, in words.
    r = Run(kScenarios / "roce-incast-pfc.yaml", dir / "out", {"fabric.buffer=64KB"});
    CHECK(r.code == kExitBadInput);
    CHECK(r.err.find("cannot hold reserve") != std::string::npos);
    r = Run(dir / "missing.yaml", dir / "out");
    CHECK(r.code == kExitBadInput);
    CHECK(r.err.find("cannot read") != std::string::npos);
    // Nothing left: no results folder and no temporary one.
    size_t entries = 0;
    for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir))
    {
        ++entries;
    }
    CHECK(entries == 1); // bad.yaml alone
}

TEST_CASE("an expectation not met exits 3 and the results are still written")
{
    const ScratchDir dir("expect");
    const auto r = Run(kScenarios / "roce-incast-pfc.yaml", dir / "out", {"fabric.pfc=false"});
    CHECK(r.code == kExitExpectation); // PFC off: pause frames 0, drops > 0
    const auto s = Summary(dir / "out");
    bool anyFailed = false;
    for (const auto& e : s["expect"])
    {
        anyFailed = anyFailed || !e["ok"].get<bool>();
    }
    CHECK(anyFailed);
    CHECK(fs::exists(dir / "out" / "report.md"));
}

TEST_CASE(
    "plots: PNGs in the results folder; DCQCN rates on a log scale, in units that suit the link")
{
    // Plots are part of the product: scripts/install-deps installs gnuplot.
    REQUIRE_MESSAGE(std::system("command -v gnuplot >/dev/null 2>&1") == 0,
                    "gnuplot is not installed (scripts/install-deps installs it)");
    const ScratchDir dir("plots");
    REQUIRE(Run(kScenarios / "roce-dcqcn-fairness.yaml", dir).code == kExitOk);
    for (const char* plot : {"queue", "throughput", "dcqcn-rate"})
    {
        CAPTURE(plot);
        CHECK(Slurp(dir / "plots" / (std::string(plot) + ".png")).substr(0, 8) ==
              "\x89PNG\r\n\x1a\n");
    }
    // 100 Gb/s hosts: Gb/s; a flow starts at line rate and DCQCN cuts it tenfold and more.
    std::string script = Slurp(dir / "plots" / "dcqcn-rate.gp");
    CHECK(script.find("set logscale y") != std::string::npos);
    CHECK(script.find("Gb/s") != std::string::npos);
    // An emulator's edge flows on a 1 Gb/s link: Mb/s.
    {
        std::ofstream csv(dir / "rate.csv");
        csv << "time_ns,host,qpn,rate_bps,peer\n1000,2,17,1000000000,0\n2000,2,17,20000000,0\n"
            << "1000,2,17,1000000000,1\n";
    }
    std::ostringstream err;
    RenderReport(dir, err);
    script = Slurp(dir / "plots" / "dcqcn-rate.gp");
    CHECK(script.find("Mb/s") != std::string::npos);
    CHECK(script.find("Gb/s") == std::string::npos);
    // Two flows from h2 to QP 17 on two hosts (rxe numbers QPs alike on every VM): two series.
    CHECK(script.find("h2 to h0 qp 17") != std::string::npos);
    CHECK(script.find("h2 to h1 qp 17") != std::string::npos);
}

TEST_CASE("InfiniBand pcaps: the run says how to decode them, and that command does")
{
    const ScratchDir dir("ib-pcap-note");
    const fs::path file = kScenarios / "ib-vl-arbitration.yaml"; // records h0.pcap
    RunOptions opt;
    opt.file = file.string();
    opt.out = (dir / "out").string();
    opt.progress = ProgressMode::Lines; // as in a CI log
    std::ostringstream out;
    std::ostringstream err;
    REQUIRE(RunScenarioFile(opt, out, err) == kExitOk);
    CHECK(out.str().find("decode them with: tshark -o") < out.str().find("simulated"));
    std::ifstream in(dir / "out" / "summary.json");
    const auto s = nlohmann::json::parse(in);
    REQUIRE(s.contains("pcap_note"));
    const std::string note = s["pcap_note"];
    std::ifstream md(dir / "out" / "report.md");
    const std::string report((std::istreambuf_iterator<char>(md)), {});
    CHECK(report.find(note) != std::string::npos);
    // A RoCEv2 run's pcaps need no note.
    opt.file = (kScenarios / "roce-incast-pfc.yaml").string();
    opt.out = (dir / "roce").string();
    std::ostringstream roce;
    REQUIRE(RunScenarioFile(opt, roce, err) == kExitOk);
    CHECK(roce.str().find("decode them with") == std::string::npos);
    if (!HaveTool("tshark"))
    {
        MESSAGE("tshark is not installed: the note's command is not run");
        return;
    }
    // The note's own command, run in the results folder, decodes InfiniBand packets.
    const std::string cmd = note.substr(note.find("tshark -o"));
    const std::string decoded =
        RunCommand("cd " + (dir / "out").string() + " && " + cmd + " -c 5 2>/dev/null");
    CHECK(decoded.find("InfiniBand") != std::string::npos);
    CHECK(decoded.find("RC RDMA Write") != std::string::npos);
}

TEST_CASE("a malformed file the scenario names: exit 2, both files and lines named, no abort")
{
    const ScratchDir dir("bad-cdf");
    const fs::path file = dir / "s.yaml";
    std::ofstream(file) << "name: s\ntopology: {builder: star, hosts: 4}\nduration: 1ms\n"
                           "workloads:\n  - {type: poisson, load: 0.3, cdf: flows.cdf}\n";
    const std::vector<std::pair<std::string, std::string>> cases{
        {"100 0\n200 abc\n", "flows.cdf:2: want 'size_bytes cumulative_percent'"},
        {"100 0.5\n50 0.2\n", "flows.cdf:2: sizes and percents must not decrease"},
        {"100 0\n200 150\n", "flows.cdf:2: size must be 0..1e15 bytes and percent in 0..100"},
        {"", "a CDF needs at least two points and must end at 100"},
        {"0 0\nabc 50\n100000 100\n", "flows.cdf:2: want 'size_bytes cumulative_percent'"},
        {"0 0 7\n100 100\n", "flows.cdf:1: want 'size_bytes cumulative_percent'"},
        {std::string("\x00\x01\xff\n", 4), "flows.cdf:1: want 'size_bytes cumulative_percent'"},
        {"0 0\nnan 100\n", "flows.cdf:2: want 'size_bytes cumulative_percent'"},
    };
    for (const auto& [cdf, want] : cases)
    {
        CAPTURE(cdf);
        std::ofstream(dir / "flows.cdf") << cdf;
        const auto r = Run(file, dir / "out"); // in process: an abort would end the test run
        CHECK(r.code == kExitBadInput);
        CHECK(r.err.find(file.string() + ":5:") == 0);
        CHECK(r.err.find("workloads.0.cdf: ") != std::string::npos);
        CHECK(r.err.find(want) != std::string::npos);
        CHECK_FALSE(fs::exists(dir / "out"));
    }
    // A folder where the file should be.
    fs::remove(dir / "flows.cdf");
    fs::create_directory(dir / "flows.cdf");
    const auto r = Run(file, dir / "out");
    CHECK(r.code == kExitBadInput);
    CHECK(r.err.find("flows.cdf: is a folder, not a flow-size CDF file") != std::string::npos);
}

TEST_CASE("lossless stays lossless: every shipped PFC or InfiniBand simulation drops nothing for "
          "lack of buffer")
{
    const ScratchDir dir("lossless");
    size_t swept = 0;
    for (const auto& e : fs::directory_iterator(kScenarios))
    {
        if (e.path().extension() != ".yaml")
        {
            continue;
        }
        const Scenario s = LoadScenario(e.path().string());
        const bool lossless =
            (s.fabric.type == "roce" && s.fabric.pfc) || s.fabric.type == "infiniband";
        if (s.HasVms() || !lossless)
        {
            continue; // VM scenarios are e2e; a lossy fabric may drop
        }
        CAPTURE(e.path().filename().string());
        const auto r = Run(e.path(), dir / e.path().stem());
        CHECK(r.code == kExitOk);
        std::ifstream in(dir / e.path().stem() / "summary.json");
        const auto summary = nlohmann::json::parse(in);
        CHECK(summary["totals"]["congestion_drops"] == 0);
        for (const char* reason : {"buffer_full", "headroom_overflow"})
        {
            CHECK_FALSE(summary["switch_drops"].contains(reason));
        }
        ++swept;
    }
    // Today: roce-incast-pfc, roce-dcqcn-fairness, leaf-spine-websearch, iwarp-vs-roce (as
    // RoCEv2) and the five InfiniBand scenarios.
    CHECK(swept >= 9);
}
