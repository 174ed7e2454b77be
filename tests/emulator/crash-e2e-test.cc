// A crash fault (issue 23: {at, host, crash: vm}) on real endpoints: the VM is killed
// at its time, the commands on it fail naming it, the run goes on or stops as
// on_failure says, exits 1, and leaves no VM, tap or folder behind.
#include "../containers/vm-support.h"
#include "../fabemu-process.h"
#include "../run-in-process.h"
#include "../scratch-dir.h"
#include "../skip.h"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>
#include <sys/wait.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace fs = std::filesystem;

TEST_CASE("crash: vm kills the VM mid-run; on_failure stop or continue; nothing left behind")
{
    const std::string why = vmtest::WhyNoVms();
    if (!why.empty())
    {
        FABEMU_SKIP(why);
    }
    for (const std::string mode : {"stop", "continue"})
    {
        CAPTURE(mode);
        const ScratchDir dir("crash-" + mode);
        // h0 serves 100000 64 KB writes (minutes at 100 Mb/s); 5 s in, with the client
        // 3.5 s into its run, h0 crashes. rxe then retransmits to the dead peer without
        // failing its QP (for minutes, here), so the client ends at its 20 s timeout;
        // the last command, on healthy h1, runs only with on_failure: continue.
        std::ofstream(dir / "crash.yaml")
            << "name: crash\nduration: 5min\non_failure: " << mode << R"(
fabric: {type: roce, pfc: true}
topology: {builder: star, hosts: 2, link: {rate: 100Mbps, delay: 1us}}
endpoints:
  h0: {kind: vm, device: rxe}
  h1: {kind: vm, device: rxe}
faults:
  - {at: 5s, host: h0, crash: vm}
workloads:
  - {type: command, on: h0, run: "ib_write_bw -d rxe0 -x 1 -F -n 100000", background: true, timeout: 2min}
  - {type: command, on: h1, run: "ib_write_bw -d rxe0 -x 1 -F -n 100000 {h0}", after: 1500ms, timeout: 20s}
  - {type: command, on: h1, run: "ibv_devices", timeout: 1min}
  - {type: command, on: h1, run: "echo said-before-its-timeout; sleep 600", background: true, timeout: 3s}
expect:
  faults.0.applied: 1
)";
        const auto started = std::chrono::steady_clock::now();
        FabemuProcess fabemu({"run", (dir / "crash.yaml").string(), "--out", (dir / "out").string(),
                              "--cache", FABEMU_TEST_CACHE_DIR});
        const pid_t pid = fabemu.Pid();
        int status = 0;
        const std::string said = fabemu.Interrupt(0, status); // signal 0: wait for the end
        const auto took = std::chrono::steady_clock::now() - started;
        INFO(said);
        CHECK(WIFEXITED(status));
        CHECK(WEXITSTATUS(status) == 1);
        // Bounded by the client's timeout, not by the server's minutes of writes.
        CHECK(took < std::chrono::seconds(100));
        CHECK(said.find("h0: crashed on purpose (faults.0 at 5s: crash: vm)") != std::string::npos);
        const auto summary = nlohmann::json::parse(std::ifstream(dir / "out" / "summary.json"));
        REQUIRE(summary["commands"].size() == 4);
        const auto& server = summary["commands"][0];
        const auto& client = summary["commands"][1];
        const auto& last = summary["commands"][2];
        CAPTURE(summary["commands"].dump(1));
        CHECK(server["exit_code"] != 0);
        CHECK(server["stdout_tail"].get<std::string>().find("endpoint h0") != std::string::npos);
        CHECK(server["stdout_tail"].get<std::string>().find("h0 crashed on purpose (faults.0") !=
              std::string::npos);
        CHECK(client["exit_code"] != 0); // its peer is gone
        CHECK(client["stdout_tail"].get<std::string>().find("killed at its timeout") !=
              std::string::npos);
        // The server ended by the crash, not by on_failure: stop.
        CHECK(server["stdout_tail"].get<std::string>().find("stopped") == std::string::npos);
        if (mode == "stop")
        {
            CHECK(last["exit_code"] == -1);
            CHECK(last["stdout_tail"].get<std::string>().find(
                      "not started: on_failure: stop after workload 1 on h1 failed") !=
                  std::string::npos);
        }
        else
        {
            CHECK(last["exit_code"] == 0); // the run went on: h1 is alive
            CHECK(last["stdout_tail"].get<std::string>().find("rxe0") != std::string::npos);
            // A background command that outlives its timeout, collected just as the guest
            // kills it: its record has what it printed and why it ended, not only that the
            // host stopped waiting.
            const auto& hung = summary["commands"][3];
            const std::string tail = hung["stdout_tail"].get<std::string>();
            CHECK(hung["exit_code"] == -1);
            CHECK(tail.find("said-before-its-timeout") != std::string::npos);
            CHECK(tail.find("killed at its timeout") != std::string::npos);
            CHECK(tail.find("no answer from its agent") == std::string::npos);
        }
        // Recorded as a fault, and met as an expectation.
        CHECK(Slurp(dir / "out" / "faults.csv").find(",h0,crash,vm") != std::string::npos);
        CHECK(summary["faults"][0]["applied"] == true);
        CHECK(summary["expect"][0]["ok"] == true);
        CHECK(Slurp(dir / "out" / "report.md").find("1 of 1 applied") != std::string::npos);
        // Nothing left: taps, QEMU children, VM folders.
        for (int i = 0; i < 2; ++i)
        {
            CHECK_FALSE(
                vmtest::NetDeviceExists("fe" + std::to_string(pid) + "t" + std::to_string(i)));
        }
        for (const auto& e : fs::directory_iterator("/tmp"))
        {
            CHECK(e.path().filename().string().rfind("fabemu-vm-" + std::to_string(pid) + "-", 0) ==
                  std::string::npos);
        }
    }
}
