// fabemu run with PCIe inside the servers: dma workloads as flows at the framing limit,
// pcie.csv accounting for every payload byte, bit errors replayed and counted, GPUDirect
// RDMA held to a slow NIC link, a dma cut short reported pending, bad input refused.
#include "../run-in-process.h"
#include "../scratch-dir.h"
#include "emulator/fabemu/exit-codes.h"
#include "scenarios/src/results.h"

#include "ns3/pcie-spec.h"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <string>

using namespace fabemu;
using ns3::PcieLinkBytesPerSecond;
using ns3::PcieTlpWireBytes;
namespace fs = std::filesystem;

namespace
{

const fs::path kScenarios = FABEMU_SCENARIO_DIR;

/// One dma of \p bytes from gpu0 (under sw0) into host memory, every link Gen \p gen x16.
fs::path
WriteNode(const fs::path& dir, uint32_t gen, const std::string& bytes,
          const std::string& extra = "")
{
    const fs::path file = dir / "node.yaml";
    std::ofstream(file) << "name: node\nduration: 5ms\n"
                        << "topology:\n  builder: node\n  node:\n    pcie: {preset: gpudirect, "
                        << "generation: " << gen << "}\n"
                        << "workloads:\n  - {type: dma, src: h0.gpu0, dst: h0.mem, bytes: " << bytes
                        << "}\n"
                        << extra;
    return file;
}

/// Payload Gb/s of a Gen \p gen x \p lanes link carrying \p mps-byte TLPs with a 3DW header.
double
FramingGbps(uint8_t gen, uint8_t lanes, uint32_t mps)
{
    return PcieLinkBytesPerSecond(gen, lanes) * mps / PcieTlpWireBytes(gen, 12, mps, false) * 8 /
           1e9;
}

/// pcie.csv's row for host \p host, link \p link, direction \p dir.
std::vector<std::string>
Row(const fs::path& out, const std::string& host, const std::string& link, const std::string& dir)
{
    for (const auto& r : ReadCsv(out / "pcie.csv"))
    {
        if (r.size() == 11 && r[0] == host && r[1] == link && r[2] == dir)
        {
            return r;
        }
    }
    FAIL("no pcie.csv row " << host << " " << link << " " << dir);
    return {};
}

} // namespace

TEST_CASE("a dma write is a flow at the framing limit, and pcie.csv carries its every byte")
{
    const ScratchDir dir("pcie-run");
    for (uint32_t gen : {3u, 4u, 5u})
    {
        CAPTURE(gen);
        const fs::path out = dir / ("gen" + std::to_string(gen));
        const RunOutcome r = RunInProcess(WriteNode(dir, gen, "16MB"), out);
        REQUIRE_MESSAGE(r.code == kExitOk, r.err);
        const auto s = Summary(out);
        REQUIRE(s["flows"].size() == 1);
        const auto& f = s["flows"][0];
        CHECK(f["src"] == "h0.gpu0");
        CHECK(f["dst"] == "h0.mem");
        CHECK(f["state"] == "completed");
        CHECK(f["workload"] == "dma");
        const double limit = FramingGbps(static_cast<uint8_t>(gen), 16, 256);
        CHECK(f["throughput_gbps"].get<double>() == doctest::Approx(limit).epsilon(0.01));
        CHECK(f["slowdown"].get<double>() == doctest::Approx(1).epsilon(0.01));
        CHECK(s["fabric"] == "pcie");
        CHECK(s["totals"]["pcie_replays"] == 0);
        // Up gpu0's link and up sw0's: all 16 MiB, in 256-byte TLPs; down: only DLLPs.
        for (const char* link : {"sw0-gpu0", "rc-sw0"})
        {
            CAPTURE(link);
            const auto up = Row(out, "h0", link, "up");
            CHECK(std::stoull(up[8]) == 16u << 20);
            CHECK(std::stoull(up[5]) == (16u << 20) / 256);
            const auto down = Row(out, "h0", link, "down");
            CHECK(std::stoull(down[5]) == 0);
            CHECK(std::stoull(down[6]) > 0);
        }
        // nic0 took no part.
        CHECK(std::stoull(Row(out, "h0", "sw0-nic0", "up")[5]) == 0);
    }
}

TEST_CASE("bit errors: TLPs are replayed and counted, the dma still completes, slower")
{
    const ScratchDir dir("pcie-ber");
    const fs::path file = WriteNode(dir, 4, "16MB");
    const RunOutcome clean = RunInProcess(file, dir / "clean");
    const RunOutcome noisy =
        RunInProcess(file, dir / "noisy", {"ns3::PcieLink::BitErrorRate=1e-6"});
    REQUIRE_MESSAGE(clean.code == kExitOk, clean.err);
    REQUIRE_MESSAGE(noisy.code == kExitOk, noisy.err);
    const auto c = Summary(dir / "clean");
    const auto n = Summary(dir / "noisy");
    CHECK(n["flows"][0]["state"] == "completed");
    CHECK(n["totals"]["pcie_replays"].get<uint64_t>() > 0);
    CHECK(n["flows"][0]["throughput_gbps"].get<double>() <
          c["flows"][0]["throughput_gbps"].get<double>());
    CHECK(n["totals"]["bytes_delivered"] == 16u << 20);
    // The replays are pcie.csv's too, on the links that carried the data.
    uint64_t replays = 0;
    for (const auto& r : ReadCsv(dir / "noisy" / "pcie.csv"))
    {
        replays += std::stoull(r[9]);
    }
    CHECK(replays == n["totals"]["pcie_replays"].get<uint64_t>());
}

TEST_CASE("a dma the run's duration cuts short is pending, never done")
{
    const ScratchDir dir("pcie-short");
    // 1 GB at ~30 GB/s needs ~34 ms; the run stops at 1 ms.
    const fs::path file = WriteNode(dir, 4, "1GB");
    const RunOutcome r = RunInProcess(file, dir / "out", {"duration=1ms"});
    const auto s = Summary(dir / "out");
    CHECK(s["flows"][0]["state"] == "pending");
    CHECK(!s["flows"][0].contains("fct_s"));
    CHECK(s["flow_stats"]["pending"] == 1);
    CHECK(r.err.find("1 flow pending") != std::string::npos);
}

TEST_CASE("GPUDirect RDMA from the scenario: line rate on Gen5 x16, the PCIe limit on Gen4 x8")
{
    const ScratchDir dir("pcie-gd");
    const fs::path file = kScenarios / "pcie-gpudirect.yaml";
    const RunOutcome fast = RunInProcess(file, dir / "fast");
    const RunOutcome slow = RunInProcess(
        file, dir / "slow", {"topology.node.pcie.nics=[{under: sw0, generation: 4, lanes: 8}]"});
    REQUIRE_MESSAGE(fast.code == kExitOk, fast.err);
    // The scenario expects line rate: on Gen4 x8 that expectation is missed (exit 3).
    REQUIRE_MESSAGE(slow.code == kExitExpectation, slow.err);
    const double line = Summary(dir / "fast")["flows"][0]["throughput_gbps"].get<double>();
    const double held = Summary(dir / "slow")["flows"][0]["throughput_gbps"].get<double>();
    CHECK(line >= 380);
    // Each 512-byte read request comes back as two 256-byte completions (20 bytes of header
    // and framing each), with an UpdateFC and an eighth of an Ack beside them.
    const double wire = PcieLinkBytesPerSecond(4, 8) * 8 / 1e9;
    const double readLimit = wire * 512 / (2 * 276 + 8 + 1);
    CHECK(held == doctest::Approx(readLimit).epsilon(0.02));
    // The sender's NIC link carried the payload down (completions), the receiver's up.
    CHECK(std::stoull(Row(dir / "slow", "h0", "sw0-nic0", "down")[8]) == 16u << 20);
    CHECK(std::stoull(Row(dir / "slow", "h1", "sw0-nic0", "up")[8]) == 16u << 20);
    // GPU and NIC share sw0: nothing crossed sw0's uplink to the root complex.
    CHECK(std::stoull(Row(dir / "fast", "h0", "rc-sw0", "up")[5]) == 0);
    CHECK(std::stoull(Row(dir / "fast", "h1", "rc-sw0", "down")[5]) == 0);
}

TEST_CASE("mistakes in topology.node and dma: exit 2, FILE:LINE:COL, no results folder")
{
    const ScratchDir dir("pcie-bad");
    const std::string dma = "workloads:\n  - {type: dma, src: h0.gpu0, dst: h0.mem, bytes: 1MB}\n";
    struct Bad
    {
        const char* name;
        std::string text;
        const char* error;
    };
    const Bad cases[] = {
        {"lanes", "topology:\n  builder: node\n  node:\n    pcie: {lanes: 3}\n" + dma,
         "lanes.yaml:5:19: topology.node.pcie.lanes: x3 is not a PCIe link width"},
        {"generation", "topology:\n  builder: node\n  node:\n    pcie: {generation: 7}\n" + dma,
         "generation.yaml:5:24: topology.node.pcie.generation must be 1..6, not 7"},
        {"mps", "topology:\n  builder: node\n  node:\n    pcie: {mps: 384}\n" + dma,
         "mps.yaml:5:17: topology.node.pcie.mps must be a power of two from 128 to 4096 bytes, "
         "not 384"},
        {"switch", "topology:\n  builder: node\n  node:\n    pcie: {gpus: [{under: sw9}]}\n" + dma,
         "switch.yaml:5:27: topology.node.pcie.gpus.0: no switch 'sw9' in the tree"},
        {"serves",
         "topology:\n  builder: node\n  node:\n    pcie: {preset: gpudirect, nics: [{under: sw0, "
         "serves: gpu4}]}\n" +
             dma,
         "serves.yaml:5:59: topology.node.pcie.nics.0.serves: there is no gpu4"},
        {"servers",
         "topology:\n  builder: pair\n  node:\n    pcie: {preset: gpudirect}\nworkloads:\n  - "
         "{type: dma, src: h0.gpu0, dst: h1.mem, bytes: 1MB}\n",
         "servers.yaml:7:36: workload 'dma': a dma stays inside one server, but src is in h0 and "
         "dst in h1"},
    };
    for (const Bad& b : cases)
    {
        CAPTURE(b.name);
        const fs::path file = dir / (std::string(b.name) + ".yaml");
        std::ofstream(file) << "name: bad\n" << b.text;
        const RunOutcome r = RunInProcess(file, dir / b.name);
        CHECK(r.code == kExitBadInput);
        CHECK_MESSAGE(r.err.find(b.error) != std::string::npos, r.err);
        CHECK(!fs::exists(dir / b.name));
    }
}

TEST_CASE("data credits below the link's bandwidth-delay product: credit-starved in the totals")
{
    const ScratchDir dir("pcie-credits");
    const fs::path freeOut = dir / "free";
    const fs::path heldOut = dir / "held";
    const RunOutcome free = RunInProcess(WriteNode(dir, 4, "4MB"), freeOut);
    REQUIRE_MESSAGE(free.code == kExitOk, free.err);
    // 1 us links and 128 credits of 16 bytes: 2 KiB a credit loop of a little over 2 us.
    const RunOutcome held = RunInProcess(
        WriteNode(
            dir, 4, "4MB",
            "fabric:\n  set:\n    ns3::PcieLink::Delay: 1us\n    ns3::PciePort::InitPD: 128\n"),
        heldOut);
    REQUIRE_MESSAGE(held.code == kExitOk, held.err);
    const auto f = Summary(freeOut);
    const auto h = Summary(heldOut);
    CHECK(f["totals"]["credit_starved_s"].get<double>() == 0);
    const double starved = h["totals"]["credit_starved_s"].get<double>();
    CHECK(starved > 0);
    // The total is pcie.csv's column summed.
    double sum = 0;
    for (const auto& r : ReadCsv(heldOut / "pcie.csv"))
    {
        if (r.size() == 11 && r[0] == "h0")
        {
            sum += std::stod(r[10]);
        }
    }
    CHECK(sum == doctest::Approx(starved).epsilon(1e-6));
    // At most the credits per loop (2 KiB / 2 us = 8.19 Gb/s), and not far below it.
    REQUIRE(h["flows"][0]["state"] == "completed");
    const double gbps = h["flows"][0]["throughput_gbps"].get<double>();
    CHECK(gbps <= 128 * 16 * 8 / 2e-6 / 1e9);
    CHECK(gbps >= 0.9 * 128 * 16 * 8 / 2e-6 / 1e9);
}

TEST_CASE("record.pcie_trace: every TLP of the host's links, a line each, as pcie.csv counts them")
{
    const ScratchDir dir("pcie-trace");
    const fs::path out = dir / "out";
    const RunOutcome r =
        RunInProcess(WriteNode(dir, 4, "1MB", "record: {pcie_trace: [h0]}\n"), out);
    REQUIRE_MESSAGE(r.code == kExitOk, r.err);
    std::ifstream in(out / "pcie-h0.txt");
    std::string line;
    std::getline(in, line);
    CHECK(line.rfind("# time_ns link direction tlp", 0) == 0);
    uint64_t lines = 0;
    uint64_t writesUp = 0;
    while (std::getline(in, line))
    {
        ++lines;
        writesUp += line.find(" sw0-gpu0 up MWr ") != std::string::npos;
    }
    uint64_t tlps = 0;
    for (const auto& row : ReadCsv(out / "pcie.csv"))
    {
        tlps += std::stoull(row[5]);
    }
    CHECK(lines == tlps);
    CHECK(writesUp == (1u << 20) / 256);
    // Without a tree there is nothing to trace: refused before anything runs.
    const fs::path bad = dir / "bad.yaml";
    std::ofstream(bad) << "name: b\ntopology: {builder: pair}\nrecord: {pcie_trace: [h0]}\n";
    const RunOutcome refused = RunInProcess(bad, dir / "bad");
    CHECK(refused.code == kExitBadInput);
    CHECK(refused.err.find("bad.yaml:3:22: record.pcie_trace: the servers have no PCIe tree") !=
          std::string::npos);
}
