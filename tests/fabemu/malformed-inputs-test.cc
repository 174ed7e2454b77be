// Malformed input on every path a user reaches from the command line (issue 23,
// validation 3): scenario files, the files they name (flow-size CDFs), --set values,
// flags of run, sweep, report and status. Each is refused with its own message naming
// the culprit and exit 2 (a mistake) or 1 (a run-time failure), in process, so an abort
// or an uncaught exception would end this test; nothing is left half-written.
// Below, the other side's inputs: the guest agent's lines both ways (a malformed one is an
// error value, never an exception from deep inside the reader), requests to the status
// socket, and stray files where `fabemu status` looks for sockets. (Frames from the taps
// have tests of their own: edge-frame-filter; fuzz/ fuzzes all of these, docs/fuzzing.md.)
#include "../run-in-process.h"
#include "../scratch-dir.h"
#include "containers/agent/agent-protocol.h"
#include "emulator/fabemu/exit-codes.h"
#include "emulator/fabemu/status-server.h"

#include <doctest/doctest.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <string>
#include <unistd.h>
#include <vector>

using namespace fabemu;
namespace fs = std::filesystem;

namespace
{

/// A scenario that is right, for cases that break something else.
const std::string kGood = "name: b\ntopology: {builder: star, hosts: 3}\nworkloads:\n"
                          "  - {type: bulk, src: h0, dst: h1, bytes: 1MB}\n";
/// The same with a Poisson workload whose CDF is c.txt beside it.
const std::string kPoisson = "name: b\ntopology: {builder: star, hosts: 3}\nduration: 1ms\n"
                             "workloads:\n  - {type: poisson, load: 0.5, cdf: c.txt}\n";

struct Case
{
    const char* what;
    std::map<std::string, std::string> files; ///< written into the folder first
    std::vector<std::string> args;            ///< "{dir}" stands for the folder
    int code;
    std::string says; ///< in the error output; "{dir}" stands for the folder
};

std::string
Expand(std::string s, const fs::path& dir)
{
    for (size_t at; (at = s.find("{dir}")) != std::string::npos;)
    {
        s.replace(at, 5, dir.string());
    }
    return s;
}

std::vector<Case>
Cases()
{
    const std::vector<std::string> run{"run", "{dir}/s.yaml", "--out", "{dir}/out"};
    auto scenario = [&](const char* what, const std::string& text, const std::string& says) {
        return Case{what, {{"s.yaml", text}}, run, kExitBadInput, "{dir}/s.yaml:" + says};
    };
    auto withCdf = [&](const char* what, const std::string& cdf, const std::string& says) {
        return Case{what,
                    {{"s.yaml", kPoisson}, {"c.txt", cdf}},
                    run,
                    kExitBadInput,
                    "{dir}/s.yaml:5:32: workloads.0.cdf: " + says};
    };
    auto withSet = [&](const char* what, const std::string& set, const std::string& says) {
        std::vector<std::string> args = run;
        args.insert(args.end(), {"--set", set});
        return Case{what, {{"s.yaml", kGood}}, args, kExitBadInput, says};
    };
    auto flags = [&](const char* what, std::vector<std::string> args, const std::string& says) {
        return Case{what, {{"s.yaml", kGood}}, std::move(args), kExitBadInput, says};
    };
    std::string deep = "name: b\nx: ";
    deep += std::string(600, '[') + std::string(600, ']') + "\n";
    return {
        // The scenario file itself.
        scenario("an empty file", "", "1:1: the scenario is empty; it needs at least 'name:'"),
        scenario("a tab for indentation", "name: x\n\tfoo: 1\n",
                 "2:1: not valid YAML: illegal tab when looking for indentation"),
        scenario("a list, not a map", "- a\n- b\n", "1:1: a scenario is a map of keys"),
        scenario("binary bytes", std::string("\x00\xff\xfe\x01", 4), "1:"),
        scenario("nesting 600 deep", deep,
                 "2:1204: not valid YAML here: nested too deep (the YAML reader stops at 500 "
                 "levels)"),
        scenario("a misspelt key", "nmae: x\n" + kGood,
                 "1:1: unknown key 'nmae' in the scenario; did you mean 'name'?"),
        scenario("a key given twice", "name: a\n" + kGood, "2:1: key 'name' given twice"),
        scenario("no name", kGood.substr(8), "1:1: 'name:' is required"),
        scenario("a name of 100000 characters",
                 "name: " + std::string(100000, 'a') + "\n" + kGood.substr(8),
                 "1:7: name 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa... "
                 "(100000 bytes)' must be 1..64 letters"),
        scenario("a key of 100000 characters", "name: b\n" + std::string(100000, 'k') + ": 1\n",
                 "2:100001: not valid YAML: illegal map value"),
        scenario("a name that is not ASCII", "name: \"h\xc3\xa9llo\"\n" + kGood.substr(8),
                 "1:7: name 'h\xc3\xa9llo' must be 1..64 letters"),
        scenario("a negative seed", kGood + "seed: -1\n",
                 "5:7: seed must be a whole number, not '-1'"),
        scenario("a duration without a unit we know", kGood + "duration: 10 parsecs\n",
                 "5:11: duration must be a time with a unit"),
        scenario("an unknown fabric", kGood + "fabric: {type: ethernet}\n",
                 "5:16: fabric.type must be one of roce, infiniband, iwarp, not 'ethernet'"),
        scenario("an MTU no fabric has", kGood + "fabric: {type: roce, mtu: 1000}\n",
                 "5:27: fabric.mtu must be 256, 512, 1024, 2048 or 4096, not 1000"),
        scenario("ECN's kmin above kmax",
                 kGood + "fabric: {type: roce, ecn: {kmin: 100KB, kmax: 10KB}}\n",
                 "5:27: fabric.ecn: kmin (102400) is above kmax (10240)"),
        scenario("a probability that is not a number",
                 kGood + "fabric: {type: roce, ecn: {kmin: 2KB, kmax: 16KB, pmax: .nan}}\n",
                 "5:57: fabric.ecn.pmax must be a number, not '.nan'"),
        scenario("no hosts", "name: b\ntopology: {builder: star, hosts: 0}\n",
                 "2:34: topology.hosts must be 2..1024, not 0"),
        scenario("a billion hosts", "name: b\ntopology: {builder: star, hosts: 1000000000}\n",
                 "2:34: topology.hosts must be 2..1024, not 1000000000"),
        scenario("a link rate in words",
                 "name: b\ntopology: {builder: star, hosts: 3, link: {rate: fast}}\n",
                 "2:50: topology.link.rate must be a rate such as 100Gbps"),
        scenario("workloads as a map",
                 "name: b\ntopology: {builder: star, hosts: 3}\nworkloads: {type: bulk}\n",
                 "3:12: workloads must be a list"),
        scenario("a workload type that does not exist",
                 "name: b\ntopology: {builder: star, hosts: 3}\nworkloads:\n  - {type: teleport}\n",
                 "4:12: workload type must be one of bulk"),
        scenario("negative bytes",
                 "name: b\ntopology: {builder: star, hosts: 3}\nworkloads:\n"
                 "  - {type: bulk, src: h0, dst: h1, bytes: -5}\n",
                 "4:43: workload 'bulk'.bytes must be a size such as 1500, 64KB or 1MB, not '-5'"),
        scenario("bytes past 64 bits",
                 "name: b\ntopology: {builder: star, hosts: 3}\nworkloads:\n"
                 "  - {type: bulk, src: h0, dst: h1, bytes: 99999999999999999999999TB}\n",
                 "4:43: workload 'bulk'.bytes must be a size"),
        scenario("a host the topology lacks",
                 "name: b\ntopology: {builder: star, hosts: 3}\nworkloads:\n"
                 "  - {type: bulk, src: h0, dst: h99, bytes: 1MB}\n",
                 "4:32: workload 'bulk'.dst names host 'h99', but the topology has h0..h2"),
        scenario("a load above 1", kPoisson.substr(0, kPoisson.find("load: 0.5")) + "load: 1.5}\n",
                 "5:27: workload 'poisson'.load must be 0.001..1, not 1.5"),
        scenario("an expectation that is no comparison", kGood + "expect:\n  totals.drops: '=>5'\n",
                 "6:17: expect: totals.drops: '=>5' is not a number"),
        scenario("a fault at no time", kGood + "faults:\n  - {at: soon, link: h1, rate: 1Gbps}\n",
                 "6:10: faults.0.at must be a time with a unit"),
        scenario("an endpoint kind that does not exist",
                 kGood + "endpoints:\n  h0: {kind: docker}\n",
                 "6:14: endpoints.h0.kind must be one of vm, netns, not 'docker'"),
        scenario("a pcap of a host the topology lacks", kGood + "record:\n  pcap: [h9]\n",
                 "6:10: record.pcap names host 'h9', but the topology has h0..h2"),
        scenario("on_failure neither continue nor stop", kGood + "on_failure: retry\n",
                 "5:13: on_failure must be one of continue, stop, not 'retry'"),
        scenario("a crash of a simulated host", kGood + "faults:\n  - {host: h1, crash: vm}\n",
                 "6:5: faults.0: crash: vm kills a VM endpoint's QEMU, and h1 is simulated"),
        // The flow-size CDF the scenario names.
        withCdf("an empty CDF", "", "{dir}/c.txt: a CDF needs at least two points"),
        withCdf("a word in a CDF", "0 0\nabc 50\n100000 100\n",
                "{dir}/c.txt:2: want 'size_bytes cumulative_percent'"),
        withCdf("a CDF of binary bytes", std::string("\x00\x01\xff\n", 4),
                "{dir}/c.txt:1: want 'size_bytes cumulative_percent'"),
        withCdf("a CDF going down", "0 0\n50000 60\n10000 100\n",
                "{dir}/c.txt:3: sizes and percents must not decrease"),
        withCdf("a CDF past 100 %", "0 0\n1000 150\n",
                "{dir}/c.txt:2: size must be 0..1e15 bytes and percent in 0..100"),
        withCdf("a CDF that stops short of 100 %", "0 0\n1000 50\n",
                "{dir}/c.txt: a CDF needs at least two points and must end at 100"),
        // Found by fuzzing (docs/fuzzing.md): a mean of 0 bytes made Poisson loop until
        // memory ran out; a size near 2^64 made Sample's cast undefined.
        withCdf("a CDF of empty flows", "0 0\n0 100\n",
                "{dir}/c.txt: the mean flow size is below one byte"),
        withCdf("a CDF with a flow of 2e19 bytes", "0 0\n2e19 100\n",
                "{dir}/c.txt:2: size must be 0..1e15 bytes"),
        scenario("a ring without its switches",
                 "name: b\ntopology: {builder: ring}\nworkloads:\n"
                 "  - {type: bulk, src: h0, dst: h1, bytes: 1MB}\n",
                 "2:11: topology.builder ring needs leaves: its switches (3..256)"),
        Case{"--set of an ns-3 attribute when fabric is not a map",
             {{"s.yaml", kGood + "fabric: roce\n"}},
             {"run", "{dir}/s.yaml", "--out", "{dir}/out", "--set",
              "ns3::RoceSwitch::MaxFrameBytes=4000"},
             kExitBadInput,
             "--set ns3::RoceSwitch::MaxFrameBytes: the file's fabric (and its set) must be a "
             "map"},
        // --set.
        withSet("--set without a value", "fabric.mtu", "--set 'fabric.mtu' is not KEY=VALUE"),
        withSet("--set of a key that does not exist", "fabric.bogus=1",
                "unknown key 'bogus' in fabric"),
        withSet("--set of a word for a number", "fabric.mtu=abc",
                "fabric.mtu must be a whole number, not 'abc'"),
        withSet("--set of an empty time", "duration=", "duration must be a time with a unit"),
        withSet("--set of an ns-3 attribute that does not exist", "ns3::RoceSwitch::Nope=1",
                "ns3::RoceSwitch has no attribute 'Nope'"),
        withSet("--set of a workload the file lacks", "workloads.7.bytes=1MB",
                "the list has no item '7' (0..0)"),
        // Flags and files named on the command line.
        flags("an unknown flag", {"run", "{dir}/s.yaml", "--bogus"},
              "The following argument was not expected: --bogus"),
        flags("--out without its folder", {"run", "{dir}/s.yaml", "--out"},
              "--out: 1 required TEXT missing"),
        flags("a scenario file that is not there", {"run", "{dir}/none.yaml"},
              "{dir}/none.yaml: cannot read the scenario file (No such file or directory)"),
        flags("a folder for a scenario file", {"run", "{dir}"},
              "{dir}: is a folder, not a scenario file"),
        flags("an unknown subcommand", {"frobnicate"}, "unknown subcommand 'frobnicate'"),
        flags("a sweep grid without values",
              {"sweep", "{dir}/s.yaml", "--grid", "fabric.pfc", "--out", "{dir}/sw"},
              "--grid 'fabric.pfc' must be KEY=V1,V2,..."),
        flags("a sweep grid with an empty value",
              {"sweep", "{dir}/s.yaml", "--grid", "fabric.mtu=1024,,2048", "--out", "{dir}/sw"},
              "an empty value (two commas, or one at an end)"),
        flags("seeds in words", {"sweep", "{dir}/s.yaml", "--seeds", "abc", "--out", "{dir}/sw"},
              "Could not convert: --seeds = abc"),
        flags("a count in words", {"emulate", "--count", "abc"},
              "Could not convert: --count = abc"),
        Case{"a report of a folder that holds no results",
             {{"s.yaml", kGood}},
             {"report", "{dir}"},
             kExitBadInput,
             "{dir} is not a results folder (no summary.json)"},
        Case{"the status of an emulation that is not running",
             {},
             {"status", "{dir}/none.status"},
             kExitFailure,
             "{dir}/none.status: No such file or directory"},
    };
}

} // namespace

TEST_CASE("malformed input on every command-line path: its message, exit 2 or 1, nothing written")
{
    const auto cases = Cases();
    CHECK(cases.size() >= 40); // the floor
    size_t n = 0;
    for (const auto& c : cases)
    {
        CAPTURE(c.what);
        const ScratchDir dir("malformed-" + std::to_string(n++));
        for (const auto& [name, text] : c.files)
        {
            std::ofstream(dir / name, std::ios::binary) << text;
        }
        std::vector<std::string> args;
        for (const auto& a : c.args)
        {
            args.push_back(Expand(a, dir));
        }
        const RunOutcome r = FabemuInProcess(args);
        CAPTURE(r.err.substr(0, 400));
        CHECK(r.code == c.code);
        CHECK(r.err.find(Expand(c.says, dir)) != std::string::npos);
        CHECK(r.err.size() < 2000);           // a culprit named, not echoed whole
        CHECK_FALSE(fs::exists(dir / "out")); // refused before anything was written
        CHECK_FALSE(fs::exists(dir / "sw"));
    }
}

TEST_CASE("malformed guest-agent lines, either way, are refused with a reason, not thrown")
{
    // {line, what the reason says}: not JSON, not an object, a field of the wrong type.
    const std::vector<std::pair<std::string, std::string>> events{
        {"garbage", "not JSON"},
        {"{\"event\":\"exit\"", "not JSON"},
        {"42", "not a JSON object but number"},
        {"[\"ready\"]", "not a JSON object but array"},
        {"{\"event\":5}", "'event' must be text, not number"},
        {"{\"event\":\"exit\",\"id\":\"1\"}", "'id' must be an integer"},
        {"{\"event\":\"exit\",\"id\":-1}", "'id' must be an integer in 0.."},
        {"{\"event\":\"exit\",\"id\":1,\"code\":1e300}", "'code' must be an integer"},
        {"{\"event\":\"exit\",\"id\":1,\"code\":4294967296}", "'code' must be an integer"},
        {"{\"event\":\"exit\",\"id\":1,\"timed_out\":\"yes\"}", "'timed_out' must be true"},
        {"{\"event\":\"stdout\",\"id\":1,\"data\":[1]}", "'data' must be text"},
        {"{\"event\":\"ready\",\"init\":0}", "'init' must be text"},
        {"{\"event\":\"ready\",\"uptime_ms\":\"5\"}", "'uptime_ms' must be an integer"},
    };
    for (const auto& [line, says] : events)
    {
        CAPTURE(line);
        std::string error;
        CHECK_FALSE(ParseAgentEvent(line, error));
        CHECK(error.find(says) != std::string::npos);
    }
    const std::vector<std::pair<std::string, std::string>> requests{
        {"\x01\x02", "not JSON"},
        {"null", "not a JSON object but null"},
        {"{\"op\":[\"run\"]}", "'op' must be text"},
        {"{\"op\":\"run\",\"id\":1.5}", "'id' must be an integer"},
        {"{\"op\":\"run\",\"id\":1,\"cmd\":7}", "'cmd' must be text"},
        {"{\"op\":\"run\",\"id\":1,\"timeout_ms\":-5}", "'timeout_ms' must be an integer"},
        {"{\"op\":\"run\",\"id\":1,\"timeout_ms\":9223372036854775807}",
         "'timeout_ms' must be an integer"},
        {"{\"op\":\"fetch\",\"id\":1,\"path\":{}}", "'path' must be text"},
    };
    for (const auto& [line, says] : requests)
    {
        CAPTURE(line);
        std::string error;
        CHECK_FALSE(ParseAgentRequest(line, error));
        CHECK(error.find(says) != std::string::npos);
    }
    // What is right still reads, a missing field at its default.
    std::string error;
    const auto exit = ParseAgentEvent("{\"event\":\"exit\",\"id\":3,\"signal\":9}", error);
    REQUIRE(exit);
    CHECK((exit->id == 3 && !exit->code && exit->signal == 9 && !exit->timedOut));
    const auto run = ParseAgentRequest("{\"op\":\"run\",\"id\":2,\"cmd\":\"true\"}", error);
    REQUIRE(run);
    CHECK((run->op == "run" && run->id == 2 && run->cmd == "true" && run->timeoutMs == 0));
}

TEST_CASE("a malformed request to the status socket still gets the document; stray names are "
          "not sockets")
{
    const ScratchDir dir("malformed-status");
    auto live = std::make_shared<LiveStatus>();
    live->Set("simulation", {{"time_s", 1.5}});
    const StatusServer server((dir / "s.status").string(), live);
    for (const std::string& request : {std::string("GET / HTTP/1.0\r\n\r\n"),
                                       std::string(100000, '\xff'), std::string("\0\n", 2)})
    {
        const int fd = socket(AF_UNIX, SOCK_STREAM, 0);
        REQUIRE(fd >= 0);
        sockaddr_un addr{};
        addr.sun_family = AF_UNIX;
        std::strncpy(addr.sun_path, server.Path().c_str(), sizeof addr.sun_path - 1);
        REQUIRE(connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0);
        (void)send(fd, request.data(), request.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
        std::string answer;
        char buf[4096];
        for (ssize_t n; (n = read(fd, buf, sizeof buf)) > 0;)
        {
            answer.append(buf, static_cast<size_t>(n));
        }
        close(fd);
        CHECK(nlohmann::json::parse(answer)["simulation"]["time_s"] == 1.5);
    }

    // Files named almost like sockets of running emulators: a wrapped pid (kill(-1, 0)
    // would answer for every process), a sign, a leading zero, a suffix.
    for (const char* name :
         {"fabemu-4294967295.status", "fabemu-4294967296.status", "fabemu-+1.status",
          "fabemu-01.status", "fabemu-1.status.bak", "fabemu- 1.status"})
    {
        CAPTURE(name);
        CHECK(PidOfStatusSocket(name) == 0);
        std::ofstream(dir / name) << "not a socket";
    }
    CHECK(PidOfStatusSocket("fabemu-1.status") == 1);
    const char* was = std::getenv("XDG_RUNTIME_DIR");
    const std::string saved = was ? was : "";
    setenv("XDG_RUNTIME_DIR", dir.c_str(), 1);
    const RunOutcome r = FabemuInProcess({"status"});
    was ? setenv("XDG_RUNTIME_DIR", saved.c_str(), 1) : unsetenv("XDG_RUNTIME_DIR");
    CHECK(r.code == kExitFailure);
    CHECK(r.err.find("no emulation is running on this host") != std::string::npos);
}
