// Namespace endpoints over the emulated fabric (plain IP: this host has no
// Soft-RoCE for namespaces): real Linux TCP stacks meet the modelled switches,
// in seconds and without QEMU. Root only; skips elsewhere, saying why.
#include "../fabemu-process.h"
#include "../shell.h"
#include "../skip.h"
#include "emulator/fabemu/emulate.h"

#include <doctest/doctest.h>

#include <csignal>
#include <sstream>
#include <thread>
#include <unistd.h>

using namespace fabemu;

namespace
{

std::string
WhyNotHere()
{
    if (geteuid() != 0)
    {
        return "network namespaces and the emulator's sockets need root";
    }
    if (!HaveTool("python3") || !HaveTool("ethtool"))
    {
        return "needs python3 and ethtool";
    }
    return "";
}

/// h0 counts what one connection on \p port brings, then prints it.
std::string
Server(int port)
{
    return "h0: python3 -c \"import socket; s = socket.create_server(('', " + std::to_string(port) +
           ")); c, _ = s.accept(); n = 0\n"
           "while True:\n"
           "    b = c.recv(65536)\n"
           "    if not b: break\n"
           "    n += len(b)\n"
           "print('received', n)\"";
}

/// hN sends \p bytes to h0's \p port.
std::string
Client(uint32_t host, size_t bytes, int port)
{
    return "h" + std::to_string(host) +
           ": python3 -c \"import socket, time; time.sleep(0.5); "
           "c = socket.create_connection(('10.0.0.1', " +
           std::to_string(port) + ")); c.sendall(bytes(" + std::to_string(bytes) +
           ")); c.close()\"";
}

/// fabemu emulate with plain-IP namespaces as endpoints.
EmulateOptions
PlainNamespaces()
{
    EmulateOptions opt;
    opt.backend = "netns";
    opt.noRdma = true;
    return opt;
}

/// Runs \p opt with h1 sending \p bytes to h0's port 5000; \p printed gets all it printed.
EmulateResult
RunTransfer(EmulateOptions opt, size_t bytes, std::string& printed)
{
    opt.servers = {Server(5000)};
    opt.run = {Client(1, bytes, 5000)};
    std::ostringstream out;
    std::ostringstream err;
    EmulateResult r = RunEmulation(opt, out, err);
    printed = out.str() + err.str();
    return r;
}

/// h0 (the first command) counted all \p bytes.
bool
ReceivedAll(const EmulateResult& r, size_t bytes)
{
    return !r.commands.empty() &&
           r.commands[0].out.find("received " + std::to_string(bytes)) != std::string::npos;
}

/// Scenario \p name (file name.yaml): two plain-IP namespaces on a RoCEv2 star, with
/// \p rest after its "workloads:" line, which is the seventh.
Scenario
TwoNamespaces(const std::string& name, const std::string& rest)
{
    return ParseScenario("name: " + name + R"(
fabric: {type: roce}
topology: {builder: star, hosts: 2}
endpoints:
  h0: {kind: netns, device: none}
  h1: {kind: netns, device: none}
workloads:
)" + rest,
                         name + ".yaml");
}

} // namespace

TEST_CASE("20 MB of TCP between two namespaces crosses the emulated RoCEv2 switch whole")
{
    if (const auto why = WhyNotHere(); !why.empty())
    {
        FABEMU_SKIP(why);
    }
    std::string printed;
    const EmulateResult r = RunTransfer(PlainNamespaces(), 20 << 20, printed);
    INFO(printed);
    REQUIRE(r.exitCode == 0);
    REQUIRE(r.commands.size() == 2);
    CHECK(ReceivedAll(r, 20 << 20));
    CHECK(r.scheduling == "nice -10");    // shared, the default
    CHECK(r.framesFromEndpoints > 14000); // 20 MB in 1448-byte segments, and the ACKs
    CHECK(r.framesToEndpoints > 14000);
    CHECK(r.congestionDrops == 0);
    CHECK(r.arpReplies >= 2);
    // What carrying the frames cost the simulation thread: some CPU, never more than the
    // wall time it ran (one thread), and said on the terminal.
    CHECK(r.threadCpuS > 0);
    CHECK(r.threadCpuS <= r.threadWallS * 1.01);
    CHECK(r.threadWallS > 0.5); // the 20 MB take at least that here
    CHECK(printed.find("simulation thread: ") != std::string::npos);
    CHECK(printed.find("% busy), ") != std::string::npos);
}

TEST_CASE("through a 100 Mb/s star without PFC and with a 20 KB buffer: drops, and TCP still "
          "delivers all")
{
    if (const auto why = WhyNotHere(); !why.empty())
    {
        FABEMU_SKIP(why);
    }
    EmulateOptions opt = PlainNamespaces();
    opt.count = 3;
    opt.rate = "100Mbps";
    opt.parallel = true;
    opt.set = {"ns3::SwitchMmu::PfcEnabled=false", "ns3::SwitchMmu::ReservePerPg=0",
               "ns3::SwitchMmu::BufferSize=20000"};
    opt.servers = {Server(5000), Server(5001)};
    // 8 MiB each, 0.7 s at 100 Mb/s: the two overlap even when one Python starts a few
    // hundred ms after the other on a loaded machine (with 2 MiB, 0.17 s each, a run
    // beside a build once saw them one after the other, and no drop).
    opt.run = {Client(1, 8 << 20, 5000), Client(2, 8 << 20, 5001)};
    std::ostringstream out;
    std::ostringstream err;
    const EmulateResult r = RunEmulation(opt, out, err);
    INFO(out.str() << err.str());
    REQUIRE(r.exitCode == 0);
    CHECK(r.commands[0].out.find("received 8388608") != std::string::npos);
    CHECK(r.commands[1].out.find("received 8388608") != std::string::npos);
    CHECK(r.congestionDrops > 0); // two senders, one 100 Mb/s port, 20 KB of buffer
    CHECK(r.pfcFrames == 0);
}

TEST_CASE("scheduling realtime: the simulation thread runs SCHED_FIFO and the transfer is whole")
{
    if (const auto why = WhyNotHere(); !why.empty())
    {
        FABEMU_SKIP(why);
    }
    EmulateOptions opt = PlainNamespaces();
    opt.scheduling = "realtime";
    std::string printed;
    const EmulateResult r = RunTransfer(opt, 4 << 20, printed);
    INFO(printed);
    REQUIRE(r.exitCode == 0);
    CHECK(r.scheduling == "SCHED_FIFO");
    CHECK(printed.find("wall clock (SCHED_FIFO)") != std::string::npos);
    CHECK(ReceivedAll(r, 4 << 20));

    opt.scheduling = "fast";
    std::ostringstream out2;
    std::ostringstream err2;
    CHECK(RunEmulation(opt, out2, err2).exitCode == 2);
    CHECK(err2.str().find("--scheduling must be shared or realtime, not 'fast'") !=
          std::string::npos);
}

TEST_CASE("MaxBacklog set through --set: behind by more, the taps wait, the run says so, TCP still "
          "delivers")
{
    if (const auto why = WhyNotHere(); !why.empty())
    {
        FABEMU_SKIP(why);
    }
    EmulateOptions opt = PlainNamespaces();
    // No backlog allowed: every look at the taps while events are due is put off
    // until the simulation is idle, which a busy transfer makes happen often.
    opt.set = {"ns3::FabemuRealtimeSimulatorImpl::MaxBacklog=0ns"};
    std::string printed;
    const EmulateResult r = RunTransfer(opt, 4 << 20, printed);
    INFO(printed);
    REQUIRE(r.exitCode == 0);
    CHECK(ReceivedAll(r, 4 << 20));
    CHECK(r.readsDeferred > 0);
    CHECK(r.maxBacklogMs == 0.0);
    CHECK(printed.find("overload: the simulation fell more than 0 ms behind") != std::string::npos);
}

TEST_CASE("the relay baseline carries the same transfer with no model, and excludes the bridge")
{
    if (const auto why = WhyNotHere(); !why.empty())
    {
        FABEMU_SKIP(why);
    }
    EmulateOptions opt = PlainNamespaces();
    opt.relay = true;
    std::string printed;
    const EmulateResult r = RunTransfer(opt, 4 << 20, printed);
    INFO(printed);
    REQUIRE(r.exitCode == 0);
    CHECK(ReceivedAll(r, 4 << 20));
    CHECK(r.scheduling == "nice -10");   // tuned as the simulation thread is by default
    CHECK(r.framesFromEndpoints > 2800); // 4 MiB in 1448-byte segments, and the ACKs
    CHECK(r.framesToEndpoints * 100 >=
          r.framesFromEndpoints * 99); // forwarded, one copy each (two endpoints)
    CHECK(r.arpReplies == 0);          // no edge answered ARP: the namespaces did
    CHECK(printed.find("bare user-space relay (no fabric model, its thread nice -10)") !=
          std::string::npos);
    CHECK(printed.find("lag of simulated time") == std::string::npos); // nothing simulated
    CHECK(printed.find("the relay's thread: ") != std::string::npos);  // its cost instead
    CHECK(r.threadCpuS > 0);
    CHECK(r.threadCpuS <= r.threadWallS * 1.01);

    opt.bridge = true;
    std::ostringstream out2;
    std::ostringstream err2;
    CHECK(RunEmulation(opt, out2, err2).exitCode == 2);
    CHECK(err2.str().find("--bridge and --relay are two baselines") != std::string::npos);
}

TEST_CASE("SIGINT mid-run: the commands are killed and no namespace or veth is left")
{
    if (const auto why = WhyNotHere(); !why.empty())
    {
        FABEMU_SKIP(why);
    }
    FabemuProcess fabemu({"emulate", "--backend", "netns", "--no-rdma", "--server", "h0: sleep 100",
                          "--run", "h1: sleep 100"});
    REQUIRE(!fabemu.ReadUntil("live status").empty());
    std::this_thread::sleep_for(std::chrono::seconds(1));
    const std::string prefix = "fe" + std::to_string(fabemu.Pid());
    CHECK(RunCommand("ip netns list").find(prefix + "n1") != std::string::npos);
    const auto start = std::chrono::steady_clock::now();
    int status = 0;
    const std::string rest = fabemu.Interrupt(SIGINT, status);
    INFO(rest);
    const auto took = std::chrono::steady_clock::now() - start;
    MESSAGE("stopped " << std::chrono::duration_cast<std::chrono::milliseconds>(took).count()
                       << " ms after SIGINT");
    CHECK(took < std::chrono::seconds(10));
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 1);
    CHECK(rest.find("interrupted by signal 2") != std::string::npos);
    CHECK(RunCommand("ip netns list").find(prefix) == std::string::npos);
    CHECK(RunCommand("ip -o link").find(prefix + "t") == std::string::npos);
    CHECK(RunCommand("pgrep -f '^sleep 100$'").empty());
}

TEST_CASE("a host link down under real TCP: the kernel's retransmissions carry the transfer "
          "over the outage, and the results record it")
{
    if (const auto why = WhyNotHere(); !why.empty())
    {
        FABEMU_SKIP(why);
    }
    // 100 Mb/s: 60 MB takes 5 s or more from 0.5 s on, so h1's link goes down at 2.5 s
    // mid-transfer. (With 20 MB and the outage at 1 s, a loaded CI machine once started
    // Python late enough that the transfer began after the outage: nothing was lost.)
    const Scenario s = ParseScenario(R"yaml(name: netns-link-down
duration: 1min
fabric: {type: roce}
topology: {builder: star, hosts: 2, link: {rate: 100Mbps, delay: 1us}}
endpoints:
  h0: {kind: netns, device: none}
  h1: {kind: netns, device: none}
faults:
  - {at: 2500ms, link: h1, down: 400ms}
workloads:
  - type: command
    on: h0
    background: true
    run: |-
      python3 -c "import socket; s = socket.create_server(('', 5000)); c, _ = s.accept(); n = sum(iter(lambda: len(c.recv(65536)), 0)); print('received', n)"
  - type: command
    on: h1
    run: |-
      python3 -c "import socket, time; time.sleep(0.5); c = socket.create_connection(('10.0.0.1', 5000)); c.sendall(bytes(62914560)); c.close()"
)yaml",
                                     "netns-link-down.yaml");
    std::ostringstream out;
    std::ostringstream err;
    const EmulateResult r = EmulateScenario(s, EmulateSetup{}, out, err);
    INFO(out.str() << err.str());
    CHECK(r.exitCode == 0);
    REQUIRE(r.commands.size() == 2);
    CHECK(ReceivedAll(r, 60 << 20));
    REQUIRE(r.faults.is_array());
    CHECK(r.faults[0]["applied"] == true);
    CHECK(r.faults[0]["link"] == "h1-s0");
    // Frames met the link while it was down and were lost there, not in a queue.
    CHECK(r.own["link_down_drops"].get<uint64_t>() > 0);
    CHECK(r.congestionDrops == 0);
    MESSAGE("60 MB through a 400 ms outage of h1's link: "
            << r.simTimeS << " s, " << r.own["link_down_drops"]
            << " frames lost on the link while it was down");
    CHECK(r.simTimeS > 2.9); // the transfer outlasted the outage
}

TEST_CASE("a baseline says the scenario's faults are not applied, and still runs")
{
    if (const auto why = WhyNotHere(); !why.empty())
    {
        FABEMU_SKIP(why);
    }
    const Scenario s = TwoNamespaces("baseline-faults",
                                     R"(  - {type: command, on: h1, run: "python3 -c \"print(1)\""}
faults:
  - {link: h1, ber: 1e-6}
  - {at: 1ms, link: h0, down: 1ms}
)");
    for (const bool relay : {true, false})
    {
        EmulateSetup setup;
        setup.relay = relay;
        setup.bridge = !relay;
        std::ostringstream out;
        std::ostringstream err;
        const EmulateResult r = EmulateScenario(s, setup, out, err);
        INFO(out.str() << err.str());
        CHECK(r.exitCode == 0);
        CHECK(err.str().find(std::string("warning: baseline-faults.yaml:10:5: faults: the ") +
                             (relay ? "--relay" : "--bridge") +
                             " baseline has no fabric model, so its 2 faults are not applied") !=
              std::string::npos);
    }
}

TEST_CASE("a perftest that could not time itself is named on the terminal, under its command")
{
    if (const auto why = WhyNotHere(); !why.empty())
    {
        FABEMU_SKIP(why);
    }
    // The line perftest prints when its CPU-frequency sampling fails, and a plain command.
    const Scenario s = TwoNamespaces(
        "untimed",
        R"(  - {type: command, on: h1, run: "python3 -c \"print('Correlation coefficient r^2: 0.788725 < 0.9')\""}
  - {type: command, on: h0, run: "python3 -c \"print(1)\""}
)");
    std::ostringstream out;
    std::ostringstream err;
    EmulateSetup setup;
    setup.printOutputs = false; // as fabemu run: each command's line, not its whole output
    const EmulateResult r = EmulateScenario(s, setup, out, err);
    const std::string said = out.str();
    INFO(said << err.str());
    CHECK(r.exitCode == 0);
    const std::string untimed =
        "exit 0\n    | untimed: perftest could not sample the CPU frequency (correlation r^2 < "
        "0.9); its figures are not measurements\n";
    const auto first = said.find(untimed);
    CHECK(first != std::string::npos);
    CHECK(said.find(untimed, first + 1) == std::string::npos); // not under the plain one
}
