// Results you can trust: a flow ends completed, failed (with its reason) or pending;
// only a completed flow has an FCT; failed flows fail the run unless its expect block
// expects them; no sampled throughput is above the link rate.
#include "../run-in-process.h"
#include "../scratch-dir.h"
#include "emulator/fabemu/exit-codes.h"
#include "emulator/fabemu/run.h"
#include "scenarios/src/scenario.h"

#include "ns3/pcie-spec.h"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

using namespace fabemu;
namespace fs = std::filesystem;

namespace
{

const fs::path kScenarios = fs::path(FABEMU_SOURCE_DIR) / "scenarios";

using Outcome = RunOutcome;

Outcome
Run(const fs::path& file, const fs::path& out, std::vector<std::string> set = {})
{
    return RunInProcess(file, out, std::move(set));
}

size_t
Lines(const fs::path& p)
{
    std::ifstream in(p);
    size_t n = 0;
    for (std::string line; std::getline(in, line);)
    {
        n += !line.empty();
    }
    return n;
}

/// Every flow is listed once, by id, with a state; only completed ones carry an FCT;
/// the counts add up; bytes_delivered is every flow's in-order bytes.
void
CheckFlowAccounting(const nlohmann::json& s)
{
    const auto& stats = s["flow_stats"];
    const size_t count = stats["count"];
    REQUIRE(s["flows"].size() == count);
    CHECK(stats["completed"].get<size_t>() + stats["failed"].get<size_t>() +
              stats["pending"].get<size_t>() ==
          count);
    size_t completed = 0;
    size_t failed = 0;
    uint64_t delivered = 0;
    for (size_t i = 0; i < count; ++i)
    {
        const auto& f = s["flows"][i];
        CAPTURE(f.dump());
        CHECK(f["id"] == i);
        const std::string state = f["state"];
        const bool done = state == "completed";
        completed += done;
        failed += state == "failed";
        CHECK(f["ok"] == done);
        CHECK(f.contains("fct_s") == done);
        CHECK(f.contains("throughput_gbps") == done);
        CHECK(f.contains("slowdown") == done);
        CHECK(f.contains("reason") == (state == "failed"));
        CHECK(f["delivered_bytes"].get<uint64_t>() <= f["bytes"].get<uint64_t>());
        if (done)
        {
            CHECK(f["delivered_bytes"] == f["bytes"]);
        }
        delivered += f["delivered_bytes"].get<uint64_t>();
    }
    CHECK(stats["completed"] == completed);
    CHECK(stats["failed"] == failed);
    CHECK(s["totals"]["bytes_delivered"] == delivered);
}

/// Three writes over a 25 Gb/s dumbbell whose QPs give up at their first timeout:
/// each fails with "retry count exceeded" after delivering a little.
std::string
FailingScenario(const std::string& expect = "")
{
    return "name: qp-fail\n"
           "duration: 2ms\n"
           "fabric:\n"
           "  type: roce\n"
           "  set:\n"
           "    ns3::RdmaQueuePair::RetryCount: 0\n"
           "    ns3::RdmaQueuePair::Timeout: 10us\n"
           "topology:\n"
           "  builder: dumbbell\n"
           "  hosts: 6\n"
           "  link: {rate: 25Gbps, delay: 1us}\n"
           "  bottleneck: {rate: 25Gbps, delay: 1us}\n"
           "record: {rate_interval: 5us}\n"
           "workloads:\n"
           "  - {type: bulk, src: h0, dst: h3, bytes: 1MB}\n"
           "  - {type: bulk, src: h1, dst: h3, bytes: 1MB}\n"
           "  - {type: bulk, src: h2, dst: h4, bytes: 1MB}\n" +
           expect;
}

/// The highest rate throughput.csv reports, in Gb/s.
double
PeakSampledGbps(const fs::path& csv)
{
    std::ifstream in(csv);
    std::string line;
    std::getline(in, line); // header
    double peak = 0;
    while (std::getline(in, line))
    {
        const auto comma = line.rfind(',');
        peak = std::max(peak, std::stod(line.substr(comma + 1)));
    }
    return peak;
}

} // namespace

TEST_CASE(
    "a credit loop that delivers nothing: every flow failed or pending, no FCT, the counts add up")
{
    const ScratchDir dir("deadlock");
    const fs::path file = kScenarios / "ib-ring-updown.yaml";
    const auto r = Run(file, dir / "minhop", {"fabric.routing=minhop", "duration=5ms"});
    const auto s = Summary(dir / "minhop");
    CheckFlowAccounting(s);
    CHECK(s["flows"].size() == 5); // a pending flow is listed too
    CHECK(s["flow_stats"]["completed"] == 0);
    CHECK(Lines(dir / "minhop" / "fct.txt") == 0);
    CHECK(Lines(dir / "minhop" / "fct.csv") == 1); // the header alone
    CHECK(Slurp(dir / "minhop" / "report.md").find("0 completed") != std::string::npos);
    // The deadlock is named: the credit loop round the ring, each link's buffer waiting
    // for the next's, in the order of the wait.
    REQUIRE(s.contains("deadlock"));
    CHECK(s["deadlock"]["kind"] == "credit_loop");
    const auto cycle = s["deadlock"]["cycle"].get<std::vector<std::string>>();
    REQUIRE(cycle.size() == 5);
    const std::vector<std::string> ring{"s0->s1 vl0", "s1->s2 vl0", "s2->s3 vl0", "s3->s4 vl0",
                                        "s4->s0 vl0"};
    const auto first = std::find(ring.begin(), ring.end(), cycle[0]);
    REQUIRE(first != ring.end());
    for (size_t i = 0; i < 5; ++i)
    {
        CHECK(cycle[i] == ring[(static_cast<size_t>(first - ring.begin()) + i) % 5]);
    }
    // Seen while the run went on (checked every 100 us), and the run stopped once it had
    // lasted 2 ms with no byte received anywhere, long before its 5 ms.
    const double seen = s["deadlock"]["detected_at_s"];
    CHECK(seen <= 200e-6);
    CHECK(s["deadlock"]["stopped_at_s"].get<double>() == doctest::Approx(seen + 2e-3));
    CHECK(s["sim_time_s"].get<double>() == doctest::Approx(seen + 2e-3));
    CHECK(Slurp(dir / "minhop" / "report.md")
              .find("- **DEADLOCK:** a credit loop seen from 100 us (the run stopped at 2.1 "
                    "ms): s") != std::string::npos);
    // The terminal says so too (the in-process runs above are quiet).
    const auto loud = FabemuInProcess({"run", file.string(), "--set", "fabric.routing=minhop",
                                       "--set", "duration=5ms", "--out", (dir / "loud").string()});
    CHECK(loud.out.find("deadlock (credit_loop) from 0.100 ms; the run stopped at 2.100 ms") !=
          std::string::npos);
    // Up/down routing: no loop, no deadlock reported.
    const auto updown = Run(file, dir / "updown", {"duration=5ms"});
    CHECK(updown.code == kExitOk);
    CHECK_FALSE(Summary(dir / "updown").contains("deadlock"));
    // Failed QPs fail the run; flows only pending leave it to the expectations (completed: 5).
    const size_t failed = s["flow_stats"]["failed"];
    CHECK(r.code == (failed > 0 ? kExitFailure : kExitExpectation));
    CHECK(r.err.find(failed > 0 ? "failed: retry count exceeded on h" : "5 flows pending") !=
          std::string::npos);

    // An expect block with a word on flow_stats.failed decides the exit code itself.
    std::string yaml = Slurp(file);
    yaml = yaml.substr(0, yaml.find("expect:")) +
           "expect:\n  flow_stats.failed: \"0..5\"\n  flow_stats.completed: 0\n";
    std::ofstream(dir / "expected.yaml") << yaml;
    const auto expected =
        Run(dir / "expected.yaml", dir / "expected", {"fabric.routing=minhop", "duration=5ms"});
    CHECK(expected.code == kExitOk);
    CHECK(Lines(dir / "expected" / "fct.txt") == 0);
}

TEST_CASE("a PFC deadlock on a RoCEv2 ring is named; with room in the buffers there is none")
{
    // Every host writes to the host two switches along a 5-switch ring: shortest paths
    // all turn the same way, so each ring link's ingress buffer waits for the next
    // link. With an 8 KB static XOFF the pauses close the loop.
    const ScratchDir dir("pfc-deadlock");
    std::ofstream(dir / "ring.yaml")
        << "name: pfc-ring\nduration: 5ms\nfabric:\n  type: roce\n  mtu: 1024\n  pfc: true\n"
           "  cc: none\n  set: {ns3::SwitchMmu::StaticThreshold: true, "
           "ns3::SwitchMmu::StaticXoff: 8192}\n"
           "topology: {builder: ring, leaves: 5, hosts_per_leaf: 1, link: {rate: 100Gbps, "
           "delay: 100ns}, uplink: {rate: 100Gbps, delay: 100ns}}\nworkloads:\n"
           "  - {type: bulk, src: h0, dst: h2, bytes: 2MB}\n"
           "  - {type: bulk, src: h1, dst: h3, bytes: 2MB}\n"
           "  - {type: bulk, src: h2, dst: h4, bytes: 2MB}\n"
           "  - {type: bulk, src: h3, dst: h0, bytes: 2MB}\n"
           "  - {type: bulk, src: h4, dst: h1, bytes: 2MB}\n";
    Run(dir / "ring.yaml", dir / "static");
    const auto s = Summary(dir / "static");
    CHECK(s["flow_stats"]["completed"] == 0);
    CHECK(s["totals"]["congestion_drops"] == 0); // lossless, and stuck
    REQUIRE(s.contains("deadlock"));
    CHECK(s["deadlock"]["kind"] == "pfc_deadlock");
    auto cycle = s["deadlock"]["cycle"].get<std::vector<std::string>>();
    REQUIRE(cycle.size() == 5);
    std::sort(cycle.begin(), cycle.end());
    CHECK(cycle == std::vector<std::string>{"s0->s1 prio3", "s1->s2 prio3", "s2->s3 prio3",
                                            "s3->s4 prio3", "s4->s0 prio3"});
    CHECK(Slurp(dir / "static" / "report.md").find("- **DEADLOCK:** a PFC deadlock seen from") !=
          std::string::npos);
    CHECK(s["deadlock"].contains("stopped_at_s"));
    // With the PFC watchdog on, a PFC deadlock may yet clear: it is named, the run goes on.
    Run(dir / "ring.yaml", dir / "watchdog", {"ns3::RoceNetDevice::PfcWatchdogTime=10ms"});
    const auto w = Summary(dir / "watchdog");
    REQUIRE(w.contains("deadlock"));
    CHECK_FALSE(w["deadlock"].contains("stopped_at_s"));
    CHECK(w["sim_time_s"].get<double>() > 3e-3);
    // The dynamic threshold of the whole 12 MB buffer: no pause, every flow completes.
    Run(dir / "ring.yaml", dir / "dynamic", {"ns3::SwitchMmu::StaticThreshold=false"});
    const auto d = Summary(dir / "dynamic");
    CHECK(d["flow_stats"]["completed"] == 5);
    CHECK_FALSE(d.contains("deadlock"));
}

TEST_CASE("queue pairs that give up: failed with their reason, no FCT line, exit 1 unless expected")
{
    const ScratchDir dir("qp-fail");
    std::ofstream(dir / "fail.yaml") << FailingScenario();
    const auto r = Run(dir / "fail.yaml", dir / "out");
    CHECK(r.code == kExitFailure);
    const auto s = Summary(dir / "out");
    CheckFlowAccounting(s);
    CHECK(s["flow_stats"]["failed"] == 3);
    uint64_t delivered = 0;
    for (const auto& f : s["flows"])
    {
        CHECK(f["state"] == "failed");
        CHECK(f["reason"] == "retry count exceeded");
        delivered += f["delivered_bytes"].get<uint64_t>();
    }
    CHECK(delivered > 0);               // they got some bytes through first...
    CHECK(delivered < 3 * 1024 * 1024); // ...and not all: those are not counted as delivered
    CHECK(Lines(dir / "out" / "fct.txt") == 0);
    CHECK(Lines(dir / "out" / "fct.csv") == 1);
    CHECK(
        r.err.find("3 flows failed: retry count exceeded on h0\u2192h3, h1\u2192h3, h2\u2192h4") !=
        std::string::npos);

    // Failures the scenario sets out to cause: its expectation decides, met or not.
    std::ofstream(dir / "expected.yaml") << FailingScenario("expect:\n  flow_stats.failed: 3\n");
    CHECK(Run(dir / "expected.yaml", dir / "expected").code == kExitOk);
    std::ofstream(dir / "missed.yaml") << FailingScenario("expect:\n  flow_stats.failed: 0\n");
    CHECK(Run(dir / "missed.yaml", dir / "missed").code == kExitExpectation);
    // An expectation on something else does not excuse the failures.
    std::ofstream(dir / "other.yaml") << FailingScenario("expect:\n  totals.drops: 0\n");
    CHECK(Run(dir / "other.yaml", dir / "other").code == kExitFailure);
}

/// The node builder's links are PCIe: the fastest of the tree's, raw (before framing).
double
FastestPcieGbps(const PcieNodeYaml& p)
{
    double fastest = 0;
    const auto consider = [&](const PcieLinkYaml& l) {
        const auto g = static_cast<uint8_t>(l.generation ? l.generation : p.generation);
        const auto w = static_cast<uint8_t>(l.lanes ? l.lanes : p.lanes);
        fastest = std::max(fastest, ns3::PcieLinkBytesPerSecond(g, w) * 8 / 1e9);
    };
    consider({});
    for (const auto& l : p.switches)
    {
        consider(l);
    }
    for (const auto* devices : {&p.gpus, &p.nics})
    {
        for (const auto& d : *devices)
        {
            consider(d.link);
        }
    }
    return fastest;
}

TEST_CASE(
    "no sampled throughput above the host link rate: every shipped simulation and failing QPs")
{
    const ScratchDir dir("tput");
    std::vector<fs::path> files;
    for (const auto& e : fs::directory_iterator(kScenarios))
    {
        // VM scenarios (an endpoints: block) need root and QEMU; the shipped-scenario tests run
        // them.
        if (e.path().extension() == ".yaml" &&
            Slurp(e.path()).find("\nendpoints:") == std::string::npos)
        {
            files.push_back(e.path());
        }
    }
    REQUIRE(files.size() >= 8);
    std::ofstream(dir / "fail.yaml") << FailingScenario();
    files.push_back(dir / "fail.yaml");
    for (const auto& file : files)
    {
        CAPTURE(file);
        const fs::path out = dir / file.stem();
        const auto r = Run(file, out);
        REQUIRE(r.code != kExitBadInput);
        const Scenario s = LoadScenario((out / "scenario.resolved.yaml").string());
        double link = s.topology.builder == "node" ? FastestPcieGbps(s.topology.node.pcie)
                                                   : s.topology.link.bitsPerSecond / 1e9;
        if (s.topology.node.hasCxl)
        {
            // Memory flows: a CXL link's two directions (reads one way, writes the other),
            // or the CPU's own DRAM (eight DDR5-4800 channels, 2457.6 Gb/s).
            link = std::max(link, 2 * CxlLinkOf(s.topology.node.cxl).BytesPerSecond() * 8 / 1e9);
            for (const auto& w : s.workloads)
            {
                if (w.type == "memory" && w.dstDevice == "mem")
                {
                    link = std::max(link, 2457.6);
                }
            }
        }
        const double peak = PeakSampledGbps(out / "throughput.csv");
        MESSAGE(file.stem().string()
                << ": peak sample " << peak << " Gb/s on " << link << " Gb/s links");
        CHECK(peak <= link * 1.001);
        const bool flows = std::any_of(s.workloads.begin(), s.workloads.end(),
                                       [](const auto& w) { return w.type != "collective"; });
        // It sampled something; collectives' transfers are not flows (collective-steps.csv).
        CHECK(Lines(out / "throughput.csv") > (flows ? 1u : 0u));
    }
}
