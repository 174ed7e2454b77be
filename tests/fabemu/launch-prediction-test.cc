// Real against model (issue 20): which launches get a prediction, what they measured,
// the model's algorithm for Gloo's, and the simulated scenario that stands for them.
#include "emulator/fabemu/launch-prediction.h"
#include "scenarios/src/scenario.h"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

using namespace fabemu;
using nlohmann::json;

namespace
{

const char* kScenario = R"(name: lp
fabric: {type: roce, pfc: true}
topology: {builder: star, hosts: 4}
endpoints: {h0: {}, h1: {}, h2: {}, h3: {}}
workloads:
  - {type: command, on: h0, run: "ib_write_bw"}
  - {type: launch, on: [h1, h0], run: "fabemu-allreduce --algorithm ring-chunked"}
  - {type: launch, on: [h2, h3], run: "fabemu-allreduce", background: true}
  - {type: launch, on: [h0, h3], run: "fabemu-allreduce --algorithm halving-doubling"}
  - {type: launch, on: [h1, h2], run: "fabemu-allreduce --algorithm ring-chunked"}
)";

/// One rank's record and output as fabemu-allreduce leaves them.
void
Rank(json& commands, std::vector<std::string>& outputs, const std::string& algorithm, double time,
     double busbw, int exitCode = 0, const std::string& transport = "ibverbs")
{
    commands.push_back({{"exit_code", exitCode},
                        {"metrics",
                         {{"time_s", time},
                          {"busbw_gbs", busbw},
                          {"size_bytes", 8388608.0},
                          {"correct", exitCode == 0}}}});
    outputs.push_back("# fabemu-allreduce: allreduce, algorithm " + algorithm +
                      ", 2 ranks, rank 0, transport " + transport + " (...)\n");
}

} // namespace

TEST_CASE("each launch that succeeded is planned, with its slowest rank and the model's algorithm")
{
    const Scenario s = ParseScenario(kScenario, "lp.yaml");
    json commands = json::array();
    std::vector<std::string> outputs;
    commands.push_back({{"exit_code", 0}, {"metrics", json::object()}}); // ib_write_bw
    outputs.push_back("");
    Rank(commands, outputs, "ring-chunked", 2.0, 0.5);
    Rank(commands, outputs, "ring-chunked", 2.5, 0.4); // the slower rank sets the figures
    Rank(commands, outputs, "ring", 9.0, 0.1);
    Rank(commands, outputs, "ring", 9.5, 0.1);
    Rank(commands, outputs, "halving-doubling", 1.0, 1.0);
    Rank(commands, outputs, "halving-doubling", 1.0, 1.0, 1); // this launch failed
    const auto plans = PlanLaunchPredictions(s, commands, outputs);
    REQUIRE(plans.size() == 2); // the failed launch has nothing to compare
    CHECK(plans[0].workload == 1);
    CHECK(plans[0].hosts == std::vector<uint32_t>{1, 0});
    CHECK(plans[0].op == "all-reduce");
    CHECK(plans[0].modelAlgorithm == "ring");
    CHECK(plans[0].measuredTimeS == 2.5);
    CHECK(plans[0].measuredBusBwGbs == 0.4);
    CHECK(plans[0].bytes == 8388608);
    CHECK(plans[0].why.empty());
    CHECK(plans[1].workload == 2);
    CHECK(plans[1].modelAlgorithm.empty()); // Gloo's ring has no model
    CHECK(plans[1].why.find("store and forward") != std::string::npos);

    // Gloo over TCP has no RDMA model.
    json tcp = json::array();
    std::vector<std::string> tcpOut;
    tcp.push_back({{"exit_code", 0}, {"metrics", json::object()}});
    tcpOut.push_back("");
    Rank(tcp, tcpOut, "ring-chunked", 1.0, 1.0, 0, "tcp");
    Rank(tcp, tcpOut, "ring-chunked", 1.0, 1.0, 0, "tcp");
    const auto overTcp = PlanLaunchPredictions(s, tcp, tcpOut);
    REQUIRE(overTcp.size() == 1);
    CHECK(overTcp[0].modelAlgorithm.empty());
    CHECK(overTcp[0].why.find("over tcp") != std::string::npos);

    // Short outputs (the run stopped early) plan nothing past them.
    CHECK(PlanLaunchPredictions(s, commands, {outputs.begin(), outputs.begin() + 2}).empty());
}

TEST_CASE("the prediction's scenario: the same fabric and topology, the collectives, no VMs")
{
    const Scenario s = ParseScenario(kScenario, "lp.yaml");
    LaunchPrediction a;
    a.workload = 1;
    a.hosts = {1, 0};
    a.op = "all-reduce";
    a.modelAlgorithm = "ring";
    a.bytes = 1 << 20;
    LaunchPrediction b = a;
    b.workload = 3;
    b.hosts = {0, 3};
    b.modelAlgorithm = "halving-doubling";
    const Scenario p = PredictionScenario(s, {a, b});
    CHECK_FALSE(p.HasVms());
    CHECK(p.fabric.type == "roce");
    CHECK(p.topology.HostCount() == 4);
    REQUIRE(p.workloads.size() == 2);
    CHECK(p.workloads[0].type == "collective");
    CHECK(p.workloads[0].job == "w1");
    CHECK(p.workloads[0].algorithm == "ring");
    CHECK(p.workloads[1].job == "w3");
    CHECK(p.expect.empty());

    // A launch in the background ran beside every launch after it: those are simulated
    // together; the launch before it ran alone.
    LaunchPrediction c = a;
    c.workload = 2; // background in kScenario
    CHECK(PredictionGroups(s, {a, b}).size() == 2);
    const auto groups = PredictionGroups(s, {a, c, b});
    REQUIRE(groups.size() == 2);
    CHECK(groups[0].size() == 1);
    CHECK(groups[0][0].workload == 1);
    REQUIRE(groups[1].size() == 2);
    CHECK(groups[1][0].workload == 2);
    CHECK(groups[1][1].workload == 3);
    // Two foreground launches after one in the background: each ran beside it, not
    // beside each other.
    LaunchPrediction d = a;
    d.workload = 4;
    const auto pairs = PredictionGroups(s, {c, b, d});
    REQUIRE(pairs.size() == 2);
    CHECK(pairs[0].size() == 2);
    CHECK(pairs[1].size() == 2);
    CHECK(pairs[1][0].workload == 2);
    CHECK(pairs[1][1].workload == 4);
    // A background launch with none after it is a group of its own.
    REQUIRE(PredictionGroups(s, {c}).size() == 1);
    LaunchPrediction none = a;
    none.why = "no model";
    CHECK(PredictionGroups(s, {none}).empty());
}

TEST_CASE("a prediction row: the ratio when the model completed, the reason when not")
{
    LaunchPrediction p;
    p.workload = 1;
    p.hosts = {0, 1};
    p.op = "all-reduce";
    p.glooAlgorithm = "ring-chunked";
    p.modelAlgorithm = "ring";
    p.measuredTimeS = 3.0;
    const json ok = PredictionJson(
        p,
        {{"state", "completed"}, {"time_s", 2.0}, {"busbw_gbs", 0.1}, {"analytical_time_s", 1.5}});
    CHECK(ok["measured_over_model"] == doctest::Approx(1.5));
    CHECK(ok["ranks"] == json{"h0", "h1"});
    CHECK_FALSE(ok.contains("why_no_model"));
    const json failed = PredictionJson(
        p, {{"state", "failed"}, {"reason", "retry count exceeded"}, {"time_s", nullptr}});
    CHECK(failed["why_no_model"].get<std::string>().find("retry count exceeded") !=
          std::string::npos);
    CHECK_FALSE(failed.contains("measured_over_model"));
    CHECK(PredictionJson(p, json())["why_no_model"] == "the simulation gave no result");
}
