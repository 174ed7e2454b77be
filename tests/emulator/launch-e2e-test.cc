// Real collective software in the VMs (issue 20): a launch whose VM dies
// mid-collective (validation 5: the run names the VM, stops the other ranks, exits 1,
// and leaves no VM, tap or folder behind), and UCX's ucx_perftest through the
// emulator beside the same pair on a Linux bridge (validation 4).
#include "../containers/vm-support.h"
#include "../fabemu-process.h"
#include "../scratch-dir.h"
#include "../skip.h"
#include "emulator/fabemu/emulate.h"
#include "scenarios/src/results.h"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>
#include <sys/wait.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <thread>

namespace fs = std::filesystem;

TEST_CASE("a VM that dies mid-collective: named, the other ranks stopped, exit 1, nothing left")
{
    const std::string why = vmtest::WhyNoVms();
    if (!why.empty())
    {
        FABEMU_SKIP(why);
    }
    const ScratchDir dir("launch-dies");
    // Long enough that h1 dies mid-way: 40 rounds of 8 MB, minutes on TCG.
    std::ofstream(dir / "dies.yaml") << R"(name: dies
duration: 10min
fabric: {type: roce, pfc: true}
topology: {builder: star, hosts: 3, link: {rate: 100Gbps, delay: 1us}}
endpoints:
  h0: {kind: vm, device: rxe}
  h1: {kind: vm, device: rxe}
  h2: {kind: vm, device: rxe}
workloads:
  - type: launch
    on: [h0, h1, h2]
    run: "fabemu-allreduce --bytes 8MB --iters 40 --timeout 60"
    timeout: 5min
)";
    FabemuProcess fabemu({"run", (dir / "dies.yaml").string(), "--out", (dir / "out").string(),
                          "--cache", FABEMU_TEST_CACHE_DIR});
    const pid_t pid = fabemu.Pid();
    REQUIRE_FALSE(fabemu.ReadUntil("rxe0 ready", 3).empty());
    REQUIRE_FALSE(fabemu.ReadUntil("live status").empty());
    // The ranks meet and run (the first 8 MB round takes seconds on TCG): then h1's
    // QEMU is killed as if it crashed.
    std::this_thread::sleep_for(std::chrono::seconds(15));
    // "[i]fname": the pattern does not match pkill's own shell's command line.
    const std::string qemu = "[i]fname=fe" + std::to_string(pid) + "t1,";
    REQUIRE(system(("pkill -KILL -f '" + qemu + "'").c_str()) == 0);
    const auto killed = std::chrono::steady_clock::now();
    int status = 0;
    const std::string rest = fabemu.Interrupt(0, status); // signal 0: only wait for the end
    const auto took = std::chrono::steady_clock::now() - killed;
    INFO(rest);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 1);
    // The other ranks were stopped, not left to their 60 s Gloo timeout.
    CHECK(took < std::chrono::seconds(45));
    CHECK(rest.find("endpoint h1") != std::string::npos); // the dead VM, by name
    CHECK(rest.find("stopped because rank 1 (h1) failed") != std::string::npos);
    const auto summary = nlohmann::json::parse(std::ifstream(dir / "out" / "summary.json"));
    REQUIRE(summary["commands"].size() == 3);
    for (const auto& c : summary["commands"])
    {
        CAPTURE(c.dump());
        CHECK(c["exit_code"] != 0);
    }
    // Nothing left: taps, QEMU children, VM folders, the temporary results folder.
    for (int i = 0; i < 3; ++i)
    {
        CHECK_FALSE(vmtest::NetDeviceExists("fe" + std::to_string(pid) + "t" + std::to_string(i)));
    }
    CHECK(system(("pgrep -P " + std::to_string(pid) + " >/dev/null").c_str()) != 0);
    for (const auto& e : fs::directory_iterator("/tmp"))
    {
        CHECK(e.path().filename().string().rfind("fabemu-vm-" + std::to_string(pid) + "-", 0) ==
              std::string::npos);
    }
    for (const auto& e : fs::directory_iterator(dir))
    {
        CHECK(e.path().filename().string().find(".tmp-") == std::string::npos);
    }
}

TEST_CASE("ucx_perftest put bandwidth and latency through the emulator, beside a Linux bridge")
{
    const std::string why = vmtest::WhyNoVms();
    if (!why.empty())
    {
        FABEMU_SKIP(why);
    }
    // UCX's transport layer on rxe (rc_verbs, the IPv4 GID): UCP's own tests need UD
    // for their wire-up, which times out on rxe even on a bridge (docs/endpoints.md).
    const std::string ucx = "UCX_IB_GID_INDEX=1 ucx_perftest ";
    const std::string dev = " -x rc_verbs -d rxe0:1";
    auto run = [&](bool bridge) {
        fabemu::EmulateOptions opt;
        opt.count = 2;
        opt.bridge = bridge;
        opt.cache = vmtest::Cache();
        opt.servers = {"h0: " + ucx + "-p 13337", "h0: " + ucx + "-p 13338"};
        opt.run = {"h1: sleep 2; " + ucx + "{h0} -p 13337 -t put_bw -D zcopy -s 65536 -n 300" + dev,
                   "h1: " + ucx + "{h0} -p 13338 -t put_lat -D short -s 8 -n 500" + dev};
        std::ostringstream out;
        std::ostringstream err;
        const auto r = fabemu::RunEmulation(opt, out, err);
        INFO(out.str() << err.str());
        CHECK(r.exitCode == 0);
        REQUIRE(r.commands.size() == 4);
        for (const auto& c : r.commands)
        {
            CAPTURE(c.cmd);
            CHECK(c.exitCode == 0);
        }
        const auto bw = fabemu::UcxPerftestMetrics(r.commands[2].out);
        const auto lat = fabemu::UcxPerftestMetrics(r.commands[3].out);
        REQUIRE(bw.contains("bw_overall_mb_sec"));
        REQUIRE(lat.contains("latency_overall_us"));
        if (!bridge)
        {
            CHECK(r.framesFromEndpoints > 1000); // the traffic crossed the model
        }
        return std::make_pair(bw["bw_overall_mb_sec"].get<double>(),
                              lat["latency_overall_us"].get<double>());
    };
    const auto fabric = run(false);
    const auto bridge = run(true);
    std::cout << "ucx_perftest put_bw (64 KB) MB/s: emulator " << fabric.first << ", bridge "
              << bridge.first << "; put_lat (8 B) us: emulator " << fabric.second << ", bridge "
              << bridge.second << "\n";
    CHECK(fabric.first > 0);
    CHECK(bridge.first > 0);
    CHECK(fabric.second > 0);
    CHECK(bridge.second > 0);
}
