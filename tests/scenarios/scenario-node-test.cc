// topology.node.pcie, the node builder and the dma workload as the scenario file states
// them: presets and maps read into every field, the resolved file reads back the same,
// and each mistake is refused at its FILE:LINE:COL.
#include "parse-error.h"
#include "scenarios/src/scenario.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

using namespace fabemu;

TEST_CASE("a preset, overridden by a map, gives every server the same tree")
{
    const Scenario s = ParseScenario("name: p\n"
                                     "topology:\n"
                                     "  builder: pair\n"
                                     "  node:\n"
                                     "    pcie:\n"
                                     "      preset: pcie-8gpu\n"
                                     "      generation: 4\n"
                                     "      mps: 512\n"
                                     "      acs: true\n"
                                     "      root_complex: {intel_p2p: true}\n"
                                     "      nics: [sw0, {under: root, generation: 3, lanes: 8}]\n"
                                     "workloads:\n"
                                     "  - {type: bulk, src: h0, dst: h1, bytes: 1MB, src_mem: "
                                     "gpu7, dst_mem: host}\n",
                                     "p.yaml");
    const auto& p = s.topology.node.pcie;
    REQUIRE(s.topology.node.hasPcie);
    CHECK(p.generation == 4);
    CHECK(p.lanes == 16);
    CHECK(p.mps == 512);
    CHECK(p.mrrs == 512);
    CHECK(p.acs);
    CHECK(p.intelP2p);
    CHECK(p.switches.size() == 4);
    REQUIRE(p.gpus.size() == 8);
    CHECK(p.gpus[7].under == "sw3");
    REQUIRE(p.nics.size() == 2);
    CHECK(p.nics[1].under == "root");
    CHECK(p.nics[1].link.generation == 3);
    CHECK(p.nics[1].link.lanes == 8);
    CHECK(s.workloads[0].srcMemory == "gpu7");
    CHECK(s.workloads[0].dstMemory == "host");
    const std::string resolved = ResolvedYaml(s);
    CHECK(resolved.find("src_mem: gpu7") != std::string::npos);
    CHECK(resolved.find("dst_mem") == std::string::npos); // host, the default, is not written
    CHECK(ResolvedYaml(ParseScenario(resolved, "r.yaml")) == resolved);
    // A scenario without topology.node writes none: older resolved files stay as they were.
    const Scenario plain = ParseScenario("name: q\n", "q.yaml");
    CHECK(!plain.topology.node.hasPcie);
    CHECK(ResolvedYaml(plain).find("node") == std::string::npos);
}

TEST_CASE("the node builder: one server, dma workloads between its devices")
{
    const Scenario s =
        ParseScenario("name: n\n"
                      "topology: {builder: node, node: {pcie: gpudirect}}\n"
                      "workloads:\n"
                      "  - {type: dma, src: h0.gpu0, dst: h0.mem, bytes: 1MB}\n"
                      "  - {type: dma, src: h0.nic0, dst: h0.gpu0, bytes: 2MB, op: read, "
                      "start: 1us, tag: fetch}\n",
                      "n.yaml");
    CHECK(s.topology.HostCount() == 1);
    REQUIRE(s.workloads.size() == 2);
    CHECK(s.workloads[0].srcDevice == "gpu0");
    CHECK(s.workloads[0].dstDevice == "mem");
    CHECK(s.workloads[1].op == "read");
    CHECK(s.workloads[1].srcDevice == "nic0");
    CHECK(s.workloads[1].tag == "fetch");
    const std::string resolved = ResolvedYaml(s);
    CHECK(resolved.find("src: h0.nic0") != std::string::npos);
    CHECK(ResolvedYaml(ParseScenario(resolved, "r.yaml")) == resolved);
    CHECK(s.topology.node.Endpoints() == std::vector<std::string>{"mem", "gpu0", "nic0"});
}

TEST_CASE("PCIe mistakes: FILE:LINE:COL and the culprit named")
{
    const std::string node = "name: t\ntopology:\n  builder: node\n  node:\n    pcie:\n";
    const std::string dma = "workloads:\n  - {type: dma, src: h0.gpu0, dst: h0.mem, bytes: 1MB}\n";
    struct Case
    {
        const char* what;
        std::string text;
        std::string at;
        const char* says;
    };
    const std::vector<Case> cases{
        {"impossible width", node + "      lanes: 3\n" + dma, "bad.yaml:6:14: ",
         "topology.node.pcie.lanes: x3 is not a PCIe link width (1, 2, 4, 8 or 16)"},
        {"impossible generation", node + "      generation: 7\n" + dma,
         "bad.yaml:6:19: ", "topology.node.pcie.generation must be 1..6, not 7"},
        {"a device's impossible width",
         node + "      switches: 1\n      gpus: [{under: sw0, lanes: 12}]\n" + dma,
         "bad.yaml:7:34: ", "topology.node.pcie.gpus.0.lanes: x12 is not a PCIe link width"},
        {"MPS not a power of two", node + "      mps: 384\n" + dma, "bad.yaml:6:12: ",
         "topology.node.pcie.mps must be a power of two from 128 to 4096 bytes, not 384"},
        {"MPS above 4096", node + "      mps: 8192\n" + dma, "bad.yaml:6:12: ", "not 8192"},
        {"MRRS below 128", node + "      mrrs: 64\n" + dma, "bad.yaml:6:13: ",
         "topology.node.pcie.mrrs must be a power of two from 128 to 4096 bytes, not 64"},
        {"a GPU under a switch that does not exist",
         node + "      switches: 2\n      gpus: [sw0, sw2]\n" + dma, "bad.yaml:7:19: ",
         "topology.node.pcie.gpus.1: no switch 'sw2' in the tree (it has sw0..sw1, or root)"},
        {"a NIC under a switch of a tree without any", node + "      nics: [{under: sw0}]\n" + dma,
         "bad.yaml:6:22: ",
         "topology.node.pcie.nics.0: no switch 'sw0' in the tree (it has none; use root)"},
        {"an unknown preset", node + "      preset: dgx\n" + dma,
         "bad.yaml:6:15: ", "must be one of gpudirect, host-nic, pcie-8gpu, not 'dgx'"},
        {"a dma between two servers",
         "name: t\ntopology: {builder: pair, node: {pcie: gpudirect}}\n"
         "workloads:\n  - {type: dma, src: h0.gpu0, dst: h1.mem, bytes: 1MB}\n",
         "bad.yaml:4:36: ", "a dma stays inside one server, but src is in h0 and dst in h1"},
        {"a dma from memory, which has no DMA engine",
         node + "      preset: gpudirect\n"
                "workloads:\n  - {type: dma, src: h0.mem, dst: h0.gpu0, bytes: 1MB}\n",
         "bad.yaml:8:22: ", "'mem' is not a GPU or NIC"},
        {"a dma to a GPU the server lacks",
         node + "      preset: gpudirect\n"
                "workloads:\n  - {type: dma, src: h0.gpu0, dst: h0.gpu3, bytes: 1MB}\n",
         "bad.yaml:8:36: ", "'gpu3' is not a device or the memory of h0 (it has mem, gpu0, nic0)"},
        {"a dma without a tree",
         "name: t\ntopology: {builder: pair}\nworkloads:\n"
         "  - {type: dma, src: h0.gpu0, dst: h0.mem, bytes: 1MB}\n",
         "bad.yaml:4:5: ", "give the servers a tree with topology.node.pcie"},
        {"a dma that sends",
         node + "      preset: gpudirect\n"
                "workloads:\n  - {type: dma, src: h0.gpu0, dst: h0.mem, "
                "bytes: 1MB, op: send}\n",
         "bad.yaml:8:60: ", "a dma is a write or a read, not send"},
        {"an RDMA flow on the node builder",
         node + "      preset: gpudirect\nworkloads:\n  - {type: bulk, src: h0, dst: h0, "
                "bytes: 1MB}\n",
         "bad.yaml:8:5: ", "the node builder is one server without a network"},
        {"the node builder without a tree", "name: t\ntopology: {builder: node}\n",
         "bad.yaml:2:11: ", "give it topology.node (a server preset, pcie, nvlink or cxl)"},
        {"src_mem without a tree",
         "name: t\ntopology: {builder: pair}\nworkloads:\n"
         "  - {type: bulk, src: h0, dst: h1, bytes: 1MB, src_mem: gpu0}\n",
         "bad.yaml:4:57: ", "give the servers a PCIe tree with topology.node.pcie"},
        {"src_mem naming a GPU the servers lack",
         "name: t\ntopology: {builder: pair, node: {pcie: gpudirect}}\nworkloads:\n"
         "  - {type: bulk, src: h0, dst: h1, bytes: 1MB, dst_mem: gpu1}\n",
         "bad.yaml:4:57: ", "no GPU 'gpu1' in the servers (host, or gpu0..gpu0)"},
        {"an RDMA READ through PCIe",
         "name: t\ntopology: {builder: pair, node: {pcie: gpudirect}}\nworkloads:\n"
         "  - {type: bulk, src: h0, dst: h1, bytes: 1MB, op: read}\n",
         "bad.yaml:4:52: ", "a read through PCIe is not modelled yet"},
        {"RDMA between servers without a NIC",
         "name: t\ntopology: {builder: pair, node: {pcie: {switches: 1, gpus: [sw0]}}}\n"
         "workloads:\n  - {type: bulk, src: h0, dst: h1, bytes: 1MB}\n",
         "bad.yaml:4:5: ", "topology.node.pcie has no NIC"},
        {"a NIC named in a host-to-host flow",
         "name: t\ntopology: {builder: pair, node: {pcie: gpudirect}}\nworkloads:\n"
         "  - {type: bulk, src: h0.nic0, dst: h1, bytes: 1MB}\n",
         "bad.yaml:4:23: ",
         "'nic0' is inside a server; bulk flows run between hosts or their GPUs"},
        {"a GPU and a src_mem that disagree",
         "name: t\ntopology: {builder: pair, node: dgx-h100}\nworkloads:\n"
         "  - {type: bulk, src: h0.gpu0, dst: h1, bytes: 1MB, src_mem: gpu1}\n",
         "bad.yaml:4:23: ", "workload 'bulk'.src: names gpu0, but src_mem says gpu1"},
    };
    for (const auto& c : cases)
    {
        CAPTURE(c.what);
        const std::string msg = ParseErrorOf(c.text);
        CAPTURE(msg);
        CHECK(msg.rfind(c.at, 0) == 0);
        CHECK(msg.find(c.says) != std::string::npos);
    }
}

TEST_CASE("an RDMA flow may name a GPU for its host: the NIC reads or writes that GPU")
{
    const Scenario s = ParseScenario("name: g\ntopology: {builder: pair, node: dgx-h100}\n"
                                     "workloads:\n"
                                     "  - {type: bulk, src: h0.gpu3, dst: h1.gpu5, bytes: 1MB}\n"
                                     "  - {type: incast, srcs: [h0], dst: h1.gpu2, bytes: 1MB}\n",
                                     "g.yaml");
    CHECK(s.workloads[0].src == 0);
    CHECK(s.workloads[0].srcDevice == "gpu3");
    CHECK(s.workloads[0].dstDevice == "gpu5");
    CHECK(s.workloads[1].dstDevice == "gpu2");
    const std::string resolved = ResolvedYaml(s);
    CHECK(resolved.find("src: h0.gpu3") != std::string::npos);
    CHECK(ResolvedYaml(ParseScenario(resolved, "r.yaml")) == resolved);
}

TEST_CASE("every server preset reads back the same from its resolved file")
{
    for (const char* preset : {"dgx-h100", "dgx-a100", "hgx-b200", "dgx-1", "pcie-8gpu"})
    {
        CAPTURE(preset);
        const Scenario s = ParseScenario(
            std::string("name: s\ntopology: {builder: node, node: ") + preset + "}\n", "s.yaml");
        CHECK(s.topology.node.preset == preset);
        CHECK(s.topology.node.Gpus() == 8);
        const std::string resolved = ResolvedYaml(s);
        CHECK(ResolvedYaml(ParseScenario(resolved, "r.yaml")) == resolved);
    }
    const Scenario cube = ParseScenario("name: c\ntopology: {builder: node, node: dgx-1}\n", "c");
    CHECK(cube.topology.node.nvlink.Reaches(0, 4));
    CHECK(!cube.topology.node.nvlink.Reaches(0, 5));
    CHECK(cube.topology.node.ServingNic(5) == 2); // gpu5 sits under sw2 with nic2
    const Scenario h100 =
        ParseScenario("name: h\ntopology: {builder: node, node: dgx-h100}\n", "h");
    for (uint32_t g = 0; g < 8; ++g)
    {
        CHECK(h100.topology.node.ServingNic(g) == g); // GPU k beside NIC k
    }
}

TEST_CASE("nics.serves names the GPUs a NIC serves; a GPU not there, or served twice, refused")
{
    const auto node = [](const std::string& nics) {
        return "name: s\ntopology:\n  builder: node\n  node:\n    pcie:\n      switches: [{}]\n"
               "      gpus: [sw0, sw0]\n      nics: " +
               nics + "\n";
    };
    // By position gpu1 takes nic1; serves gives both GPUs to nic0.
    const Scenario plain = ParseScenario(node("[sw0, sw0]"), "p.yaml");
    CHECK(plain.topology.node.ServingNic(1) == 1);
    const Scenario s = ParseScenario(node("[{under: sw0, serves: [gpu0, gpu1]}, sw0]"), "s.yaml");
    CHECK(s.topology.node.pcie.nics[0].serves == std::vector<uint32_t>{0, 1});
    CHECK(s.topology.node.ServingNic(0) == 0);
    CHECK(s.topology.node.ServingNic(1) == 0);
    const std::string resolved = ResolvedYaml(s);
    CHECK(resolved.find("serves: [gpu0, gpu1]") != std::string::npos);
    CHECK(ResolvedYaml(ParseScenario(resolved, "r.yaml")) == resolved);
    // One GPU alone, without a list.
    CHECK(ParseScenario(node("[sw0, {under: sw0, serves: gpu0}]"), "o.yaml")
              .topology.node.ServingNic(0) == 1);
    CHECK(ParseErrorOf(node("[{under: sw0, serves: [gpu0, gpu2]}]"))
              .find("bad.yaml:8:42: topology.node.pcie.nics.0.serves: there is no gpu2: the tree "
                    "has gpu0..gpu1") == 0);
    CHECK(ParseErrorOf(node("[{under: sw0, serves: gpu1}, {under: sw0, serves: [gpu1]}]"))
              .find("bad.yaml:8:64: topology.node.pcie.nics.1.serves: gpu1 is served by nic0 "
                    "already") == 0);
    CHECK(ParseErrorOf(node("[{under: sw0, serves: nic1}]"))
              .find("serves names GPUs of the server: gpuK, or a list of them") !=
          std::string::npos);
    CHECK(ParseErrorOf("name: s\ntopology:\n  builder: node\n  node:\n    pcie:\n      gpus: "
                       "[{under: root, serves: gpu0}]\n")
              .find("unknown key 'serves' in topology.node.pcie.gpus.0") != std::string::npos);
}

TEST_CASE("a server preset's NICs set the host links' rate unless the file gives one")
{
    const auto rail = [](const std::string& preset, const std::string& links) {
        return ParseScenario("name: r\nfabric: {type: infiniband}\ntopology: {builder: rail, "
                             "nodes: 2, node: " +
                                 preset + links + "}\n",
                             "r.yaml")
            .topology;
    };
    // dgx-h100 and hgx-b200: 400 Gb/s (ConnectX-7); dgx-a100: 200; dgx-1: 100 (EDR).
    CHECK(rail("dgx-h100", "").link.bitsPerSecond == 400'000'000'000);
    CHECK(rail("hgx-b200", "").link.bitsPerSecond == 400'000'000'000);
    const auto a100 = rail("dgx-a100", "");
    CHECK(a100.link.rate == "200Gbps");
    CHECK(a100.uplink.bitsPerSecond == 200'000'000'000); // the uplinks inherit it
    CHECK(rail("dgx-1", "").link.bitsPerSecond == 100'000'000'000);
    // What the file says wins, and the resolved file keeps it.
    const auto given = rail("dgx-a100", ", link: {rate: 50Gbps}, uplink: {rate: 800Gbps}");
    CHECK(given.link.bitsPerSecond == 50'000'000'000);
    CHECK(given.uplink.bitsPerSecond == 800'000'000'000);
    CHECK(rail("dgx-a100", ", uplink: {rate: 800Gbps}").link.bitsPerSecond == 200'000'000'000);
    // pcie-8gpu names no NIC rate: the default stays.
    CHECK(rail("pcie-8gpu", "").link.bitsPerSecond == 100'000'000'000);
    const Scenario s = ParseScenario(
        "name: r\nfabric: {type: infiniband}\ntopology: {builder: rail, nodes: 2, node: "
        "dgx-a100}\n",
        "r.yaml");
    CHECK(ParseScenario(ResolvedYaml(s), "again.yaml").topology.link.bitsPerSecond ==
          200'000'000'000);
}
