// The plots fabemu draws show their data: every shipped simulation scenario rendered,
// each plot's axes checked against its series (from the "# fabemu-check:" line of its
// .gp); and the renderer on hand-made results folders (queue gaps, a deadlock, QP names).
#include "../run-in-process.h"
#include "../scratch-dir.h"
#include "emulator/fabemu/exit-codes.h"
#include "scenarios/src/results.h"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

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

bool
HaveGnuplot()
{
    return std::system("command -v gnuplot >/dev/null 2>&1") == 0;
}

/// The check line of plots/NAME.gp.
json
Check(const fs::path& gp)
{
    std::ifstream in(gp);
    for (std::string line; std::getline(in, line);)
    {
        const std::string tag = "# fabemu-check: ";
        if (line.rfind(tag, 0) == 0)
        {
            return json::parse(line.substr(tag.size()));
        }
    }
    return nullptr;
}

/// Every plot in \p dir: axes non-degenerate, every series has points and sits
/// inside its axes, off the borders (a linear axis starting at 0 may hold zeros).
/// Returns the names of the plots.
std::vector<std::string>
CheckPlots(const fs::path& dir)
{
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(dir / "plots"))
    {
        if (e.path().extension() != ".gp")
        {
            continue;
        }
        const std::string name = e.path().stem().string();
        names.push_back(name);
        CAPTURE(dir.string());
        CAPTURE(name);
        const json c = Check(e.path());
        REQUIRE(c.is_object());
        if (HaveGnuplot())
        {
            CHECK(fs::exists(dir / "plots" / (name + ".png")));
        }
        const double x0 = c["x"][0], x1 = c["x"][1], y0 = c["y"][0], y1 = c["y"][1];
        const bool logy = c["logy"];
        CHECK(x0 < x1);
        CHECK(y0 < y1);
        REQUIRE(!c["series"].empty());
        double dataMax = -INFINITY;
        size_t points = 0;
        for (const auto& s : c["series"])
        {
            CAPTURE(s.dump());
            const size_t n = s["n"];
            CHECK(n >= 1); // no empty series
            if (n == 0)
            {
                continue;
            }
            points += n;
            const double ymin = s["y"][0], ymax = s["y"][1];
            const double xmin = s["x"][0], xmax = s["x"][1];
            dataMax = std::max(dataMax, ymax);
            // Inside the x axis (a time axis may start where the data does).
            CHECK(xmin >= x0);
            CHECK(xmax <= x1);
            // Headroom above the largest value.
            if (logy)
            {
                CHECK(ymax * 1.2 < y1);
                CHECK(ymin > y0 * 1.2);
            }
            else
            {
                CHECK(ymax < y1 - 0.03 * (y1 - y0));
                // Off the bottom border, unless the axis starts at 0 and the value is 0.
                CHECK((ymin > y0 || (ymin == 0 && y0 == 0)));
            }
        }
        CHECK(points >= 2);
        if (!logy && y0 == 0)
        {
            CHECK(dataMax > 0); // not a plot of zeros
        }
    }
    return names;
}

void
CheckReport(const fs::path& dir)
{
    const std::string md = Slurp(dir / "report.md");
    CAPTURE(dir.string());
    // Numbers for people: no 0.9999832904171833, no 0.00147037 s.
    std::smatch m;
    const bool longFloat = std::regex_search(md, m, std::regex(R"(\d\.\d{7,})"));
    CHECK_MESSAGE(!longFloat, (longFloat ? m.str() : std::string()));
    // Every plot it shows exists; every plot drawn is shown.
    for (const auto& e : fs::directory_iterator(dir / "plots"))
    {
        if (e.path().extension() == ".png")
        {
            CHECK(md.find("(plots/" + e.path().filename().string() + ")") != std::string::npos);
        }
    }
    std::regex img(R"(\]\((plots/[^)]+)\))");
    for (auto it = std::sregex_iterator(md.begin(), md.end(), img); it != std::sregex_iterator();
         ++it)
    {
        CHECK(fs::exists(dir / (*it)[1].str()));
    }
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
        const auto plots = CheckPlots(out);
        CHECK(!plots.empty());
        CheckReport(out);
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
    CHECK(t.find("| background | <= 10 KB | 100 | 1 | 50 | 95 | 99 |") != std::string::npos);
    CHECK(t.find("| incast | 1-10 MB | 2 | 0 | 7 | 9 | 9 |") != std::string::npos);
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
