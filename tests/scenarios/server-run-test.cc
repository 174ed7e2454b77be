// Servers as scenarios state them (topology.node: a server preset or a map with nvlink and
// pcie): copies over NVLink, over PCIe where NVLink does not reach, and between servers by
// GPUDirect RDMA; nvlink.csv, topo.txt and `fabemu topo`; mistakes refused at FILE:LINE:COL.
#include "../run-in-process.h"
#include "../scratch-dir.h"
#include "emulator/fabemu/exit-codes.h"
#include "scenarios/src/results.h"
#include "scenarios/src/scenario.h"

#include "ns3/pcie-spec.h"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>

using namespace fabemu;
namespace fs = std::filesystem;

namespace
{

/// A one-server scenario (the node builder) with \p node and \p workloads.
fs::path
Write(const fs::path& dir, const std::string& name, const std::string& node,
      const std::string& workloads, const std::string& head = "topology:\n  builder: node\n")
{
    const fs::path file = dir / (name + ".yaml");
    std::ofstream(file) << "name: " << name << "\nduration: 20ms\n"
                        << head << "  node: " << node << "\nworkloads:\n"
                        << workloads;
    return file;
}

/// Runs \p node with \p workloads on the node builder into dir/out; its summary.json.
nlohmann::json
RunNode(const ScratchDir& dir, const std::string& node, const std::string& workloads)
{
    const auto r = RunInProcess(Write(dir, "s", node, workloads), dir / "out");
    REQUIRE_MESSAGE(r.code == kExitOk, r.err);
    return Summary(dir / "out");
}

/// Runs dgx-h100 servers as \p head says (fabric, topology) with \p workloads into dir/out;
/// its summary.json.
nlohmann::json
RunServers(const ScratchDir& dir, const std::string& name, const std::string& head,
           const std::string& workloads)
{
    const auto r = RunInProcess(Write(dir, name, "dgx-h100", workloads, head), dir / "out");
    REQUIRE_MESSAGE(r.code == kExitOk, r.err);
    return Summary(dir / "out");
}

double
GBps(const nlohmann::json& flow)
{
    return flow["throughput_gbps"].get<double>() / 8;
}

} // namespace

TEST_CASE("dgx-h100: a GPU-to-GPU copy over all 18 NVLinks at 18 x 20.6 GB/s")
{
    const ScratchDir dir("server-h100");
    const fs::path out = dir / "out";
    const auto s =
        RunNode(dir, "dgx-h100", "  - {type: copy, src: h0.gpu0, dst: h0.gpu1, bytes: 64MB}\n");
    REQUIRE(s["flows"].size() == 1);
    CHECK(s["flows"][0]["src"] == "h0.gpu0");
    CHECK(s["flows"][0]["dst"] == "h0.gpu1");
    CHECK(GBps(s["flows"][0]) == doctest::Approx(18 * 20.6).epsilon(0.01));
    CHECK(s["totals"]["nvlink_replays"] == 0);
    // nvlink.csv: gpu0's four bundles (5/4/4/5) carried every byte out, in proportion.
    uint64_t out0 = 0;
    for (const auto& row : ReadCsv(out / "nvlink.csv"))
    {
        if (row[0] == "h0" && row[1].rfind("gpu0-nvs", 0) == 0 && row[2] == "out")
        {
            out0 += std::stoull(row[7]);
        }
    }
    CHECK(out0 == 64u << 20);
    const std::string topo = Slurp(out / "topo.txt");
    CHECK(topo.find("GPU0   X      NV18") != std::string::npos);
    CHECK(topo.find("NIC0   PIX    PIX    PHB") != std::string::npos);
}

TEST_CASE("dgx-1: a pair without an NVLink goes over PCIe, slower than a linked pair")
{
    const ScratchDir dir("server-dgx1");
    // gpu0-gpu1 share an NVLink1 link; gpu0-gpu5 have none and sit under different PCIe
    // switches (Gen3 x16): the root complex carries them.
    const auto s =
        RunNode(dir, "dgx-1",
                "  - {type: copy, src: h0.gpu0, dst: h0.gpu1, bytes: 16MB}\n"
                "  - {type: copy, src: h0.gpu0, dst: h0.gpu5, bytes: 16MB, start: 2ms}\n");
    REQUIRE(s["flows"].size() == 2);
    double linked = 0;
    double unlinked = 0;
    for (const auto& f : s["flows"])
    {
        (f["dst"] == "h0.gpu1" ? linked : unlinked) = GBps(f);
    }
    CHECK(linked == doctest::Approx(18.0).epsilon(0.01)); // one NVLink1 link, NCCL's SM60 figure
    const double gen3 = ns3::PcieLinkBytesPerSecond(3, 16) * 256 / (256 + 20) / 1e9;
    CHECK(unlinked == doctest::Approx(gen3).epsilon(0.01));
    CHECK(unlinked < linked);
}

TEST_CASE("pcie-8gpu: no NVLink, a copy under one PCIe switch runs at the PCIe rate")
{
    const ScratchDir dir("server-pcie8");
    const auto s =
        RunNode(dir, "pcie-8gpu", "  - {type: copy, src: h0.gpu0, dst: h0.gpu1, bytes: 16MB}\n");
    const double gen5 = ns3::PcieLinkBytesPerSecond(5, 16) * 256 / (256 + 20) / 1e9;
    CHECK(GBps(s["flows"][0]) == doctest::Approx(gen5).epsilon(0.01));
    CHECK(!fs::exists(dir / "out" / "nvlink.csv"));
}

TEST_CASE("two dgx-h100 servers on NDR InfiniBand: a copy between them at the NIC's line rate")
{
    const ScratchDir dir("server-pair");
    const auto s =
        RunServers(dir, "pair",
                   "fabric: {type: infiniband, mtu: 4096, set: {ns3::IbPort::BufferBlocks: 2048}}\n"
                   "topology:\n  builder: pair\n  link: {rate: 400Gbps, delay: 100ns}\n",
                   "  - {type: copy, src: h0.gpu0, dst: h1.gpu3, bytes: 16MB}\n");
    const auto& f = s["flows"][0];
    CHECK(f["src"] == "h0.gpu0");
    CHECK(f["dst"] == "h1.gpu3");
    // 400 Gb/s less IB's headers at MTU 4096 (LRH 8, BTH 12, ICRC 4, VCRC 2, RETH 16 on the
    // first packet): about 397; the PCIe hops around the NICs take a little more.
    CHECK(f["throughput_gbps"].get<double>() > 380);
    CHECK(f["throughput_gbps"].get<double>() < 400);
}

TEST_CASE("a 2-server rail cluster of dgx-h100 on NDR InfiniBand: eight copies, one per rail, "
          "each at the NIC's line rate")
{
    const ScratchDir dir("server-rail");
    std::string copies;
    for (int k = 0; k < 8; ++k)
    {
        copies += "  - {type: copy, src: h0.gpu" + std::to_string(k) + ", dst: h1.gpu" +
                  std::to_string(k) + ", bytes: 16MB}\n";
    }
    const auto s = RunServers(dir, "rail",
                              "fabric: {type: infiniband, mtu: 4096, set: "
                              "{ns3::IbPort::BufferBlocks: 2048}}\n"
                              "topology:\n  builder: rail\n  nodes: 2\n  spines: 0\n"
                              "  link: {rate: 400Gbps, delay: 100ns}\n",
                              copies);
    REQUIRE(s["flows"].size() == 8);
    for (const auto& f : s["flows"])
    {
        CAPTURE(f["src"]);
        CHECK(f["state"] == "completed");
        CHECK(f["throughput_gbps"].get<double>() > 385); // each alone on its rail: 393.7
        CHECK(f["throughput_gbps"].get<double>() < 400);
    }
    CHECK(s["totals"]["drops"] == 0);
}

TEST_CASE("a rail that outgrows one leaf: copies across its leaves go through its spines, at "
          "their tier's rate")
{
    const ScratchDir dir("server-rail-tiers");
    // Four servers on one rail, two to a leaf; the rail's one spine joins its two leaves
    // over 100 Gb/s links, the NICs' links are 400 Gb/s. h0 -> h1 stays on leaf 0 (line
    // rate); h0 -> h2, later, crosses the spine tier (its rate).
    const auto s =
        RunServers(dir, "tiers",
                   "fabric: {type: infiniband, mtu: 4096, set: {ns3::IbPort::BufferBlocks: 2048}}\n"
                   "topology:\n  builder: rail\n  nodes: 4\n  rails: 1\n  servers_per_leaf: 2\n"
                   "  rail_spines: 1\n  spines: 0\n  link: {rate: 400Gbps, delay: 100ns}\n"
                   "  uplink: {rate: 100Gbps, delay: 500ns}\n",
                   "  - {type: copy, src: h0.gpu0, dst: h1.gpu0, bytes: 8MB}\n"
                   "  - {type: copy, src: h0.gpu0, dst: h2.gpu0, bytes: 8MB, start: 2ms}\n");
    REQUIRE(s["flows"].size() == 2);
    for (const auto& f : s["flows"])
    {
        CAPTURE(f["dst"]);
        CHECK(f["state"] == "completed");
        const double gbps = f["throughput_gbps"].get<double>();
        MESSAGE(f["dst"].get<std::string>() << ": " << gbps << " Gb/s");
        if (f["dst"] == "h1.gpu0")
        {
            CHECK(gbps > 385); // 393.7 alone on the leaf
            CHECK(gbps < 400);
        }
        else
        {
            CHECK(gbps > 90); // the rail spine's 100 Gb/s links bound it
            CHECK(gbps < 100);
        }
    }
    // The links by their ends: rail 0's leaves s0, s1 and its spine s2.
    const auto bad = RunInProcess(
        Write(dir, "names", "dgx-h100",
              "  - {type: copy, src: h0.gpu0, dst: h2.gpu0, bytes: 1MB}\n",
              "topology:\n  builder: rail\n  nodes: 4\n  rails: 1\n  servers_per_leaf: 2\n"
              "  rail_spines: 1\n  spines: 0\n  links: {s0-s3: {rate: 1Gbps}}\n"),
        dir / "names-out");
    CHECK(bad.code == kExitBadInput);
    CHECK(bad.err.find("s0-s2") != std::string::npos); // the links there are, named
}

TEST_CASE("on a rail cluster flows name GPUs or hosts: a GPU's flow takes its NIC's rail, a "
          "host's takes nic0")
{
    const ScratchDir dir("server-rail-flows");
    // h0.gpu5 -> h1.gpu5 goes on rail 5 (NIC 5 serves GPU 5 on dgx-h100); h0 -> h1 on rail
    // 0. On rails of their own both run at line rate at once; on one they would halve.
    const auto s =
        RunServers(dir, "flows",
                   "fabric: {type: infiniband, mtu: 4096, set: {ns3::IbPort::BufferBlocks: 2048}}\n"
                   "topology:\n  builder: rail\n  nodes: 2\n  spines: 0\n"
                   "  link: {rate: 400Gbps, delay: 100ns}\n",
                   "  - {type: bulk, src: h0.gpu5, dst: h1.gpu5, bytes: 8MB}\n"
                   "  - {type: bulk, src: h0, dst: h1, bytes: 8MB}\n");
    REQUIRE(s["flows"].size() == 2);
    std::set<std::string> names;
    for (const auto& f : s["flows"])
    {
        names.insert(f["src"].get<std::string>() + " " + f["dst"].get<std::string>());
        CHECK(f["state"] == "completed");
        MESSAGE(f["src"].get<std::string>()
                << ": " << f["throughput_gbps"].get<double>() << " Gb/s");
        CHECK(f["throughput_gbps"].get<double>() > 380);
    }
    CHECK(names == std::set<std::string>{"h0.gpu5 h1.gpu5", "h0.nic0 h1.nic0"});
}

TEST_CASE("iWARP between servers: a GPU-to-GPU copy and a collective on a rail cluster go as "
          "SENDs, completed")
{
    const ScratchDir dir("server-rail-iwarp");
    const auto s = RunServers(dir, "iwarp",
                              "fabric: {type: iwarp}\n"
                              "topology:\n  builder: rail\n  nodes: 2\n  spines: 0\n"
                              "  link: {rate: 25Gbps, delay: 1us}\n",
                              "  - {type: copy, src: h0.gpu2, dst: h1.gpu2, bytes: 4MB}\n"
                              "  - {type: collective, job: pair, algorithm: ring, "
                              "bytes: 4MB, start: 5ms, ranks: [h0.gpu2, h1.gpu2]}\n");
    REQUIRE(s["flows"].size() == 1);
    const auto& f = s["flows"][0];
    CHECK(f["src"] == "h0.gpu2");
    CHECK(f["state"] == "completed");
    CHECK(f["bytes"] == 4u << 20);
    // TCP/MPA/DDP headers over 25 Gb/s: above 20, below the line.
    MESSAGE("iWARP copy: " << f["throughput_gbps"].get<double>() << " Gb/s");
    CHECK(f["throughput_gbps"].get<double>() > 20);
    CHECK(f["throughput_gbps"].get<double>() < 25);
    // A collective across the servers stages its transfers the same way: a 2-rank ring
    // all-reduce on rail 2 moves S each way, at about the rail's 25 Gb/s (3.125 GB/s).
    REQUIRE(s["collectives"].size() == 1);
    const auto& c = s["collectives"][0];
    CHECK(c["state"] == "completed");
    MESSAGE("iWARP all-reduce busBw: " << c["busbw_gbs"].get<double>() << " GB/s");
    CHECK(c["busbw_gbs"].get<double>() > 2.5);
    CHECK(c["busbw_gbs"].get<double>() < 3.125);
}

TEST_CASE("fabemu topo prints a server as nvidia-smi topo -m does; refuses plain hosts")
{
    const ScratchDir dir("server-topo");
    const fs::path file = dir / "a100.yaml";
    std::ofstream(file) << "name: a100\ntopology: {builder: node, node: dgx-a100}\n";
    const auto r = FabemuInProcess({"topo", file.string()});
    CHECK(r.code == kExitOk);
    CHECK(r.out.find("(dgx-a100)") != std::string::npos);
    CHECK(r.out.find("GPU7   NV12   NV12") != std::string::npos);
    CHECK(r.out.find("PIX  = Connection traversing at most a single PCIe switch") !=
          std::string::npos);
    const fs::path plain = dir / "plain.yaml";
    std::ofstream(plain) << "name: plain\n";
    const auto p = FabemuInProcess({"topo", plain.string()});
    CHECK(p.code == kExitBadInput);
    CHECK(p.err.find("topology.node is not given") != std::string::npos);
}

TEST_CASE("server mistakes: FILE:LINE:COL and the culprit named")
{
    struct Case
    {
        const char* what;
        std::string text;
        std::string at;
        const char* says;
    };
    const std::string head = "name: t\ntopology:\n  builder: node\n  node: ";
    const std::vector<Case> cases{
        {"an unknown server preset, the closest suggested", head + "dgx-h10\n",
         "bad.yaml:4:9: ", "(did you mean 'dgx-h100'?)"},
        {"a link split that does not add up",
         head + "{preset: dgx-h100, nvlink: {links_per_gpu: 18, split: [5, 4, 4, 4]}}\n",
         "bad.yaml:4:63: ", "topology.node.nvlink.split: 17 links, but links_per_gpu is 18"},
        {"NVLink GPUs against the PCIe tree's", head + "{preset: dgx-h100, nvlink: {gpus: 4}}\n",
         "bad.yaml:4:36: ", "4 GPUs on NVLink, but the PCIe tree has 8"},
        {"a mesh edge to a GPU that does not exist",
         head + "{nvlink: {gpus: 4, mesh: [{gpus: [0, 7]}]}}\n",
         "bad.yaml:4:42: ", "GPU 7 is not one of the 4 GPUs"},
        {"a copy to a GPU the server lacks",
         head + "dgx-h100\nworkloads:\n  - {type: copy, src: h0.gpu0, dst: h0.gpu8, bytes: 1MB}\n",
         "bad.yaml:6:37: ", "'gpu8' is not a GPU of h0 (it has gpu0..gpu7)"},
        {"a copy from a NIC",
         head + "dgx-h100\nworkloads:\n  - {type: copy, src: h0.nic0, "
                "dst: h0.gpu1, bytes: 1MB}\n",
         "bad.yaml:6:23: ", "'nic0' is not a GPU of h0"},
        {"a copy that starts after the run ends",
         head + "dgx-h100\nworkloads:\n  - {type: copy, src: h0.gpu0, dst: h0.gpu1, bytes: 1MB, "
                "start: 1s}\n",
         "bad.yaml:6:65: ", "workload 'copy'.start is out of range: 1s"},
        {"more rails than a server has NICs",
         "name: t\ntopology:\n  builder: rail\n  rails: 9\n  node: dgx-h100\n",
         "bad.yaml:4:10: ", "topology.rails: 9 rails, but each server has 8 NICs"},
        {"a rail cluster of servers without NICs",
         "name: t\ntopology:\n  builder: rail\n  node: {nvlink: {gpus: 2, mesh: [{gpus: [0, "
         "1]}]}}\n",
         "bad.yaml:3:3: ", "a rail cluster joins servers' NICs"},
        {"a spine tier's link without spines",
         "name: t\ntopology:\n  builder: rail\n  spines: 0\n  spine_link: {rate: 800Gbps}\n"
         "  node: dgx-h100\n",
         "bad.yaml:5:15: ", "topology.spine_link: no spines join the rails (spines: 0)"},
        {"servers per leaf on another builder",
         "name: t\ntopology:\n  builder: leaf-spine\n  servers_per_leaf: 2\n",
         "bad.yaml:4:21: ", "topology.servers_per_leaf does not apply to the 'leaf-spine' builder"},
        {"a copy between servers without a network",
         "name: t\ntopology:\n  builder: pair\n  node: {nvlink: {gpus: 2, mesh: [{gpus: [0, "
         "1]}]}}\n"
         "workloads:\n  - {type: copy, src: h0.gpu0, dst: h1.gpu1, bytes: 1MB}\n",
         "bad.yaml:6:37: ", "between servers a copy goes GPU -> PCIe -> NIC"},
    };
    for (const auto& c : cases)
    {
        CAPTURE(c.what);
        std::string msg;
        try
        {
            ParseScenario(c.text, "bad.yaml");
        }
        catch (const ScenarioError& e)
        {
            msg = e.what();
        }
        CAPTURE(msg);
        CHECK(msg.rfind(c.at, 0) == 0);
        CHECK(msg.find(c.says) != std::string::npos);
    }
}
