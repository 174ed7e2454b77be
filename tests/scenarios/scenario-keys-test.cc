// The scenario keys are data: the parser, --set, `fabemu list` and docs/scenarios.md all
// come from the same tables, and these tests fail when any of them disagree.
#include "emulator/fabemu/run.h"
#include "scenarios/src/scenario.h"

#include <doctest/doctest.h>

#include <fstream>
#include <sstream>

using namespace fabemu;

namespace
{

/// The --set overrides that make the key \p k apply (its fabric type, builder or workload type).
std::vector<std::string>
ContextFor(const KeyHelp& k)
{
    const std::string first = k.appliesTo.substr(0, k.appliesTo.find(','));
    if (k.key.rfind("fabric.", 0) == 0 && !first.empty())
    {
        return {"fabric.type=" + first};
    }
    if (k.key.rfind("topology.", 0) == 0 && first == "rail")
    {
        return {"topology.builder=rail", "topology.node=dgx-h100"}; // rails join servers' NICs
    }
    if (k.key.rfind("topology.", 0) == 0 && !first.empty())
    {
        return {"topology.builder=" + first};
    }
    if (k.key == "fidelity")
    {
        return {"workloads=[{type: collective, bytes: 2MB}]"}; // analytical times collectives
    }
    if (k.key == "record.pcie_trace")
    {
        return {"topology.node={pcie: gpudirect}"}; // a trace needs a tree to trace
    }
    return {};
}

std::string
DocsKeyTable()
{
    std::ifstream in(std::string(FABEMU_SOURCE_DIR) + "/docs/scenarios.md");
    std::stringstream text;
    text << in.rdbuf();
    const std::string doc = text.str();
    const std::string begin =
        "<!-- keys: begin (generated from the key tables; the keys test checks it) -->\n";
    const auto a = doc.find(begin);
    const auto b = doc.find("<!-- keys: end -->");
    REQUIRE(a != std::string::npos);
    REQUIRE(b != std::string::npos);
    return doc.substr(a + begin.size(), b - a - begin.size());
}

} // namespace

TEST_CASE("docs/scenarios.md's key table is the key table the parser reads")
{
    const std::string docs = DocsKeyTable();
    const std::string table = KeysMarkdown();
    // On a mismatch, paste the expected text between the markers.
    CHECK_MESSAGE(docs == table, "docs/scenarios.md key table should be:\n" << table);
    for (const auto& k : Keys())
    {
        CHECK_MESSAGE(docs.find("| `" + k.key + "` |") != std::string::npos, k.key);
    }
}

TEST_CASE("fabemu list names every key, fabric type, builder and workload type of the tables")
{
    std::ostringstream out;
    CHECK(ListScenarioKeys(out) == 0);
    const std::string list = out.str();
    for (const auto& k : Keys())
    {
        CHECK_MESSAGE(list.find("  " + k.key + " ") != std::string::npos, k.key);
    }
    for (const auto* rows : {&FabricTypeHelp(), &BuilderHelp(), &WorkloadTypes()})
    {
        for (const auto& r : *rows)
        {
            CHECK_MESSAGE(list.find("  " + r.key + " ") != std::string::npos, r.key);
        }
    }
    CHECK(list.find("ring") != std::string::npos);
    CHECK(list.find("not built yet") == std::string::npos);
    CHECK(list.find("simulation only") == std::string::npos);
}

TEST_CASE("every key path of the tables is settable with --set and reads back")
{
    const std::string base = "name: t\n";
    int tried = 0;
    for (const auto& k : Keys())
    {
        if (k.example.empty() || k.key.rfind("workloads.", 0) == 0 ||
            k.key.rfind("endpoints.", 0) == 0 || k.key.rfind("faults.", 0) == 0)
        {
            continue; // lists and host maps: below
        }
        CAPTURE(k.key);
        auto set = ContextFor(k);
        set.push_back(k.key + "=" + k.example);
        const Scenario s = ParseScenario(base, "t.yaml", set);
        // The value is in the resolved file, which loads back to the same scenario.
        const std::string resolved = ResolvedYaml(s);
        CHECK(ResolvedYaml(ParseScenario(resolved, "r.yaml")) == resolved);
        ++tried;
    }
    CHECK(tried > 25);
}

TEST_CASE("--set reaches nested keys, list items and host maps")
{
    const std::string base = "name: t\ntopology: {builder: star, hosts: 4}\n"
                             "workloads:\n  - {type: bulk, src: h0, dst: h1, bytes: 1MB}\n"
                             "  - {type: incast, dst: h0, srcs: all, bytes: 1MB}\n";
    const Scenario s = ParseScenario(base, "t.yaml",
                                     {"fabric.ecn.kmax=300KB", "topology.link.rate=25Gbps",
                                      "topology.link.delay=2us", "workloads.0.bytes=2MB",
                                      "workloads.1.srcs=[h2, h3]", "workloads.1.op=read",
                                      "record.pcap=[h0, h1]", "expect.totals.drops=0"});
    CHECK(s.fabric.kmax == 300 * 1024);
    CHECK(s.topology.link.delayPs == 2'000'000);
    CHECK(s.workloads[0].bytes == 2u << 20);
    CHECK(s.workloads[1].hosts == std::vector<uint32_t>{2, 3});
    CHECK(s.workloads[1].op == "read");
    CHECK(s.record.pcap == std::vector<uint32_t>{0, 1});
    REQUIRE(s.expect.size() == 1);
    CHECK(s.expect[0].metric == "totals.drops");
    const std::string vms = "name: t\ntopology: {builder: star, hosts: 4}\nendpoints: {h3: {}}\n"
                            "workloads:\n  - {type: command, on: h3, run: ip a}\n";
    const Scenario vm = ParseScenario(
        vms, "t.yaml",
        {"endpoints.h3.kind=netns", "endpoints.h3.device=none", "workloads.0.run=ip r"});
    CHECK(vm.workloads[0].run == "ip r");
    CHECK(vm.endpoints[0].kind == "netns");
    // An override's mistake names itself, with no line.
    try
    {
        ParseScenario(base, "t.yaml", {"workloads.5.bytes=1MB"});
        FAIL("parsed");
    }
    catch (const ScenarioError& e)
    {
        CHECK(std::string(e.what()).find("the list has no item '5'") != std::string::npos);
    }
    try
    {
        ParseScenario(base, "t.yaml", {"workloads.0.bytes=lots"});
        FAIL("parsed");
    }
    catch (const ScenarioError& e)
    {
        CHECK(std::string(e.what()) ==
              "t.yaml: workload 'bulk'.bytes must be a size such as 1500, 64KB or 1MB, not 'lots'");
    }
}

TEST_CASE("a key of another fabric type is refused with why, from the tables")
{
    try
    {
        ParseScenario("name: t\nfabric: {type: infiniband, buffer: 1MB}\n", "t.yaml");
        FAIL("parsed");
    }
    catch (const ScenarioError& e)
    {
        CHECK(std::string(e.what()).find(
                  "fabric.buffer applies to roce and iwarp, not infiniband") != std::string::npos);
    }
}
