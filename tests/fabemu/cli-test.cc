#include "emulator/fabemu/cli.h"
#include "emulator/fabemu/exit-codes.h"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

using namespace fabemu;

namespace
{
struct Run
{
    int code;
    std::string out;
    std::string err;
};

Run
Fabemu(std::vector<std::string> args)
{
    std::ostringstream out;
    std::ostringstream err;
    const int code = RunFabemu(args, out, err);
    return {code, out.str(), err.str()};
}
} // namespace

TEST_CASE("--help lists the subcommands and the exit codes")
{
    const auto r = Fabemu({"--help"});
    CHECK(r.code == kExitOk);
    CHECK(r.out.find("doctor") != std::string::npos);
    CHECK(r.out.find("Exit codes") != std::string::npos);
}

TEST_CASE("--version names fabemu's and ns-3's versions")
{
    const auto r = Fabemu({"--version"});
    CHECK(r.code == kExitOk);
    CHECK(r.out.find(std::string("fabemu ") + Version()) == 0);
    CHECK(r.out.find("ns-3 3.37") != std::string::npos);
}

TEST_CASE("an unknown subcommand exits 2 and names it")
{
    const auto r = Fabemu({"frobnicate"});
    CHECK(r.code == kExitBadInput);
    CHECK(r.err.find("unknown subcommand 'frobnicate'") != std::string::npos);
}

TEST_CASE("an unknown option and a missing subcommand exit 2")
{
    CHECK(Fabemu({"--bogus"}).code == kExitBadInput);
    CHECK(Fabemu({}).code == kExitBadInput);
}

TEST_CASE("a negative --seed is refused as written, not wrapped to a huge seed")
{
    const auto r = Fabemu({"run", FABEMU_SOURCE_DIR "/scenarios/roce-incast-pfc.yaml", "--seed",
                           "-5", "--out", "/nonexistent/never"});
    CHECK(r.code == kExitBadInput);
    CHECK(r.err.find("--seed") != std::string::npos);
    CHECK(r.err.find("-5") != std::string::npos);
    CHECK(r.err.find("18446744073709551611") == std::string::npos);
}

TEST_CASE("doctor reports the host's Soft-RoCE support with a reason")
{
    const auto r = Fabemu({"doctor"});
    CHECK(r.code == kExitOk);
    CHECK(r.out.find("host Soft-RoCE") != std::string::npos);
    CHECK(r.out.find("endpoints run as") != std::string::npos);
}

namespace
{
std::string
ScratchDir(const char* name)
{
    return (std::filesystem::temp_directory_path() /
            (std::string("fabemu-cli-") + name + "-" + std::to_string(getpid())))
        .string();
}
} // namespace

TEST_CASE(
    "demo runs through the normal path: the results folder of fabemu run, figures that add up")
{
    const std::string out = ScratchDir("demo");
    const auto r = Fabemu(
        {"demo", "--senders", "8", "--bytes", "1000000", "--cc", "none", "--out", out, "--quiet"});
    REQUIRE(r.code == kExitOk);
    CHECK(r.out.empty());
    const std::filesystem::path dir(out);
    for (const char* f : {"summary.json", "fct.txt", "pfc.csv", "pfc.txt", "queue.csv", "h0.pcap",
                          "report.md", "scenario.resolved.yaml", ".fabemu-results"})
    {
        CAPTURE(f);
        CHECK(std::filesystem::exists(dir / f));
    }
    std::ifstream in(dir / "summary.json");
    const auto s = nlohmann::json::parse(in);
    CHECK(s["scenario"] == "demo");
    CHECK(s["fabric"] == "roce");
    CHECK(s["totals"]["bytes_delivered"] == 8000000);
    CHECK(s["totals"]["drops"] == 0);
    CHECK(s["totals"]["pfc_pause_frames"].get<uint64_t>() > 0); // 8:1 at line rate, no CC
    CHECK(s["totals"]["ecn_marks"].get<uint64_t>() > 0);
    CHECK(s["flow_stats"]["completed"] == 8);
    CHECK(s["totals"]["cnps"] == 0); // cc none: no notification point, however many marks
    CHECK(s["flows"][0]["workload"] == "incast");
    CHECK(s["flows"][0]["ideal_fct_s"].dump().size() < 14); // picoseconds, not float noise
    std::ifstream fct(dir / "fct.txt");
    int lines = 0;
    for (std::string line; std::getline(fct, line);)
    {
        ++lines;
    }
    CHECK(lines == 8);
    // The resolved scenario loads back and runs as any scenario file does.
    const auto again = Fabemu(
        {"run", (dir / "scenario.resolved.yaml").string(), "--out", out + "-again", "--quiet"});
    CHECK(again.code == kExitOk);
    std::ifstream in2(std::filesystem::path(out + "-again") / "summary.json");
    const auto s2 = nlohmann::json::parse(in2);
    CHECK(s2["totals"] == s["totals"]);
    // Nothing is left beside the results folder.
    for (const auto& e : std::filesystem::directory_iterator(dir.parent_path()))
    {
        CHECK(e.path().filename().string().find(".fabemu-cli-demo-" + std::to_string(getpid()) +
                                                ".tmp") == std::string::npos);
    }
    std::filesystem::remove_all(out);
    std::filesystem::remove_all(out + "-again");
}

TEST_CASE("demo rejects bad options with exit 2 and writes nothing")
{
    const std::string out = ScratchDir("bad");
    for (const auto& args :
         std::vector<std::vector<std::string>>{{"demo", "--senders", "0", "--out", out},
                                               {"demo", "--cc", "timely", "--out", out},
                                               {"demo", "--rate", "fast", "--out", out},
                                               {"demo", "--senders", "many", "--out", out},
                                               {"demo", "--bytes", "0", "--out", out},
                                               {"demo", "--colour", "blue"}})
    {
        const auto r = Fabemu(args);
        CAPTURE(args[1]);
        CHECK(r.code == kExitBadInput);
        CHECK_FALSE(r.err.empty());
        CHECK_FALSE(std::filesystem::exists(out));
    }
}

TEST_CASE("list --attributes: every model's attributes; a TYPE alone; a typo's did-you-mean")
{
    const auto all = Fabemu({"list", "--attributes"});
    REQUIRE(all.code == kExitOk);
    // One attribute of each model, as "  Name (type) initial value", in the full list and
    // in the model's own.
    const std::vector<std::pair<std::string, std::string>> models{
        {"ns3::RoceNic", "Priority"},
        {"ns3::RoceSwitch", "EcmpSeed"},
        {"ns3::SwitchMmu", "Kmin"},
        {"ns3::DcqcnRateControl", "G"},
        {"ns3::RdmaQueuePair", "Mtu"},
        {"ns3::IbPort", "DataRate"},
        {"ns3::IbSwitch", "SwitchingLatency"},
        {"ns3::IwarpQp", "Markers"},
        {"ns3::PcieLink", "Generation"},
        {"ns3::PciePort", "MaxPayloadSize"}};
    for (const auto& [type, attribute] : models)
    {
        CAPTURE(type);
        CHECK(all.out.find(type + "\n") != std::string::npos);
        const auto own = Fabemu({"list", "--attributes", type});
        CHECK(own.code == kExitOk);
        CHECK(own.out.find("  " + attribute + " (") != std::string::npos);
        CHECK(all.out.find(own.out) != std::string::npos);
    }
    // ns-3's own types are not ours.
    CHECK(all.out.find("ns3::Node\n") == std::string::npos);

    const auto one = Fabemu({"list", "--attributes", "ns3::SwitchMmu"});
    REQUIRE(one.code == kExitOk);
    CHECK(one.out.rfind("ns3::SwitchMmu\n", 0) == 0);
    CHECK(one.out.find("  Kmin (") != std::string::npos);
    CHECK(one.out.find("ns3::RoceSwitch") == std::string::npos);

    const auto typo = Fabemu({"list", "--attributes", "ns3::SwitchMMU"});
    CHECK(typo.code == kExitBadInput);
    CHECK(typo.err.find("did you mean 'ns3::SwitchMmu'?") != std::string::npos);
}
