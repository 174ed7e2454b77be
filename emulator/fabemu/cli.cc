#include "emulator/fabemu/cli.h"

#include "containers/probe/host-rdma-probe.h"
#include "emulator/fabemu/demo.h"
#include "emulator/fabemu/emulate.h"
#include "emulator/fabemu/endpoints.h"
#include "emulator/fabemu/exit-codes.h"
#include "emulator/fabemu/run.h"
#include "emulator/fabemu/status-server.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <unistd.h>

namespace fabemu
{

const char*
Version()
{
    return FABEMU_VERSION;
}

namespace
{

std::string
Ns3Version()
{
    // Debian's libns3-dev installs its version in the package, not in a header.
    return "3.37";
}

bool
Executable(const std::string& name)
{
    const char* path = std::getenv("PATH");
    if (!path)
    {
        return false;
    }
    std::stringstream dirs(path);
    std::string dir;
    while (std::getline(dirs, dir, ':'))
    {
        if (access((dir + "/" + name).c_str(), X_OK) == 0)
        {
            return true;
        }
    }
    return false;
}

/// fabemu doctor: what this host can do, one line per capability.
int
Doctor(std::ostream& out)
{
    const auto rdma = ProbeHostRdma();
    const bool tun = access("/dev/net/tun", R_OK | W_OK) == 0;
    const bool root = geteuid() == 0;
    const bool qemu = Executable("qemu-system-x86_64");
    const bool kvm = access("/dev/kvm", R_OK | W_OK) == 0;
    const bool tshark = Executable("tshark");
    const bool gnuplot = Executable("gnuplot");

    auto line = [&out](const char* what, bool ok, const std::string& detail) {
        out << fmt::format("{:<22} {:<4} {}\n", what, ok ? "yes" : "no", detail);
    };
    out << fmt::format("fabemu {} on ns-3 {}\n", Version(), Ns3Version());
    line("simulation", true, "always available");
    line("host Soft-RoCE", rdma.available,
         rdma.reason + (rdma.available ? " (fabemu vm --backend netns)" : ""));
    line("root", root, root ? "" : "taps, namespaces and VMs need root");
    line("/dev/net/tun", tun, tun ? "" : "real endpoints need tap devices");
    line("qemu-system-x86_64", qemu,
         qemu ? "" : "VM endpoints need QEMU (scripts/install-deps installs it)");
    line("/dev/kvm", kvm, kvm ? "probed at launch; TCG is the fallback" : "VMs run under TCG");
    line("tshark", tshark, tshark ? "" : "pcap decoding checks are skipped");
    line("gnuplot", gnuplot, gnuplot ? "" : "results have no plots");
    return kExitOk;
}

} // namespace

int
RunFabemu(const std::vector<std::string>& args, std::ostream& out, std::ostream& err)
{
    CLI::App app{"FabricEmu: real RDMA applications over emulated InfiniBand, RoCEv2 and iWARP "
                 "fabrics, and ns-3 models of those fabrics.",
                 "fabemu"};
    app.set_version_flag("--version", fmt::format("fabemu {} (ns-3 {})", Version(), Ns3Version()));
    app.require_subcommand(1);
    app.footer("Exit codes: 0 ok, 1 run-time failure (a simulated flow failed, a VM died, ...), "
               "2 bad input, 3 expectations not met.");

    auto* doctor = app.add_subcommand("doctor", "Report what this host can run: simulation, "
                                                "real endpoints (taps, QEMU, KVM), Soft-RoCE");

    DemoOptions demo;
    auto* demoCmd = app.add_subcommand(
        "demo", "Run a small built-in simulation: an N:1 RoCEv2 incast over one switch with "
                "PFC and DCQCN; writes a results folder");
    demoCmd->add_option("--senders", demo.senders, "Senders into h0")->capture_default_str();
    demoCmd->add_option("--bytes", demo.bytes, "Bytes each sender writes")->capture_default_str();
    demoCmd->add_option("--rate", demo.rate, "Link rate")->capture_default_str();
    demoCmd->add_option("--pfc", demo.pfc, "PFC on the switch (true/false)")->capture_default_str();
    demoCmd->add_option("--cc", demo.cc, "Congestion control: dcqcn or none")
        ->capture_default_str();
    demoCmd
        ->add_option("--out", demo.out,
                     "Results folder; replaced if an earlier run wrote it, "
                     "else refused unless --force")
        ->capture_default_str();
    demoCmd->add_flag("--force", demo.force, "Replace --out even if it is not a results folder");
    demoCmd->add_flag("--quiet", demo.quiet, "Print nothing");

    auto* image = app.add_subcommand("image", "The endpoint VM image");
    image->require_subcommand(1);
    std::string imageCache;
    std::string imageExtra;
    auto* imageBuild = image->add_subcommand(
        "build", "Build the endpoint VM image from Debian packages (or find it cached); "
                 "prints its folder");
    imageBuild->add_option("--cache", imageCache,
                           "Cache folder (default: $FABEMU_CACHE or ~/.cache/fabemu)");
    imageBuild->add_option("--extra", imageExtra, "List of extra host files for the image")
        ->check(CLI::ExistingFile);

    VmOptions vm;
    auto* vmCmd = app.add_subcommand(
        "vm", "Start endpoint VMs (h0, h1, ... at 10.0.0.1, ...) with Soft-RoCE or Soft-iWARP; "
              "run commands on them, or hold them until SIGINT/SIGTERM");
    vmCmd->add_option("--count", vm.count, "How many VMs")->capture_default_str();
    vmCmd->add_option("--device", vm.device, "rxe or siw")->capture_default_str();
    vmCmd->add_option("--mtu", vm.mtu, "eth0 MTU")->capture_default_str();
    vmCmd->add_flag("--bridge", vm.bridge, "Join their taps on a plain Linux bridge");
    vmCmd->add_option("--run", vm.run, "A command to run on every VM (repeatable)");
    vmCmd->add_flag("--hold", vm.hold, "Keep them until SIGINT or SIGTERM");
    vmCmd->add_option("--accel", vm.accel, "auto, kvm or tcg")->capture_default_str();
    vmCmd->add_option("--cache", vm.cache, "Image cache folder");
    vmCmd
        ->add_option("--backend", vm.backend,
                     "vm (QEMU, works everywhere) or netns (a network namespace per "
                     "endpoint, where the host kernel gives namespaces rxe/siw; "
                     "see fabemu doctor)")
        ->capture_default_str();
    vmCmd->add_flag("--no-rdma", vm.noRdma,
                    "netns only: plain IP namespaces without an RDMA device");

    EmulateOptions em;
    auto* emCmd = app.add_subcommand(
        "emulate", "Real endpoint VMs over the modelled RoCEv2 fabric (a star), in real time: "
                   "start servers, run commands, report fabric counters and lag");
    emCmd->add_option("--count", em.count, "Endpoints h0..hN-1 (10.0.0.1, ...)")
        ->capture_default_str();
    emCmd->add_option("--rate", em.rate, "Link rate")->capture_default_str();
    emCmd->add_option("--delay", em.delay, "Link delay")->capture_default_str();
    emCmd->add_option("--server", em.servers, "'hN: command' started in the background first");
    emCmd->add_option("--run", em.run, "'hN: command' run in turn; {hM} is hM's address");
    emCmd->add_flag("--parallel", em.parallel, "Run the --run commands at the same time");
    emCmd->add_option("--set", em.set, "ns3::Class::Attribute=value for the fabric (repeatable)");
    emCmd
        ->add_option("--cc", em.cc,
                     "dcqcn: the edges run DCQCN for the VMs (CNPs for CE marks, "
                     "rate per flow); none")
        ->capture_default_str();
    emCmd
        ->add_option("--backend", em.backend,
                     "vm, or netns: a network namespace per endpoint (where the host "
                     "kernel gives namespaces rxe; see fabemu doctor)")
        ->capture_default_str();
    emCmd->add_flag("--no-rdma", em.noRdma, "netns only: plain IP namespaces, no RDMA device");
    auto* bridgeFlag = emCmd->add_flag("--bridge", em.bridge,
                                       "Baseline: the same VMs and commands on a "
                                       "plain Linux bridge instead of the modelled fabric");
    emCmd
        ->add_flag("--relay", em.relay,
                   "Baseline: the same VMs and commands joined by the emulator's own "
                   "tap reads and writes with no model between them (what any "
                   "user-space hop costs on this host)")
        ->excludes(bridgeFlag);
    emCmd->add_option("--lag-threshold", em.lagThreshold, "Lag above which timing is not faithful")
        ->capture_default_str();
    emCmd
        ->add_option(
            "--scheduling", em.scheduling,
            "shared: the simulation thread at nice -10 beside the VMs; realtime: SCHED_FIFO, "
            "preempting them at once (lower lag, less VM throughput on a busy host)")
        ->capture_default_str();
    emCmd->add_option("--cache", em.cache, "Image cache folder");

    RunOptions run;
    bool runQuiet = false;
    uint64_t runSeed = 0;
    auto* runCmd = app.add_subcommand(
        "run", "Run a scenario file: a simulation, or real VM endpoints over the modelled fabric "
               "when it lists endpoints; writes a results folder with summary.json, CSVs, plots "
               "and report.md");
    runCmd->add_option("file", run.file, "Scenario file (YAML)")->required();
    runCmd->add_option("--out", run.out,
                       "Results folder (default: results/<name>); replaced if an "
                       "earlier run wrote it, else refused unless --force");
    runCmd->add_flag("--force", run.force,
                     "Replace --out even if it is not a results folder "
                     "(its contents are deleted)");
    runCmd->add_option("--set", run.set,
                       "KEY=VALUE over the file: a dotted key (fabric.ecn.kmin=10KB) or an ns-3 "
                       "attribute (ns3::SwitchMmu::Kmin=10240); repeatable");
    auto* seedOpt = runCmd->add_option("--seed", runSeed, "Random seed (overrides the file's)");
    runCmd->add_flag("--quiet", runQuiet, "No progress and no summary on stdout");
    runCmd->add_option("--cache", run.cache, "Image cache folder for VM endpoints");

    std::string validateFile;
    std::vector<std::string> validateSet;
    auto* validateCmd = app.add_subcommand("validate", "Check a scenario file without running it");
    validateCmd->add_option("file", validateFile, "Scenario file (YAML)")->required();
    validateCmd->add_option("--set", validateSet, "KEY=VALUE over the file, as for run");

    auto* listCmd = app.add_subcommand(
        "list", "List topology builders, workload types and every scenario key with its default");
    std::string attributesType;
    auto* attributesOpt =
        listCmd
            ->add_option("--attributes", attributesType,
                         "Instead: every ns-3 attribute of the models (name, type, initial "
                         "value, help), or only TYPE's (ns3::SwitchMmu)")
            ->expected(0, 1);

    std::string reportDir;
    auto* reportCmd =
        app.add_subcommand("report", "Re-render the plots and report.md of a results folder");
    reportCmd->add_option("dir", reportDir, "Results folder")->required();

    std::vector<std::string> statusPaths;
    auto* statusCmd = app.add_subcommand(
        "status",
        "Live counters of running emulations (every one on this host, or the sockets named)");
    statusCmd->add_option("socket", statusPaths, "Status socket, as the run printed it");

    // CLI11 reports a missing subcommand before a stray word: name the word first.
    if (!args.empty() && !args[0].empty() && args[0][0] != '-')
    {
        bool known = false;
        for (const auto* sub : app.get_subcommands({}))
        {
            known = known || sub->check_name(args[0]);
        }
        if (!known)
        {
            err << "fabemu: unknown subcommand '" << args[0] << "'\n"
                << "Run 'fabemu --help' for the subcommands.\n";
            return kExitBadInput;
        }
    }

    // CLI11 wants argv order reversed in a vector.
    std::vector<std::string> reversed(args.rbegin(), args.rend());
    try
    {
        app.parse(reversed);
    }
    catch (const CLI::CallForHelp&)
    {
        out << app.help();
        return kExitOk;
    }
    catch (const CLI::CallForAllHelp&)
    {
        out << app.help("", CLI::AppFormatMode::All);
        return kExitOk;
    }
    catch (const CLI::CallForVersion&)
    {
        out << app.version() << "\n";
        return kExitOk;
    }
    catch (const CLI::ParseError& e)
    {
        err << "fabemu: " << e.what() << "\n"
            << "Run 'fabemu --help' for the subcommands.\n";
        return kExitBadInput;
    }

    if (*runCmd)
    {
        if (*seedOpt)
        {
            run.seed = runSeed;
        }
        run.progress = runQuiet                            ? ProgressMode::Quiet
                       : (&out == &std::cout && isatty(1)) ? ProgressMode::Bar
                                                           : ProgressMode::Lines;
        return RunScenarioFile(run, out, err);
    }
    if (*validateCmd)
    {
        return ValidateScenarioFile(validateFile, validateSet, out, err);
    }
    if (*statusCmd)
    {
        if (statusPaths.empty())
        {
            statusPaths = FindStatusSockets();
            if (statusPaths.empty())
            {
                err << "fabemu status: no emulation is running on this host (no live status "
                       "socket)\n";
                return kExitFailure;
            }
        }
        int rc = kExitOk;
        for (const auto& path : statusPaths)
        {
            try
            {
                const auto doc = nlohmann::json::parse(ReadStatus(path));
                out << fmt::format("# {}\n{}\n", path, doc.dump(2));
            }
            catch (const std::exception& e)
            {
                err << "fabemu status: " << e.what() << "\n";
                rc = kExitFailure;
            }
        }
        return rc;
    }
    if (*listCmd)
    {
        if (*attributesOpt)
        {
            return ListAttributes(attributesType, out, err);
        }
        return ListScenarioKeys(out);
    }
    if (*reportCmd)
    {
        return ReportResults(reportDir, out, err);
    }
    if (*doctor)
    {
        return Doctor(out);
    }
    if (*demoCmd)
    {
        return RunDemo(demo, out, err);
    }
    if (*imageBuild)
    {
        const std::string path =
            BuildImage(imageCache.empty() ? DefaultCacheDir() : imageCache, imageExtra, err);
        if (path.empty())
        {
            return kExitFailure;
        }
        out << path << "\n";
        return kExitOk;
    }
    if (*vmCmd)
    {
        return RunVms(vm, out, err);
    }
    if (*emCmd)
    {
        return RunEmulation(em, out, err).exitCode;
    }
    return kExitOk;
}

} // namespace fabemu
