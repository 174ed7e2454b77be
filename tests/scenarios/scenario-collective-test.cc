// The collective workload and fidelity as the scenario file states them: defaults
// resolved, the resolved file read back the same, and each mistake refused at its
// FILE:LINE:COL with the culprit named.
#include "parse-error.h"
#include "scenarios/src/scenario.h"

#include <doctest/doctest.h>

#include <string>

using namespace fabemu;

namespace
{

const char* const kHead = "name: c\n"
                          "fabric: {type: roce}\n"
                          "topology: {builder: star, hosts: 6}\n";

std::string
Workload(const std::string& item)
{
    return std::string(kHead) + "workloads:\n  - " + item + "\n";
}

} // namespace

TEST_CASE("a collective's defaults: all-reduce, auto, every host, one iteration, jobN")
{
    const Scenario s = ParseScenario(Workload("{type: collective, bytes: 6MB}") +
                                         "  - {type: collective, op: all-gather, algorithm: ring, "
                                         "ranks: [h5, h0, h3], bytes: 3000, iterations: 4, "
                                         "job: gather, start: 1ms}\n",
                                     "c.yaml");
    REQUIRE(s.workloads.size() == 2);
    const auto& a = s.workloads[0];
    CHECK(a.op == "all-reduce");
    CHECK(a.algorithm == "auto");
    CHECK(a.hosts == std::vector<uint32_t>{0, 1, 2, 3, 4, 5});
    CHECK(a.iterations == 1);
    CHECK(a.job == "job0");
    const auto& b = s.workloads[1];
    CHECK(b.op == "all-gather");
    CHECK(b.algorithm == "ring");
    CHECK(b.hosts == std::vector<uint32_t>{5, 0, 3}); // ring order as written
    CHECK(b.iterations == 4);
    CHECK(b.job == "gather");
    CHECK(b.startPs == 1'000'000'000);
    CHECK(s.fidelity == "packet");
    // The resolved file reads back the same.
    const Scenario again = ParseScenario(ResolvedYaml(s), "c.resolved.yaml");
    CHECK(again.workloads[1].hosts == b.hosts);
    CHECK(again.workloads[1].job == "gather");
    CHECK(again.workloads[0].op == "all-reduce");
    CHECK(ResolvedYaml(again) == ResolvedYaml(s));
}

TEST_CASE("collective mistakes: FILE:LINE:COL and the culprit named")
{
    CHECK(ParseErrorOf(Workload("{type: collective, bytes: 6MB, ranks: [h0, h9]}"))
              .find("bad.yaml:5:") == 0);
    CHECK(ParseErrorOf(Workload("{type: collective, bytes: 6MB, ranks: [h0, h9]}")).find("h9") !=
          std::string::npos);
    CHECK(ParseErrorOf(Workload("{type: collective, bytes: 6MB, ranks: [h2]}"))
              .find("bad.yaml:5:43: workload 'collective': a collective needs at least 2 ranks, "
                    "not 1") == 0);
    CHECK(ParseErrorOf(Workload("{type: collective, bytes: 1000, ranks: [h0, h1, h2]}"))
              .find("bad.yaml:5:31: workload 'collective': 1000 bytes do not cut into 3 equal "
                    "pieces") == 0);
    CHECK(ParseErrorOf(Workload("{type: collective, algorithm: halving-doubling, bytes: 6MB}"))
              .find("bad.yaml:5:35: workload 'collective': halving-doubling needs a power of 2 "
                    "of ranks, not 6") == 0);
    CHECK(ParseErrorOf(Workload("{type: collective, op: all-to-all, algorithm: ring, bytes: 6MB}"))
              .find("all-to-all has no ring algorithm") != std::string::npos);
    CHECK(ParseErrorOf(Workload("{type: collective, bytes: 6MB, ranks: [h0, h1, h0]}"))
              .find("bad.yaml:5:52: workload 'collective'.ranks lists h0 twice") == 0);
    CHECK(ParseErrorOf(Workload("{type: collective, op: allreduce, bytes: 6MB}"))
              .find("did you mean 'all-reduce'") != std::string::npos);
    CHECK(
        ParseErrorOf(Workload("{type: collective, op: read, bytes: 6MB}")).find("bad.yaml:5:28:") ==
        0);
    CHECK(ParseErrorOf(Workload("{type: bulk, src: h0, dst: h1, bytes: 1MB, op: all-reduce}"))
              .find("bad.yaml:") == 0);
    CHECK(ParseErrorOf(Workload("{type: collective, bytes: 6MB, job: a b}")).find("one word") !=
          std::string::npos);
    CHECK(ParseErrorOf(Workload("{type: collective, bytes: 6MB, job: x}") +
                       "  - {type: collective, bytes: 6MB, job: x}\n")
              .find("bad.yaml:6:") == 0);
    CHECK(ParseErrorOf(Workload("{type: collective, bytes: 6MB, iterations: 0}"))
              .find("bad.yaml:5:") == 0);
    CHECK(ParseErrorOf(Workload("{type: collective, bytes: 6MB, ranks: [h0, h1], stragglers: {h2: "
                                "1ms}}"))
              .find("bad.yaml:5:70: workload 'collective'.stragglers: 'h2' is not one of the ranks "
                    "(h0, h1)") == 0);
    CHECK(ParseErrorOf(Workload("{type: collective, bytes: 6MB, stragglers: {h2: 5}}"))
              .find("bad.yaml:5:53: workload 'collective'.stragglers.h2 must be a time") == 0);
}

TEST_CASE("a training step: compute and buckets read back; their mistakes refused")
{
    const Scenario s = ParseScenario(
        Workload("{type: collective, bytes: 6MB, compute: 20ms, buckets: 4, iterations: 3}"),
        "t.yaml");
    CHECK(s.workloads[0].computePs == 20'000'000'000);
    CHECK(s.workloads[0].buckets == 4);
    const std::string resolved = ResolvedYaml(s);
    CHECK(ParseScenario(resolved, "r.yaml").workloads[0].computePs == 20'000'000'000);
    CHECK(ResolvedYaml(ParseScenario(resolved, "r.yaml")) == resolved);
    CHECK(ParseErrorOf(Workload("{type: collective, bytes: {from: 6MB, to: 24MB, factor: 2}, "
                                "compute: 1ms}"))
              .find("bad.yaml:5:31: workload 'collective': a training step (compute, buckets) "
                    "has one size") == 0);
    CHECK(ParseErrorOf(Workload("{type: collective, bytes: 6MB, buckets: 7}"))
              .find("bad.yaml:5:45: workload 'collective': 6291456 bytes do not cut into 7 "
                    "equal buckets (they are not padded)") == 0);
    CHECK(ParseErrorOf(Workload("{type: collective, bytes: 6000, buckets: 3}"))
              .find("bad.yaml:5:46: workload 'collective': a bucket of 2000 bytes: 2000 bytes "
                    "do not cut into 6 equal pieces") == 0);
    CHECK(ParseErrorOf(Workload("{type: collective, bytes: 6MB, compute: -1ms}"))
              .find("compute must be a time with a unit") != std::string::npos);
    CHECK(ParseErrorOf(Workload("{type: collective, bytes: 6MB, buckets: 8, iterations: 20000}"))
              .find("bad.yaml:5:45: workload 'collective': 20000 iterations of 8 buckets are "
                    "160000 collectives; a job runs at most 100000") == 0);
    CHECK(ParseErrorOf(Workload("{type: bulk, src: h0, dst: h1, bytes: 6MB, buckets: 2}"))
              .find("unknown key 'buckets' in workload 'bulk'") != std::string::npos);
}

TEST_CASE("fidelity analytical times collectives only")
{
    CHECK(ParseScenario(std::string("fidelity: analytical\n") +
                            Workload("{type: collective, bytes: 6MB}"),
                        "a.yaml")
              .fidelity == "analytical");
    CHECK(ParseErrorOf(std::string("fidelity: analytical\n") +
                       Workload("{type: bulk, src: h0, dst: h1, bytes: 1MB}"))
              .find("bad.yaml:6:5: workload 'bulk': fidelity analytical times collective "
                    "workloads only") == 0);
    CHECK(ParseErrorOf(std::string("fidelity: analytical\n") + kHead)
              .find("bad.yaml:1:11: fidelity analytical times collective workloads, and there is "
                    "none") == 0);
    CHECK(ParseErrorOf(std::string("fidelity: analitical\n") +
                       Workload("{type: collective, bytes: 6MB}"))
              .find("did you mean 'analytical'") != std::string::npos);
}

TEST_CASE("GPU ranks: GPUs that NVLink joins inside each server, refused otherwise at the rank")
{
    const std::string rail = "name: c\nfabric: {type: infiniband}\ntopology: {builder: rail, "
                             "nodes: 2, node: dgx-h100}\nworkloads:\n  - ";
    const Scenario s = ParseScenario(
        rail + "{type: collective, bytes: 6MB, ranks: [h1.gpu0, h1.gpu5, h1.gpu2]}\n", "g.yaml");
    CHECK(s.workloads[0].hosts == std::vector<uint32_t>{1, 1, 1});
    CHECK(s.workloads[0].rankDevices == std::vector<std::string>{"gpu0", "gpu5", "gpu2"});
    CHECK(ResolvedYaml(s).find("ranks: [h1.gpu0, h1.gpu5, h1.gpu2]") != std::string::npos);
    CHECK(ParseScenario(ResolvedYaml(s), "again.yaml").workloads[0].rankDevices ==
          s.workloads[0].rankDevices);
    // Whole servers as ranks, across servers, a GPU that is not there, a host beside GPUs.
    CHECK(ParseErrorOf(rail + "{type: collective, bytes: 8MB}\n")
              .find("bad.yaml:5:5: workload 'collective': with topology.node the ranks are GPUs") ==
          0);
    // Across servers: by server, each server's GPUs in order (the j-th on rail j).
    const Scenario two = ParseScenario(
        rail + "{type: collective, bytes: 8MB, ranks: [h1.gpu3, h0.gpu2, h1.gpu0, h0.gpu1]}\n",
        "two.yaml");
    CHECK(two.workloads[0].RanksByServer() == std::vector<std::vector<uint32_t>>{{2, 0}, {3, 1}});
    CHECK(ParseErrorOf("name: c\ntopology: {builder: star, hosts: 2, node: {nvlink: {gpus: 2, "
                       "links_per_gpu: 1, mesh: [{gpus: [0, 1], links: 1}]}}}\nworkloads:\n  - "
                       "{type: collective, bytes: 8MB, ranks: [h0.gpu0, h1.gpu0]}\n")
              .find("bad.yaml:4:53: workload 'collective': h1.gpu0 is on another server than h0: "
                    "between servers ranks go GPU -> PCIe -> NIC; give the servers a PCIe tree "
                    "with a NIC") == 0);
    // Hierarchical needs as many ranks on each of at least 2 servers.
    CHECK(ParseErrorOf(rail + "{type: collective, algorithm: hierarchical, bytes: 6MB, ranks: "
                              "[h0.gpu0, h0.gpu1, h1.gpu0]}\n")
              .find("bad.yaml:5:35: workload 'collective': hierarchical needs the ranks on at "
                    "least 2 servers, as many on each") == 0);
    CHECK(ParseErrorOf(rail + "{type: collective, algorithm: hierarchical, op: all-gather, "
                              "bytes: 8MB, ranks: [h0.gpu0, h1.gpu0]}\n")
              .find("hierarchical is an all-reduce algorithm; all-gather has ring") !=
          std::string::npos);
    CHECK(ParseErrorOf(rail + "{type: collective, bytes: 8MB, ranks: [h0.gpu0, h0.gpu8]}\n")
              .find("bad.yaml:5:53: workload 'collective': there is no h0.gpu8: a server has "
                    "gpu0..gpu7") == 0);
    CHECK(ParseErrorOf(rail + "{type: collective, bytes: 8MB, ranks: [h0.gpu0, h1]}\n")
              .find("the ranks are all hosts or all GPUs; 'h1' mixes them") != std::string::npos);
    CHECK(ParseErrorOf(rail + "{type: collective, bytes: 8MB, ranks: [h0.nic0, h0.gpu1]}\n")
              .find("a rank is a host or a GPU, not 'h0.nic0'") != std::string::npos);
    CHECK(ParseErrorOf(rail + "{type: collective, bytes: 8MB, ranks: [h0.gpu1, h0.gpu1]}\n")
              .find("lists h0.gpu1 twice") != std::string::npos);
    // dgx-1's hybrid cube mesh: gpu0 and gpu5 share no NVLink (docs/nvlink.md); its PCIe
    // tree carries them. A server of NVLink alone cannot.
    CHECK(ParseScenario("name: c\ntopology: {builder: node, node: dgx-1}\nworkloads:\n  - "
                        "{type: collective, bytes: 8MB, ranks: [h0.gpu0, h0.gpu5]}\n",
                        "d.yaml")
              .workloads[0]
              .rankDevices.size() == 2);
    CHECK(ParseErrorOf(
              "name: c\ntopology: {builder: node, node: {nvlink: {gpus: 4, "
              "mesh: [{gpus: [0, 1], links: 1}, {gpus: [1, 2], links: 1}]}}}\nworkloads:\n  - "
              "{type: collective, bytes: 8MB, ranks: [h0.gpu0, h0.gpu2]}\n")
              .find("NVLink does not join h0.gpu0 and h0.gpu2, and the server has no PCIe tree "
                    "to carry them") != std::string::npos);
    // pcie-8gpu has no NVLink: its PCIe tree joins the GPUs.
    CHECK(ParseScenario("name: c\ntopology: {builder: node, node: pcie-8gpu}\nworkloads:\n  - "
                        "{type: collective, bytes: 8MB, ranks: [h0.gpu0, h0.gpu5]}\n",
                        "p.yaml")
              .workloads[0]
              .rankDevices.size() == 2);
    // send-recv is between two ranks.
    CHECK(ParseErrorOf(Workload("{type: collective, op: send-recv, bytes: 6MB, ranks: [h0, h1, "
                                "h2]}"))
              .find("send-recv is between 2 ranks (the first sends), not 3") != std::string::npos);
    // GPU ranks without servers.
    CHECK(ParseErrorOf(Workload("{type: collective, bytes: 6MB, ranks: [h0.gpu0, h1.gpu0]}"))
              .find("GPU ranks need servers (topology.node)") != std::string::npos);
}

TEST_CASE("nvls: GPUs of one server whose NVSwitches sum; refused elsewhere at the algorithm")
{
    const auto node = [](const std::string& preset, const std::string& ranks) {
        return "name: c\ntopology: {builder: node, node: " + preset +
               "}\nworkloads:\n  - {type: collective, algorithm: nvls, bytes: 8MB, ranks: " +
               ranks + "}\n";
    };
    const Scenario s =
        ParseScenario(node("dgx-h100", "[h0.gpu0, h0.gpu1, h0.gpu2, h0.gpu3]"), "n.yaml");
    CHECK(s.workloads[0].algorithm == "nvls");
    CHECK(ResolvedYaml(s).find("algorithm: nvls") != std::string::npos);
    // A server without NVSwitch: dgx-1 joins its GPUs directly; dgx-a100's are gen2.
    CHECK(ParseErrorOf(node("dgx-1", "[h0.gpu0, h0.gpu1]"))
              .find("bad.yaml:4:35: workload 'collective'.algorithm nvls: dgx-1 has no NVSwitch "
                    "(its GPUs' NVLinks join them directly); NVLS sums in NVSwitches") == 0);
    CHECK(ParseErrorOf(node("dgx-a100", "[h0.gpu0, h0.gpu1]"))
              .find("bad.yaml:4:35: workload 'collective'.algorithm nvls: dgx-a100's NVSwitches "
                    "are gen2; NVLS needs gen3 or later") == 0);
    CHECK(ParseErrorOf(node("pcie-8gpu", "[h0.gpu0, h0.gpu1]"))
              .find("bad.yaml:4:35: workload 'collective'.algorithm nvls: pcie-8gpu has no "
                    "NVSwitch (no NVLink)") == 0);
    // Hosts as ranks, and GPUs of several servers.
    CHECK(ParseErrorOf(Workload("{type: collective, algorithm: nvls, bytes: 6MB}"))
              .find("bad.yaml:5:35: workload 'collective'.algorithm nvls: NVLS sums in a "
                    "server's NVSwitches; the ranks are hosts") == 0);
    CHECK(ParseErrorOf("name: c\nfabric: {type: infiniband}\ntopology: {builder: rail, nodes: 2, "
                       "node: dgx-h100}\nworkloads:\n  - {type: collective, algorithm: nvls, "
                       "bytes: 8MB, ranks: [h0.gpu0, h1.gpu0]}\n")
              .find("the ranks are on h0 and h1; NVLS across servers") != std::string::npos);
    // Operations NVLS does not have.
    CHECK(ParseErrorOf("name: c\ntopology: {builder: node, node: dgx-h100}\nworkloads:\n  - "
                       "{type: collective, op: broadcast, algorithm: nvls, bytes: 8MB, ranks: "
                       "[h0.gpu0, h0.gpu1]}\n")
              .find("broadcast has no nvls algorithm") != std::string::npos);
}
