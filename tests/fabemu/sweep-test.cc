// fabemu sweep: the plan (cross product, names, checks before anything runs), runs here
// with -j, sweep.csv and its plots, resuming, and an interrupted sweep.
#include "../fabemu-process.h"
#include "../run-in-process.h"
#include "../scenarios/plot-checks.h"
#include "../scratch-dir.h"
#include "emulator/fabemu/exit-codes.h"
#include "emulator/fabemu/sweep.h"

#include <doctest/doctest.h>
#include <sys/file.h>
#include <sys/stat.h>

#include <cstdlib>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

using namespace fabemu;
namespace fs = std::filesystem;

namespace
{

/// Eight senders into h0 through one switch: with 2MB each the port fills, PFC pauses
/// (or, without PFC, the switch drops).
fs::path
IncastScenario(const fs::path& dir)
{
    const fs::path file = dir / "incast.yaml";
    std::ofstream(file) << "name: sweep-incast\n"
                           "duration: 5ms\n"
                           "fabric: {type: roce, mtu: 1024, pfc: true, cc: none}\n"
                           "topology: {builder: star, hosts: 9, link: {rate: 100Gbps}}\n"
                           "workloads:\n"
                           "  - {type: incast, dst: h0, srcs: all, bytes: 256KB, start: 10us}\n";
    return file;
}

/// sweep.csv as rows of column -> text.
std::vector<std::map<std::string, std::string>>
ReadCsv(const fs::path& file)
{
    std::ifstream in(file);
    std::vector<std::string> header;
    std::vector<std::map<std::string, std::string>> rows;
    for (std::string line; std::getline(in, line);)
    {
        std::vector<std::string> cells;
        std::string cell;
        bool quoted = false;
        for (char c : line)
        {
            if (c == '"')
            {
                quoted = !quoted;
            }
            else if (c == ',' && !quoted)
            {
                cells.push_back(cell);
                cell.clear();
            }
            else
            {
                cell += c;
            }
        }
        cells.push_back(cell);
        if (header.empty())
        {
            header = cells;
            continue;
        }
        REQUIRE(cells.size() == header.size());
        std::map<std::string, std::string> row;
        for (size_t i = 0; i < cells.size(); ++i)
        {
            row[header[i]] = cells[i];
        }
        rows.push_back(row);
    }
    return rows;
}

double
Num(const std::map<std::string, std::string>& row, const std::string& col)
{
    REQUIRE_MESSAGE(!row.at(col).empty(), col);
    return std::stod(row.at(col));
}

size_t
Count(const std::string& text, const std::string& what)
{
    size_t n = 0;
    for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1))
    {
        ++n;
    }
    return n;
}

} // namespace

TEST_CASE("a grid is the cross product, last key fastest, each seed a run of its own")
{
    const SweepPlan plan = MakeSweepPlan(
        "x.yaml", {"fabric.mtu=1024"},
        {ParseGridAxis("fabric.cc=dcqcn,none"), ParseGridAxis("workloads.0.load=0.3,0.5,0.7")}, 2);
    REQUIRE(plan.runs.size() == 12);
    CHECK(plan.runs[0].name == "000-cc=dcqcn,load=0.3,seed=1");
    CHECK(plan.runs[1].name == "001-cc=dcqcn,load=0.3,seed=2");
    CHECK(plan.runs[2].name == "002-cc=dcqcn,load=0.5,seed=1");
    CHECK(plan.runs[11].name == "011-cc=none,load=0.7,seed=2");
    CHECK(plan.runs[11].Overrides(plan.set, plan.grid) ==
          std::vector<std::string>{"fabric.mtu=1024", "fabric.cc=none", "workloads.0.load=0.7",
                                   "seed=2"});
    CHECK(fs::path(plan.file).is_absolute());
    // The plan survives sweep.json as it was.
    CHECK(SweepPlan::FromJson(plan.Json()).SameAs(plan));
    CHECK_FALSE(MakeSweepPlan("x.yaml", {}, {ParseGridAxis("fabric.cc=dcqcn")}, 0).SameAs(plan));
    // A value that is not a folder name's is written safely.
    CHECK(MakeSweepPlan("x.yaml", {}, {ParseGridAxis("ns3::SwitchMmu::Kmin=1 0/2")}, 0)
              .runs[0]
              .name == "000-Kmin=1_0_2");
}

TEST_CASE("grid flags that are not KEY=V1,V2 are refused, naming the flag")
{
    for (const std::string bad :
         {"fabric.cc", "=a,b", "fabric.cc=", "fabric.cc=a,,b", "fabric.cc=a,", "fabric.cc=a,a"})
    {
        CAPTURE(bad);
        try
        {
            ParseGridAxis(bad);
            FAIL("accepted");
        }
        catch (const std::invalid_argument& e)
        {
            CHECK(std::string(e.what()).find("'" + bad + "'") != std::string::npos);
        }
    }
    CHECK_THROWS_AS(MakeSweepPlan("x.yaml", {},
                                  {ParseGridAxis("fabric.cc=a"), ParseGridAxis("fabric.cc=b")}, 0),
                    std::invalid_argument);
    CHECK_THROWS_AS(MakeSweepPlan("x.yaml", {}, {ParseGridAxis("seed=1,2")}, 3),
                    std::invalid_argument);
}

TEST_CASE("bad sweeps exit 2 before anything runs, with the culprit named")
{
    const ScratchDir dir("sweep-bad");
    const std::string file = IncastScenario(dir).string();
    const std::string out = (dir / "out").string();
    struct Case
    {
        std::vector<std::string> args;
        std::vector<std::string> said;
    };
    const std::vector<Case> cases{
        {{"--grid", "fabric.ccc=none,dcqcn"},
         {"fabric.ccc=none", "not in the file", "did you mean 'cc'?"}},
        // The value's combination, and where the key sits in the file.
        {{"--grid", "fabric.cc=none,hpcc"},
         {"combination 001-cc=hpcc", "incast.yaml:3:", "not 'hpcc'"}},
        {{"--grid", "topology.hosts=9,1"}, {"001-hosts=1", "incast.yaml:4:", "hosts must be"}},
        {{"--grid", "fabric.cc=none", "--plot", "drop"}, {"did you mean 'drops'?"}},
        {{"--grid", "fabric.cc=none", "--plot", "drops,fabric.pfc"},
         {"'fabric.pfc' is not a --grid key"}},
        {{"--grid", "fabric.cc=none", "--no-wait"}, {"--no-wait goes with --slurm"}},
        {{"--grid", "fabric.cc=none", "-j", "0"}, {"-j must be 1 or more"}},
        {{}, {"nothing to sweep"}},
        {{"--grid", "fabric.cc=none,dcqcn", "--set", "fabric.cc=none"},
         {"--set fabric.cc=none and --grid fabric.cc=none,dcqcn: one key, two sources"}},
        {{"--seeds", "2", "--set", "seed=4"}, {"--set seed=4 and --seeds both set the seed"}},
    };
    for (const auto& c : cases)
    {
        std::vector<std::string> args{"sweep", file, "--out", out};
        args.insert(args.end(), c.args.begin(), c.args.end());
        CAPTURE(c.args);
        const auto r = FabemuInProcess(args);
        CHECK(r.code == kExitBadInput);
        for (const auto& s : c.said)
        {
            CHECK_MESSAGE(r.err.find(s) != std::string::npos, r.err);
        }
        CHECK_FALSE(fs::exists(out)); // nothing ran, nothing was made
    }
    SUBCASE("--slurm where no sbatch is found")
    {
        const std::string path = std::getenv("PATH") ? std::getenv("PATH") : "";
        setenv("PATH", dir.c_str(), 1);
        const auto r =
            FabemuInProcess({"sweep", file, "--out", out, "--grid", "fabric.cc=none", "--slurm"});
        setenv("PATH", path.c_str(), 1);
        CHECK(r.code == kExitBadInput);
        CHECK(r.err.find("sbatch is not on PATH") != std::string::npos);
        CHECK_FALSE(fs::exists(out));
    }
    SUBCASE("a folder that holds something else, or another sweep")
    {
        fs::create_directories(out);
        std::ofstream(fs::path(out) / "notes.txt") << "mine\n";
        auto r = FabemuInProcess({"sweep", file, "--out", out, "--grid", "fabric.cc=none"});
        CHECK(r.code == kExitBadInput);
        CHECK(r.err.find("is not a sweep folder") != std::string::npos);
        fs::remove(fs::path(out) / "notes.txt");
        REQUIRE(
            FabemuInProcess({"sweep", file, "--out", out, "--grid", "fabric.cc=none", "--quiet"})
                .code == kExitOk);
        r = FabemuInProcess({"sweep", file, "--out", out, "--grid", "fabric.cc=dcqcn"});
        CHECK(r.code == kExitBadInput);
        CHECK(r.err.find("holds another sweep") != std::string::npos);
        // The same sweep while another process runs it: refused, not run twice.
        const std::string lockFile = (fs::path(out) / "sweep.lock").string();
        const pid_t holder = fork();
        if (holder == 0)
        {
            flock(open(lockFile.c_str(), O_RDWR), LOCK_EX); // a lock of its own
            pause();                                        // until killed
            _exit(0);
        }
        const int probe = open(lockFile.c_str(), O_RDWR);
        for (int i = 0; i < 200 && flock(probe, LOCK_EX | LOCK_NB) == 0; ++i)
        {
            flock(probe, LOCK_UN); // the holder has not taken it yet
            usleep(10000);
        }
        close(probe);
        r = FabemuInProcess({"sweep", file, "--out", out, "--grid", "fabric.cc=none"});
        kill(holder, SIGKILL);
        waitpid(holder, nullptr, 0);
        CHECK(r.code == kExitBadInput);
        CHECK(r.err.find("another fabemu sweep is running") != std::string::npos);
    }
}

TEST_CASE("a sweep runs every combination, sweep.csv holds their metrics, the plot shows them")
{
    const ScratchDir dir("sweep-run");
    const std::string file = IncastScenario(dir).string();
    const fs::path out = dir / "s";
    const auto r = FabemuInProcess({"sweep", file, "--grid", "fabric.pfc=true,false", "--grid",
                                    "workloads.0.bytes=256KB,2MB", "-j", "2", "--out", out.string(),
                                    "--plot", "drops,workloads.0.bytes,fabric.pfc"});
    REQUIRE_MESSAGE(r.code == kExitOk, std::string(r.out + r.err));
    CHECK(Count(r.out, "exit 0 in") == 4);
    const auto rows = ReadCsv(out / "sweep.csv");
    REQUIRE(rows.size() == 4);
    std::map<std::string, std::map<std::string, std::string>> by;
    for (const auto& row : rows)
    {
        CHECK(row.at("exit") == "0");
        CHECK(fs::exists(out / row.at("run") / "summary.json")); // a normal results folder
        by[row.at("fabric.pfc") + "," + row.at("workloads.0.bytes")] = row;
    }
    // Each run is its combination: 2MB fills the port; PFC pauses, without it drops.
    CHECK(Num(by["true,2MB"], "pfc_pause_frames") > 0);
    CHECK(Num(by["true,2MB"], "drops") == 0);
    CHECK(Num(by["false,2MB"], "drops") > 0);
    CHECK(Num(by["false,2MB"], "pfc_pause_frames") == 0);
    CHECK(Num(by["false,2MB"], "fct_slowdown_p99") > Num(by["true,2MB"], "fct_slowdown_p99"));
    CHECK(Num(by["true,256KB"], "flows_completed") == 8);
    CHECK(by["true,256KB"].at("busbw_gbs").empty()); // no collective: no value, not 0
    // The same metrics as a run on its own (sweep.csv is not a copy of another row).
    const auto alone =
        RunInProcess(file, dir / "alone", {"fabric.pfc=false", "workloads.0.bytes=2MB"});
    REQUIRE(alone.code == kExitOk);
    CHECK(Num(by["false,2MB"], "drops") == Summary(dir / "alone")["totals"]["drops"].get<double>());
    // The plot: drops against bytes, one line per pfc value, every point inside its axes.
    const fs::path gp = out / "plots" / "drops-vs-workloads.0.bytes.gp";
    REQUIRE(fs::exists(gp));
    const auto check = plotcheck::CheckLine(gp);
    REQUIRE(check["series"].size() == 2);
    CHECK(check["series"][0]["label"] == "fabric.pfc=true");
    CHECK(check["series"][1]["n"] == 2);
    CHECK(check["series"][1]["y"][1].get<double>() == Num(by["false,2MB"], "drops"));
    // Every plot with its data inside the axes and shown in report.md, which tables the runs.
    const auto findings = plotcheck::CheckFolder(out);
    CHECK(findings.plots.size() == 1);
    for (const auto& p : findings.problems)
    {
        FAIL_CHECK(p);
    }
    const std::string md = plotcheck::ReadAll(out / "report.md");
    CHECK(md.find("| 003-pfc=false,bytes=2MB | false | 2MB |") != std::string::npos);
    CHECK(md.find("busbw") == std::string::npos); // a column with nothing in it is left out
}

TEST_CASE("a sweep resumes: finished runs are not rerun, and -j does not change the results")
{
    const ScratchDir dir("sweep-resume");
    const std::string file = IncastScenario(dir).string();
    const fs::path out = dir / "s";
    const std::vector<std::string> args{"sweep",   file, "--grid", "fabric.cc=none,dcqcn",
                                        "--seeds", "2",  "--out",  out.string()};
    auto r = FabemuInProcess(args);
    REQUIRE_MESSAGE(r.code == kExitOk, std::string(r.out + r.err));
    const auto first = ReadCsv(out / "sweep.csv");
    REQUIRE(first.size() == 4);
    // As if the sweep had stopped after two runs; the two others run again, at once.
    for (const size_t i : {1, 2})
    {
        fs::remove_all(out / first[i].at("run"));
        fs::remove(out / (first[i].at("run") + ".done"));
    }
    const auto kept = fs::last_write_time(out / (first[0].at("run") + ".done"));
    auto again = args;
    again.insert(again.end(), {"-j", "2"});
    r = FabemuInProcess(again);
    REQUIRE(r.code == kExitOk);
    CHECK(r.out.find("resumed: 2 finished before") != std::string::npos);
    CHECK(Count(r.out, "exit 0 in") == 2);
    CHECK(r.out.find(first[1].at("run") + ": exit 0") != std::string::npos);
    CHECK(r.out.find(first[2].at("run") + ": exit 0") != std::string::npos);
    CHECK(fs::last_write_time(out / (first[0].at("run") + ".done")) == kept);
    const auto second = ReadCsv(out / "sweep.csv");
    REQUIRE(second.size() == 4);
    for (size_t i = 0; i < 4; ++i)
    {
        for (const auto& [col, v] : first[i])
        {
            if (col != "wall_time_s")
            {
                CHECK_MESSAGE(second[i].at(col) == v, col);
            }
        }
    }
    // The seeds are runs of their own: their drops or marks may differ, their rows do.
    CHECK(first[0].at("seed") == "1");
    CHECK(first[1].at("seed") == "2");
    // Without --plot: p99 FCT slowdown against the first key.
    CHECK(
        plotcheck::CheckLine(out / "plots" / "fct_slowdown_p99-vs-fabric.cc.gp")["series"].size() ==
        1);
    CHECK(plotcheck::CheckFolder(out).problems.empty());
    // --collect rewrites the table from the folder alone.
    fs::remove(out / "sweep.csv");
    r = FabemuInProcess({"sweep", "--collect", out.string()});
    CHECK(r.code == kExitOk);
    CHECK(ReadCsv(out / "sweep.csv").size() == 4);
    CHECK(FabemuInProcess({"sweep", "--collect", dir.string()}).code == kExitBadInput);
}

TEST_CASE("a run that misses the file's expectations makes the sweep exit 3, a failed one 1")
{
    const ScratchDir dir("sweep-exit");
    const fs::path file = IncastScenario(dir);
    std::ofstream(file, std::ios::app) << "expect:\n  totals.drops: 0\n";
    const fs::path out = dir / "s";
    const auto r = FabemuInProcess({"sweep", file.string(), "--grid", "fabric.pfc=true,false",
                                    "--grid", "workloads.0.bytes=2MB", "--out", out.string()});
    CHECK(r.code == kExitExpectation);
    CHECK(r.out.find("did not meet the file's expect") != std::string::npos);
    const auto rows = ReadCsv(out / "sweep.csv");
    REQUIRE(rows.size() == 2);
    CHECK(rows[0].at("exit") == "0");
    CHECK(rows[1].at("exit") == "3");
    // As a run that failed (exit 1: a flow failed, a VM died) leaves it: the sweep fails.
    std::ofstream(out / (rows[0].at("run") + ".done")) << R"({"exit": 1, "wall_time_s": 0.1})";
    const auto c = FabemuInProcess({"sweep", "--collect", out.string()});
    CHECK(c.code == kExitFailure);
    CHECK(c.out.find("1 run(s) failed (exit 1 or 2; their .log says why): " + rows[0].at("run")) !=
          std::string::npos);
    CHECK(ReadCsv(out / "sweep.csv")[0].at("exit") == "1");
}

TEST_CASE("an interrupted sweep stops its runs, leaves no half-written folder, and resumes")
{
#ifndef FABEMU_BINARY
    FABEMU_SKIP("built without the fabemu binary's path");
#else
    const ScratchDir dir("sweep-interrupt");
    const fs::path file = dir / "long.yaml";
    // Runs of a few seconds: a web-search load on a leaf-spine. The first, at 2 % load, ends
    // long before the next two, so the interrupt finds those running.
    std::ofstream(file) << "name: sweep-long\nduration: 30ms\n"
                           "fabric: {type: roce, mtu: 1024, pfc: true, cc: dcqcn}\n"
                           "topology: {builder: leaf-spine, leaves: 4, spines: 2, "
                           "hosts_per_leaf: 8, link: {rate: 25Gbps}, uplink: {rate: 50Gbps}}\n"
                           "workloads:\n  - {type: poisson, hosts: all, load: 0.3, cdf: "
                           "websearch, stop: 5ms}\n";
    const fs::path out = dir / "s";
    const std::vector<std::string> args{
        "sweep", file.string(), "--grid", "workloads.0.load=0.02,0.3,0.31",
        "-j",    "2",           "--out",  out.string()};
    int status = 0;
    {
        FabemuProcess p(args);
        REQUIRE(!p.ReadUntil("[1/3] 000-load=0.02: exit 0 in").empty()); // two still running
        const std::string rest = p.Interrupt(SIGINT, status);
        CHECK_MESSAGE(rest.find("interrupted; the same command resumes it") != std::string::npos,
                      rest);
        CHECK_MESSAGE(rest.find("stopped before it finished") != std::string::npos, rest);
    }
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == kExitFailure);
    size_t done = 0;
    std::string listing;
    for (const auto& e : fs::directory_iterator(out))
    {
        const std::string name = e.path().filename().string();
        CHECK_MESSAGE(name.find(".tmp-") == std::string::npos, name); // no half-written folder
        done += e.path().extension() == ".done";
        listing += name + " ";
    }
    CHECK_MESSAGE(done == 1, listing);
    FabemuProcess again(args);
    CHECK(!again.ReadUntil("3 of 3 runs finished").empty());
    int rc = 0;
    again.Interrupt(0, rc); // signal 0: only waits for the end
    CHECK(WEXITSTATUS(rc) == kExitOk);
#endif
}
