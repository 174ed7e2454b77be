// fabemu run with CXL memory: memory workloads as flows, memory.csv and summary.json's
// memory against the model's arithmetic, the loaded-latency plot, pooling through a switch,
// and bad input refused at its place.
#include "../run-in-process.h"
#include "../scratch-dir.h"
#include "emulator/fabemu/exit-codes.h"
#include "scenarios/src/results.h"
#include "scenarios/src/scenario.h"

#include "ns3/cxl-spec.h"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <string>

using namespace fabemu;
namespace fs = std::filesystem;

namespace
{

const fs::path kScenarios = FABEMU_SCENARIO_DIR;

/// A server with one CXL 2.0 x16 expander and \p workloads (YAML list items).
fs::path
WriteServer(const fs::path& dir, const std::string& workloads, const std::string& cxl = "")
{
    const fs::path file = dir / "cxl.yaml";
    std::ofstream(file) << "name: cxl\nduration: 1ms\ntopology:\n  builder: node\n  node:\n"
                        << "    cxl: {version: \"2.0\", expanders: 1" << cxl << "}\n"
                        << "workloads:\n"
                        << workloads;
    return file;
}

} // namespace

TEST_CASE("memory workloads: idle latency to local DRAM and an expander, the link's limit")
{
    const ScratchDir dir("cxl-run");
    const fs::path out = dir / "out";
    const RunOutcome r = RunInProcess(
        WriteServer(dir, "  - {type: memory, on: h0.cpu, target: h0.mem, outstanding: 1, "
                         "duration: 5us}\n"
                         "  - {type: memory, on: h0.cpu, target: h0.cxl0, outstanding: 1, "
                         "duration: 5us, start: 10us}\n"
                         "  - {type: memory, on: h0.cpu, target: h0.cxl0, outstanding: 512, "
                         "bytes: 4MB, start: 20us}\n"),
        out);
    REQUIRE_MESSAGE(r.code == kExitOk, r.err);
    const auto s = Summary(out);
    REQUIRE(s["memory"].size() == 3);
    const auto& local = s["memory"][0];
    const auto& idle = s["memory"][1];
    const auto& flat = s["memory"][2];
    // A lone read costs its path's parts; the expander is about 2.2x local DRAM.
    CHECK(local["target"] == "h0.mem");
    CHECK(local["p50_ns"].get<double>() == doctest::Approx(local["idle_ns"].get<double>()));
    CHECK(idle["p50_ns"].get<double>() == doctest::Approx(idle["idle_ns"].get<double>()));
    CHECK(idle["p50_ns"].get<double>() / local["p50_ns"].get<double>() ==
          doctest::Approx(2.18).epsilon(0.05));
    // Flat out, the flit arithmetic: 64/68 of 128b/130b 32 GT/s x16, less a header slot in
    // every thirteen.
    const ns3::CxlLinkSpec spec{"2.0", 32, 16, ns3::CxlFlitMode::Flit68};
    CHECK(
        flat["gbs"].get<double>() ==
        doctest::Approx(spec.LineBytesPerSecond(ns3::CxlMessageType::S2mDrs) / 1e9).epsilon(0.02));
    CHECK(flat["requests"] == 4 * 1024 * 1024 / 64);
    // The flows: the CPU to its memory, every byte there.
    REQUIRE(s["flows"].size() == 3);
    CHECK(s["flows"][2]["src"] == "h0.cpu");
    CHECK(s["flows"][2]["dst"] == "h0.cxl0");
    CHECK(s["flows"][2]["state"] == "completed");
    CHECK(s["flows"][2]["bytes"] == 4 * 1024 * 1024);
    // memory.csv carries the same rows; report.md its table; the plot is drawn.
    const auto rows = ReadCsv(out / "memory.csv");
    REQUIRE(rows.size() == 3);
    CHECK(rows[2][2] == "h0.cxl0");
    CHECK(std::stod(rows[2][8]) == doctest::Approx(flat["gbs"].get<double>()).epsilon(1e-4));
    std::ifstream report(out / "report.md");
    const std::string md((std::istreambuf_iterator<char>(report)), {});
    CHECK(md.find("## Memory") != std::string::npos);
    CHECK(fs::exists(out / "plots" / "loaded-latency.gp"));
}

TEST_CASE("a CXL 3.1 pool under two levels of switches: a lone read costs one more link and switch")
{
    const ScratchDir dir("cxl-switches");
    const auto run = [&dir](const std::string& name, const std::string& switches) {
        const fs::path file = dir / (name + ".yaml");
        std::ofstream(file)
            << "name: " << name
            << "\nduration: 1ms\ntopology:\n  builder: star\n  hosts: 4\n  node:\n"
               "    cxl: {version: \"3.1\", expanders: 0, pool: {hosts: all, dram_rate: 2000Gbps"
            << switches
            << "}}\nworkloads:\n"
               "  - {type: memory, on: h3.cpu, target: h3.pool, outstanding: 1, duration: 5us}\n"
               "  - {type: memory, on: h0.cpu, target: h0.pool, outstanding: 2048, bytes: 4MB, "
               "start: 10us}\n";
        const RunOutcome r = RunInProcess(file, dir / name);
        REQUIRE_MESSAGE(r.code == kExitOk, r.err);
        return Summary(dir / name);
    };
    const auto one = run("one", "");
    const auto two = run("two", ", switches: [[h0, h1], [h2, h3]]");
    const auto& lone = two["memory"][0];
    CHECK(lone["p50_ns"].get<double>() == doctest::Approx(lone["idle_ns"].get<double>()));
    // The leaf's link both ways (2 x 25 ns, and a request flit and a response flit of 2 ns:
    // a line's header and data take 5 of a 256-byte flit's 15 slots), and the leaf switch
    // both ways (2 x 50 ns).
    const ns3::CxlLinkSpec spec{"3.1", 64, 16, ns3::CxlFlitMode::Flit256};
    const double more = 2 * 25 + 2 * spec.FlitSeconds() * 1e9 + 2 * 50;
    const double added = lone["p50_ns"].get<double>() - one["memory"][0]["p50_ns"].get<double>();
    MESSAGE("a lone read to the pool: " << one["memory"][0]["p50_ns"].get<double>()
                                        << " ns on one "
                                           "switch, "
                                        << lone["p50_ns"].get<double>() << " ns under two");
    CHECK(added == doctest::Approx(more).epsilon(0.01));
    // Flat out, 256-byte flits' arithmetic through both switches.
    CHECK(
        two["memory"][1]["gbs"].get<double>() ==
        doctest::Approx(spec.LineBytesPerSecond(ns3::CxlMessageType::S2mDrs) / 1e9).epsilon(0.03));
    CHECK(two["memory"][1]["requests"] == 4 * 1024 * 1024 / 64);
}

TEST_CASE("a GPU on an expander's root port: its DMA and the expander's reads slow each other")
{
    const ScratchDir dir("cxl-shared-port");
    const fs::path file = dir / "shared.yaml";
    std::ofstream(file)
        << "name: shared\nduration: 1ms\ntopology:\n  builder: node\n  node:\n"
           "    pcie: gpudirect\n"
           "    cxl: {version: \"2.0\", expanders: [{shares: gpu0, dram_rate: 2000Gbps}]}\n"
           "workloads:\n"
           "  - {type: memory, on: h0.cpu, target: h0.cxl0, outstanding: 1024, bytes: 4MB}\n"
           "  - {type: dma, src: h0.gpu0, dst: h0.mem, bytes: 4MB, start: 200us}\n"
           "  - {type: memory, on: h0.cpu, target: h0.cxl0, outstanding: 1024, bytes: 4MB, "
           "start: 400us}\n"
           "  - {type: dma, src: h0.gpu0, dst: h0.mem, bytes: 4MB, start: 400us}\n"
           "  - {type: memory, on: h0.cpu, target: h0.cxl0, outstanding: 1, duration: 5us, "
           "start: 700us}\n";
    const RunOutcome r = RunInProcess(file, dir / "out");
    REQUIRE_MESSAGE(r.code == kExitOk, r.err);
    const auto s = Summary(dir / "out");
    const auto gbs = [&s](size_t flow) {
        return s["flows"][flow]["bytes"].get<double>() / s["flows"][flow]["fct_s"].get<double>() /
               1e9;
    };
    for (size_t f = 0; f < 5; ++f)
    {
        CHECK(s["flows"][f]["state"] == "completed");
    }
    CHECK(s["flows"][1]["src"] == "h0.gpu0");
    // Alone, each at its arithmetic: reads 64/68 x 12/13 of the x16 link; 256-byte TLPs
    // 64/68 x 256/288 (docs/cxl.md).
    const ns3::CxlLinkSpec spec{"2.0", 32, 16, ns3::CxlFlitMode::Flit68};
    const double reads = spec.LineBytesPerSecond(ns3::CxlMessageType::S2mDrs) / 1e9;
    const double dma = spec.BytesPerSecond() * 64 / 68 * 256 / 288 / 1e9;
    MESSAGE("one root port: reads " << gbs(0) << " GB/s and DMA " << gbs(1) << " alone; " << gbs(2)
                                    << " and " << gbs(3) << " together");
    CHECK(gbs(0) == doctest::Approx(reads).epsilon(0.02));
    CHECK(gbs(1) == doctest::Approx(dma).epsilon(0.02));
    // Together the ARB/MUX gives each every other flit: about half each.
    CHECK(gbs(2) == doctest::Approx(reads / 2).epsilon(0.05));
    CHECK(gbs(3) == doctest::Approx(dma / 2).epsilon(0.05));
    // The memory rows are the memory workloads' only; a lone read crosses the switch.
    REQUIRE(s["memory"].size() == 3);
    const auto& idle = s["memory"][2];
    CHECK(idle["p50_ns"].get<double>() == doctest::Approx(idle["idle_ns"].get<double>()));
    CHECK(idle["p50_ns"].get<double>() > 219.1 + 2 * 50); // the direct link's parts, a switch
}

TEST_CASE("the shipped CXL scenarios meet their expectations: the knee and the pool")
{
    const ScratchDir dir("cxl-shipped");
    for (const char* name : {"cxl-loaded-latency", "cxl-pool"})
    {
        CAPTURE(name);
        const RunOutcome r = RunInProcess(kScenarios / (std::string(name) + ".yaml"), dir / name);
        CHECK_MESSAGE(r.code == kExitOk, r.err);
    }
    // Pooled: two hosts at once each get half of the expander's link, at twice the latency.
    const auto pool = Summary(dir / "cxl-pool")["memory"];
    REQUIRE(pool.size() == 4);
    const double alone = pool[1]["gbs"].get<double>();
    CHECK(pool[2]["gbs"].get<double>() + pool[3]["gbs"].get<double>() ==
          doctest::Approx(alone).epsilon(0.02));
    CHECK(pool[2]["p50_ns"].get<double>() > 1.8 * pool[1]["p50_ns"].get<double>());
}

TEST_CASE("bad CXL input is refused at its place, before anything runs")
{
    const ScratchDir dir("cxl-bad");
    const std::string read = "workloads:\n  - {type: memory, on: h0.cpu, target: h0.cxl0, "
                             "duration: 1us}\n";
    struct Bad
    {
        const char* name;
        std::string text;
        const char* error;
    };
    const std::vector<Bad> cases{
        {"flit",
         "topology:\n  builder: node\n  node:\n    cxl: {version: \"2.0\", expanders: 1, flit: "
         "256}\n" +
             read,
         "flit.yaml:6:47: topology.node.cxl: a 256-byte flit at 32 GT/s"},
        {"shares-nothing",
         "topology:\n  builder: node\n  node:\n    pcie: gpudirect\n    cxl: {expanders: "
         "[{shares: gpu3}]}\n" +
             read,
         "topology.node.cxl.expanders.0.shares: 'gpu3' is not a GPU of the server's PCIe tree "
         "(topology.node.pcie: 1 GPUs)"},
        {"shares-twice",
         "topology:\n  builder: node\n  node:\n    pcie: gpudirect\n    cxl: {expanders: "
         "[{shares: gpu0}, {shares: gpu0}]}\n" +
             read,
         "topology.node.cxl.expanders.1.shares: gpu0 shares cxl0's root port already"},
        {"shares-read",
         "topology:\n  builder: node\n  node:\n    pcie: gpudirect\n    cxl: {expanders: "
         "[{shares: gpu0}]}\nworkloads:\n  - {type: dma, src: h0.gpu0, dst: h0.mem, op: read, "
         "bytes: 1MB}\n",
         "workload 'dma': gpu0 shares cxl0's root port, where its DMA writes host memory (dst: "
         "h0.mem, op: write) over CXL.io; other transfers of it are not built"},
        {"switches-2.0",
         "topology:\n  builder: star\n  hosts: 2\n  node:\n    cxl: {pool: {switches: [[h0], "
         "[h1]]}}\n" +
             read,
         "switches-2.0.yaml:7:28: topology.node.cxl.pool.switches: switches under the pool's "
         "switch route by port ID, which CXL 2.0 does not have (version 3.0 or 3.1)"},
        {"switches-twice",
         "topology:\n  builder: star\n  hosts: 2\n  node:\n    cxl: {version: \"3.1\", pool: "
         "{switches: [[h0, h1], [h1]]}}\n" +
             read,
         "switches-twice.yaml:7:55: topology.node.cxl.pool.switches.1: h1 is on switch 0 already"},
        {"switches-missing",
         "topology:\n  builder: star\n  hosts: 3\n  node:\n    cxl: {version: \"3.0\", pool: "
         "{switches: [[h0, h1]]}}\n" +
             read,
         "switches-missing.yaml:7:44: topology.node.cxl.pool.switches: h2 shares the pool but is "
         "on none of its switches"},
        {"switches-outside",
         "topology:\n  builder: star\n  hosts: 3\n  node:\n    cxl: {version: \"3.0\", pool: "
         "{hosts: [h0, h1], switches: [[h0, h1, h2]]}}\n" +
             read,
         "topology.node.cxl.pool.switches.0: h2 does not share the pool (pool.hosts)"},
        {"switches-all",
         "topology:\n  builder: star\n  hosts: 2\n  node:\n    cxl: {version: \"3.0\", pool: "
         "{switches: [all]}}\n" +
             read,
         "topology.node.cxl.pool.switches.0 is a list of the servers on that switch"},
        {"shares-zero",
         "topology:\n  builder: node\n  node:\n    pcie: gpudirect\n    cxl: {expanders: "
         "[{shares: gpu00}]}\n" +
             read,
         "'gpu00' is not a GPU of the server's PCIe tree"},
        {"shares-huge",
         "topology:\n  builder: node\n  node:\n    pcie: gpudirect\n    cxl: {expanders: "
         "[{shares: gpu99999999999999999999}]}\n" +
             read,
         "is not a GPU of the server's PCIe tree"},
        {"shares-1.1",
         "topology:\n  builder: node\n  node:\n    pcie: gpudirect\n    cxl: {version: "
         "\"1.1\", expanders: [{shares: gpu0}]}\n" +
             read,
         "shares: a root port shared through a switch needs CXL 2.0 or later, not 1.1"},
        {"switches-shape",
         "topology:\n  builder: star\n  hosts: 2\n  node:\n    cxl: {version: \"3.0\", pool: "
         "{switches: h0}}\n" +
             read,
         "topology.node.cxl.pool.switches is a list of switches, each a list of servers"},
        {"pool-hosts",
         "topology:\n  builder: star\n  hosts: 2\n  node:\n    cxl: {pool: {hosts: [h0, h5]}}\n" +
             read,
         "pool-hosts.yaml:7:25: topology.node.cxl.pool.hosts: h5 is not a server of this "
         "topology (h0..h1), so it is not wired to the pool's switch"},
        {"pool-target",
         "topology:\n  builder: star\n  hosts: 2\n  node:\n    cxl: {pool: {hosts: [h0]}}\n"
         "workloads:\n  - {type: memory, on: h1.cpu, target: h1.pool, duration: 1us}\n",
         "pool-target.yaml:9:40: workload 'memory'.target: h1 is not wired to the pool's switch "
         "(pool.hosts: h0)"},
        {"read-ratio",
         "topology:\n  builder: node\n  node:\n    cxl: {expanders: 1}\nworkloads:\n  - {type: "
         "memory, on: h0.cpu, target: h0.cxl0, read_ratio: 1.5, duration: 1us}\n",
         "read-ratio.yaml:8:61: workload 'memory'.read_ratio"},
        {"other-server",
         "topology:\n  builder: star\n  hosts: 2\n  node:\n    cxl: {expanders: 1}\nworkloads:\n"
         "  - {type: memory, on: h0.cpu, target: h1.cxl0, duration: 1us}\n",
         "other-server.yaml:9:40: workload 'memory'.target: h1.cxl0 is memory of h1, but the "
         "CPU is h0's"},
        {"no-cxl", "topology:\n  builder: node\n  node:\n    pcie: gpudirect\n" + read,
         "no-cxl.yaml:8:5: workload 'memory' loads and stores over CXL"},
        {"no-expander",
         "topology:\n  builder: node\n  node:\n    cxl: {expanders: 1}\nworkloads:\n  - {type: "
         "memory, on: h0.cpu, target: h0.cxl3, duration: 1us}\n",
         "no-expander.yaml:8:40: workload 'memory'.target: 'cxl3' is not memory of h0 (it has "
         "mem, cxl0..cxl0)"},
        {"not-cpu",
         "topology:\n  builder: node\n  node:\n    cxl: {expanders: 1}\nworkloads:\n  - {type: "
         "memory, on: h0.mem, target: h0.cxl0, duration: 1us}\n",
         "not-cpu.yaml:8:24: workload 'memory'.on: 'mem' is not a CPU"},
        {"both",
         "topology:\n  builder: node\n  node:\n    cxl: {expanders: 1}\nworkloads:\n  - {type: "
         "memory, on: h0.cpu, target: h0.cxl0, bytes: 1MB, duration: 1us}\n",
         "both.yaml:8:5: workload 'memory': give bytes or duration (one of them)"},
        {"rate",
         "topology:\n  builder: node\n  node:\n    cxl: {expanders: 1}\nworkloads:\n  - {type: "
         "memory, on: h0.cpu, target: h0.cxl0, rate: fast, duration: 1us}\n",
         "rate.yaml:8:55: workload 'memory'.rate must be a rate such as 20GBps"},
        {"version", "topology:\n  builder: node\n  node:\n    cxl: {version: \"4.0\"}\n" + read,
         "version.yaml:6:20: topology.node.cxl.version"},
        {"gts", "topology:\n  builder: node\n  node:\n    cxl: {gts: 20, expanders: 1}\n" + read,
         "gts.yaml:6:16: topology.node.cxl.gts: 20 GT/s is not a CXL rate"},
        {"sweep",
         "topology:\n  builder: node\n  node:\n    cxl: {expanders: 1}\nworkloads:\n  - {type: "
         "memory, on: h0.cpu, target: h0.cxl0, bytes: {from: 1KB, to: 1MB}}\n",
         "sweep.yaml:8:56: workload 'memory'.bytes: a sweep of sizes is for collective workloads"},
        {"drain",
         "topology:\n  builder: node\n  node:\n    cxl: {expanders: 1}\nworkloads:\n  - {type: "
         "memory, on: h0.cpu, target: h0.cxl0, duration: 1ms}\n",
         "drain.yaml:8:59: workload 'memory': start + duration must end before the scenario's "
         "duration"},
        {"dma-to-cxl",
         "topology:\n  builder: node\n  node:\n    pcie: gpudirect\n    cxl: {expanders: 1}\n"
         "workloads:\n  - {type: dma, src: h0.gpu0, dst: h0.cxl0, bytes: 1MB}\n",
         "dma-to-cxl.yaml:9:36: workload 'dma'.dst: 'cxl0' is not a device or the memory of h0 "
         "(it has mem, gpu0, nic0)"},
    };
    for (const Bad& b : cases)
    {
        CAPTURE(b.name);
        const fs::path file = dir / (std::string(b.name) + ".yaml");
        std::ofstream(file) << "name: bad\nduration: 1ms\n" << b.text;
        const RunOutcome r = RunInProcess(file, dir / b.name);
        CHECK(r.code == kExitBadInput);
        CHECK_MESSAGE(r.err.find(b.error) != std::string::npos, r.err);
        CHECK(!fs::exists(dir / b.name));
    }
}

TEST_CASE("fabemu topo lists a server's CXL memory: its link, expanders and the pool")
{
    const fs::path file = kScenarios / "cxl-pool.yaml";
    const auto r = FabemuInProcess({"topo", file.string()});
    CHECK(r.code == kExitOk);
    CHECK(r.out.find("CXL 2.0 x16 at 32 GT/s, 68-byte flits (54.75 GB/s of reads per link)") !=
          std::string::npos);
    CHECK(r.out.find("pool   256 GiB, DRAM 76.8 GB/s, 60 ns") != std::string::npos);
    CHECK(r.out.find("shared through a CXL switch by every server") != std::string::npos);
    CHECK(r.out.find("Legend") == std::string::npos); // no GPU or NIC: no matrix
    // What a run writes back (resolved.yaml) reads again as the same: switches and shares.
    const std::string text =
        "name: rt\ntopology:\n  builder: star\n  hosts: 4\n  node:\n    pcie: gpudirect\n"
        "    cxl: {version: \"3.1\", expanders: [{shares: gpu0}], pool: {hosts: all, "
        "switches: [[h0, h1], [h2, h3]]}}\n";
    const Scenario s = ParseScenario(text, "rt.yaml");
    const Scenario again = ParseScenario(ResolvedYaml(s), "rt.resolved.yaml");
    CHECK(again.topology.node.cxl.poolSwitches ==
          std::vector<std::vector<uint32_t>>{{0, 1}, {2, 3}});
    CHECK(again.topology.node.cxl.expanders.at(0).shares == "gpu0");
    CHECK(ResolvedYaml(again) == ResolvedYaml(s));
    const auto fabric = FabemuInProcess({"topo", (kScenarios / "cxl-fabric-pool.yaml").string()});
    CHECK(fabric.code == kExitOk);
    CHECK(fabric.out.find("CXL 3.1 x16 at 64 GT/s, 256-byte flits") != std::string::npos);
    CHECK(fabric.out.find("under it switch 1: h2, h3 (port-based routing)") != std::string::npos);
}
