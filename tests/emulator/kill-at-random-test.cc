// Kill and interrupt at random (issue 23, validation 4): SIGINT, SIGTERM and SIGKILL at
// random moments of an emulation, from its start to its commands running, ten trials.
// After each, nothing of the run is left: no namespace, veth, process, status socket
// or temporary folder (after SIGKILL, once the next emulation has swept what a killed
// one cannot clean), and its results folder is complete or absent, never half-written.
// Namespace endpoints (plain IP) keep a trial to seconds; the VM runs' clean-up is
// emulator-launch-vm-dies's and containers-vms'.
#include "../fabemu-process.h"
#include "../scratch-dir.h"
#include "../shell.h"
#include "../skip.h"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>
#include <sys/wait.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <random>
#include <thread>
#include <unistd.h>

namespace fs = std::filesystem;

namespace
{

/// Trial \p t's scenario: h0 serves in the background, h1 waits, both far longer than a
/// trial (60.t s, 50.t s, the trial's own), so only the run's clean-up (or, after
/// SIGKILL, the next run's sweep) can end them; \p seconds overrides both (the sweeper).
std::string
Scenario(int t, const std::string& seconds = "")
{
    const std::string a = seconds.empty() ? "60." + std::to_string(t) : seconds;
    const std::string b = seconds.empty() ? "50." + std::to_string(t) : seconds;
    return "name: kill\nduration: 5min\nfabric: {type: roce, pfc: true, cc: none}\n"
           "topology: {builder: star, hosts: 3, link: {rate: 1Gbps, delay: 1us}}\n"
           "endpoints:\n  h0: {kind: netns, device: none}\n  h1: {kind: netns, device: none}\n"
           "workloads:\n"
           "  - {type: command, on: h0, run: \"sleep " +
           a +
           "\", background: true, timeout: 2min}\n"
           "  - {type: command, on: h1, run: \"sleep " +
           b + "\", timeout: 2min}\n";
}

/// What trial \p t's run, process \p pid, left behind, as a list of problems.
std::vector<std::string>
LeftBehind(int t, pid_t pid, const fs::path& out)
{
    std::vector<std::string> left;
    const std::string prefix = "fe" + std::to_string(pid);
    // fe<pid>n<i> and fe<pid>t<i>: with the letter, pid 12 never matches pid 123's.
    if (RunCommand("ip netns list").find(prefix + "n") != std::string::npos)
    {
        left.push_back("a namespace " + prefix + "n*");
    }
    if (RunCommand("ip -o link").find(prefix + "t") != std::string::npos)
    {
        left.push_back("a link " + prefix + "t*");
    }
    const std::string runtime = getenv("XDG_RUNTIME_DIR") ? getenv("XDG_RUNTIME_DIR") : "/tmp";
    if (fs::exists(runtime + "/fabemu-" + std::to_string(pid) + ".status"))
    {
        left.push_back("its status socket");
    }
    for (const auto& e : fs::directory_iterator(out.parent_path()))
    {
        const std::string name = e.path().filename().string();
        const std::string tail = "-" + std::to_string(pid);
        if (name.find(".tmp-") != std::string::npos && name.size() > tail.size() &&
            name.compare(name.size() - tail.size(), tail.size(), tail) == 0)
        {
            left.push_back("a temporary folder " + name);
        }
    }
    if (fs::exists(out))
    {
        // Complete: the summary parses and the report is there.
        std::ifstream in(out / "summary.json");
        if (nlohmann::json::parse(in, nullptr, false).is_discarded() ||
            !fs::exists(out / "report.md"))
        {
            left.push_back("a half-written results folder");
        }
    }
    const std::string t10 = std::to_string(t);
    if (!RunCommand("pgrep -f '^sleep 60[.]" + t10 + "$'").empty() ||
        !RunCommand("pgrep -f '^sleep 50[.]" + t10 + "$'").empty())
    {
        left.push_back("a command still running");
    }
    return left;
}

} // namespace

TEST_CASE("SIGINT, SIGTERM and SIGKILL at random moments: nothing left, results whole or absent")
{
    if (geteuid() != 0)
    {
        FABEMU_SKIP("network namespaces need root");
    }
    const ScratchDir dir("kill-at-random");
    const unsigned seed = std::random_device{}();
    MESSAGE("seed " << seed << " (the signals and moments below follow from it)");
    std::mt19937 rng(seed);
    const int signals[] = {SIGINT, SIGTERM, SIGKILL};
    struct Killed
    {
        int trial;
        pid_t pid;
        fs::path out;
    };
    std::vector<Killed> killed; // SIGKILLed: checked after the next run
    for (int trial = 0; trial < 10; ++trial)
    {
        // Trials 0..2 take each signal once; the rest draw one.
        const int sig = trial < 3 ? signals[trial] : signals[rng() % 3];
        const auto at = std::chrono::milliseconds(rng() % 3000); // setup to commands running
        const fs::path out = dir / ("out-" + std::to_string(trial));
        CAPTURE(trial);
        CAPTURE(sig);
        CAPTURE(at.count());
        const fs::path yaml = dir / ("kill-" + std::to_string(trial) + ".yaml");
        std::ofstream(yaml) << Scenario(trial);
        FabemuProcess fabemu({"run", yaml.string(), "--out", out.string()});
        const pid_t pid = fabemu.Pid();
        std::this_thread::sleep_for(at);
        int status = 0;
        const std::string said = fabemu.Interrupt(sig, status);
        INFO(said);
        if (sig == SIGKILL)
        {
            CHECK(WIFSIGNALED(status));
            killed.push_back({trial, pid, out});
            continue;
        }
        // Interrupted (its commands run for a minute): exit 1; or, signalled before it
        // set up its handler (nothing made yet), ended by the signal itself.
        if (WIFEXITED(status))
        {
            CHECK(WEXITSTATUS(status) == 1);
        }
        else
        {
            CHECK(WIFSIGNALED(status));
            CHECK(WTERMSIG(status) == sig);
        }
        for (const auto& problem : LeftBehind(trial, pid, out))
        {
            FAIL_CHECK("after signal " << sig << " at " << at.count() << " ms: " << problem);
        }
    }
    // A killed run cannot clean up: the next emulation sweeps what it left.
    std::ofstream(dir / "last.yaml") << Scenario(0, "0.5");
    FabemuProcess sweeper({"run", (dir / "last.yaml").string(), "--out", (dir / "last").string()});
    int status = 0;
    sweeper.Interrupt(0, status); // signal 0: wait for its end
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
    for (const auto& k : killed)
    {
        CAPTURE(k.trial);
        for (const auto& problem : LeftBehind(k.trial, k.pid, k.out))
        {
            FAIL_CHECK("after SIGKILL and the next run: " << problem);
        }
    }
}
