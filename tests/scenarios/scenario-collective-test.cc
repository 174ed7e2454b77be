// The collective workload and fidelity as the scenario file states them: defaults
// resolved, the resolved file read back the same, and each mistake refused at its
// FILE:LINE:COL with the culprit named.
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
ErrorOf(const std::string& text)
{
    try
    {
        ParseScenario(text, "bad.yaml");
    }
    catch (const ScenarioError& e)
    {
        return e.what();
    }
    FAIL("parsed without an error:\n" << text);
    return "";
}

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
    CHECK(
        ErrorOf(Workload("{type: collective, bytes: 6MB, ranks: [h0, h9]}")).find("bad.yaml:5:") ==
        0);
    CHECK(ErrorOf(Workload("{type: collective, bytes: 6MB, ranks: [h0, h9]}")).find("h9") !=
          std::string::npos);
    CHECK(ErrorOf(Workload("{type: collective, bytes: 6MB, ranks: [h2]}"))
              .find("bad.yaml:5:43: workload 'collective': a collective needs at least 2 ranks, "
                    "not 1") == 0);
    CHECK(ErrorOf(Workload("{type: collective, bytes: 1000, ranks: [h0, h1, h2]}"))
              .find("bad.yaml:5:31: workload 'collective': 1000 bytes do not cut into 3 equal "
                    "pieces") == 0);
    CHECK(ErrorOf(Workload("{type: collective, algorithm: halving-doubling, bytes: 6MB}"))
              .find("bad.yaml:5:35: workload 'collective': halving-doubling needs a power of 2 "
                    "of ranks, not 6") == 0);
    CHECK(ErrorOf(Workload("{type: collective, op: all-to-all, algorithm: ring, bytes: 6MB}"))
              .find("all-to-all has no ring algorithm") != std::string::npos);
    CHECK(ErrorOf(Workload("{type: collective, bytes: 6MB, ranks: [h0, h1, h0]}"))
              .find("bad.yaml:5:52: workload 'collective'.ranks lists h0 twice") == 0);
    CHECK(ErrorOf(Workload("{type: collective, op: allreduce, bytes: 6MB}"))
              .find("did you mean 'all-reduce'") != std::string::npos);
    CHECK(ErrorOf(Workload("{type: collective, op: read, bytes: 6MB}")).find("bad.yaml:5:28:") ==
          0);
    CHECK(ErrorOf(Workload("{type: bulk, src: h0, dst: h1, bytes: 1MB, op: all-reduce}"))
              .find("bad.yaml:") == 0);
    CHECK(ErrorOf(Workload("{type: collective, bytes: 6MB, job: a b}")).find("one word") !=
          std::string::npos);
    CHECK(ErrorOf(Workload("{type: collective, bytes: 6MB, job: x}") +
                  "  - {type: collective, bytes: 6MB, job: x}\n")
              .find("bad.yaml:6:") == 0);
    CHECK(ErrorOf(Workload("{type: collective, bytes: 6MB, iterations: 0}")).find("bad.yaml:5:") ==
          0);
}

TEST_CASE("fidelity analytical times collectives only")
{
    CHECK(ParseScenario(std::string("fidelity: analytical\n") +
                            Workload("{type: collective, bytes: 6MB}"),
                        "a.yaml")
              .fidelity == "analytical");
    CHECK(ErrorOf(std::string("fidelity: analytical\n") +
                  Workload("{type: bulk, src: h0, dst: h1, bytes: 1MB}"))
              .find("bad.yaml:6:5: workload 'bulk': fidelity analytical times collective "
                    "workloads only") == 0);
    CHECK(
        ErrorOf(std::string("fidelity: analitical\n") + Workload("{type: collective, bytes: 6MB}"))
            .find("did you mean 'analytical'") != std::string::npos);
    // Ranks are hosts of the network; GPU ranks inside servers are not built yet.
    CHECK(ErrorOf("name: c\nfabric: {type: infiniband}\ntopology: {builder: rail, nodes: 2, "
                  "node: dgx-h100}\nworkloads:\n  - {type: collective, bytes: 8MB}\n")
              .find("not built yet") != std::string::npos);
}
