#include "emulator/fabemu/cli.h"

#include "containers/probe/host-rdma-probe.h"
#include "emulator/fabemu/demo.h"
#include "emulator/fabemu/emulate.h"
#include "emulator/fabemu/endpoints.h"
#include "emulator/fabemu/exit-codes.h"
#include "emulator/fabemu/host-command.h"
#include "emulator/fabemu/run.h"
#include "emulator/fabemu/status-server.h"
#include "emulator/fabemu/sweep.h"

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

/// Whether \p name is a program on PATH.
bool
Executable(const std::string& name)
{
    return !FindOnPath(name).empty();
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

/// What a subcommand's callback has to work with, and where it leaves its exit code.
struct Io
{
    std::ostream& out;
    std::ostream& err;
    int rc{kExitOk};
};

void
AddDoctor(CLI::App& app, Io& io)
{
    app.add_subcommand("doctor", "Report what this host can run: simulation, real endpoints "
                                 "(taps, QEMU, KVM), Soft-RoCE")
        ->callback([&io] { io.rc = Doctor(io.out); });
}

void
AddDemo(CLI::App& app, Io& io)
{
    auto demo = std::make_shared<DemoOptions>();
    auto* cmd = app.add_subcommand(
        "demo", "Run a small built-in scenario: an N:1 RoCEv2 incast over one switch with "
                "PFC and DCQCN, as fabemu run runs any; writes a results folder");
    cmd->add_option("--senders", demo->senders, "Senders into h0")->capture_default_str();
    cmd->add_option("--bytes", demo->bytes, "Bytes each sender writes")->capture_default_str();
    cmd->add_option("--rate", demo->rate, "Link rate")->capture_default_str();
    cmd->add_option("--pfc", demo->pfc, "PFC on the switch (true/false)")->capture_default_str();
    cmd->add_option("--cc", demo->cc, "Congestion control: dcqcn or none")->capture_default_str();
    cmd->add_option("--out", demo->out,
                    "Results folder; replaced if an earlier run wrote it, "
                    "else refused unless --force")
        ->capture_default_str();
    cmd->add_flag("--force", demo->force, "Replace --out even if it is not a results folder");
    cmd->add_flag("--quiet", demo->quiet, "Print nothing");
    cmd->callback([&io, demo] { io.rc = RunDemo(*demo, io.out, io.err); });
}

void
AddImage(CLI::App& app, Io& io)
{
    auto* image = app.add_subcommand("image", "The endpoint VM image");
    image->require_subcommand(1);
    auto cache = std::make_shared<std::string>();
    auto extra = std::make_shared<std::string>();
    auto* build = image->add_subcommand(
        "build", "Build the endpoint VM image from Debian packages (or find it cached); "
                 "prints its folder");
    build->add_option("--cache", *cache,
                      "Cache folder (default: $FABEMU_CACHE or ~/.cache/fabemu)");
    build->add_option("--extra", *extra, "List of extra host files for the image")
        ->check(CLI::ExistingFile);
    build->callback([&io, cache, extra] {
        const std::string path =
            BuildImage(cache->empty() ? DefaultCacheDir() : *cache, *extra, io.err);
        if (path.empty())
        {
            io.rc = kExitFailure;
            return;
        }
        io.out << path << "\n";
    });
}

void
AddVm(CLI::App& app, Io& io)
{
    auto vm = std::make_shared<VmOptions>();
    auto* cmd = app.add_subcommand(
        "vm", "Start endpoint VMs (h0, h1, ... at 10.0.0.1, ...) with Soft-RoCE or Soft-iWARP; "
              "run commands on them, or hold them until SIGINT/SIGTERM");
    cmd->add_option("--count", vm->count, "How many VMs")->capture_default_str();
    cmd->add_option("--device", vm->device, "rxe or siw")->capture_default_str();
    cmd->add_option("--mtu", vm->mtu, "eth0 MTU")->capture_default_str();
    cmd->add_flag("--bridge", vm->bridge, "Join their taps on a plain Linux bridge");
    cmd->add_option("--run", vm->run, "A command to run on every VM (repeatable)");
    cmd->add_flag("--hold", vm->hold, "Keep them until SIGINT or SIGTERM");
    cmd->add_option("--accel", vm->accel, "auto, kvm or tcg")->capture_default_str();
    cmd->add_option("--cache", vm->cache, "Image cache folder");
    cmd->add_option("--backend", vm->backend,
                    "vm (QEMU, works everywhere) or netns (a network namespace per "
                    "endpoint, where the host kernel gives namespaces rxe/siw; "
                    "see fabemu doctor)")
        ->capture_default_str();
    cmd->add_flag("--no-rdma", vm->noRdma,
                  "netns only: plain IP namespaces without an RDMA device");
    cmd->callback([&io, vm] { io.rc = RunVms(*vm, io.out, io.err); });
}

void
AddEmulate(CLI::App& app, Io& io)
{
    auto em = std::make_shared<EmulateOptions>();
    auto* cmd = app.add_subcommand(
        "emulate", "Real endpoint VMs over the modelled RoCEv2 fabric (a star), in real time: "
                   "start servers, run commands, report fabric counters and lag");
    cmd->add_option("--count", em->count, "Endpoints h0..hN-1 (10.0.0.1, ...)")
        ->capture_default_str();
    cmd->add_option("--rate", em->rate, "Link rate")->capture_default_str();
    cmd->add_option("--delay", em->delay, "Link delay")->capture_default_str();
    cmd->add_option("--server", em->servers, "'hN: command' started in the background first");
    cmd->add_option("--run", em->run, "'hN: command' run in turn; {hM} is hM's address");
    cmd->add_flag("--parallel", em->parallel, "Run the --run commands at the same time");
    cmd->add_option("--set", em->set, "ns3::Class::Attribute=value for the fabric (repeatable)");
    cmd->add_option("--cc", em->cc,
                    "dcqcn: the edges run DCQCN for the VMs (CNPs for CE marks, "
                    "rate per flow); none")
        ->capture_default_str();
    cmd->add_option("--backend", em->backend,
                    "vm, or netns: a network namespace per endpoint (where the host "
                    "kernel gives namespaces rxe; see fabemu doctor)")
        ->capture_default_str();
    cmd->add_flag("--no-rdma", em->noRdma, "netns only: plain IP namespaces, no RDMA device");
    auto* bridge = cmd->add_flag("--bridge", em->bridge,
                                 "Baseline: the same VMs and commands on a "
                                 "plain Linux bridge instead of the modelled fabric");
    cmd->add_flag("--relay", em->relay,
                  "Baseline: the same VMs and commands joined by the emulator's own "
                  "tap reads and writes with no model between them (what any "
                  "user-space hop costs on this host)")
        ->excludes(bridge);
    cmd->add_option("--lag-threshold", em->lagThreshold, "Lag above which timing is not faithful")
        ->capture_default_str();
    cmd->add_option("--scheduling", em->scheduling,
                    "shared: the simulation thread at nice -10 beside the VMs; realtime: "
                    "SCHED_FIFO, preempting them at once (lower lag, less VM throughput on a "
                    "busy host)")
        ->capture_default_str();
    cmd->add_option("--cache", em->cache, "Image cache folder");
    cmd->callback([&io, em] { io.rc = RunEmulation(*em, io.out, io.err).exitCode; });
}

void
AddRun(CLI::App& app, Io& io)
{
    struct Args
    {
        RunOptions run;
        bool quiet{false};
        uint64_t seed{0};
    };
    auto a = std::make_shared<Args>();
    auto* cmd = app.add_subcommand(
        "run", "Run a scenario file: a simulation, or real VM endpoints over the modelled fabric "
               "when it lists endpoints; writes a results folder with summary.json, CSVs, plots "
               "and report.md");
    cmd->add_option("file", a->run.file, "Scenario file (YAML)")->required();
    cmd->add_option("--out", a->run.out,
                    "Results folder (default: results/<name>); replaced if an "
                    "earlier run wrote it, else refused unless --force");
    cmd->add_flag("--force", a->run.force,
                  "Replace --out even if it is not a results folder (its contents are deleted)");
    cmd->add_option("--set", a->run.set,
                    "KEY=VALUE over the file: a dotted key (fabric.ecn.kmin=10KB) or an ns-3 "
                    "attribute (ns3::SwitchMmu::Kmin=10240); repeatable");
    // Checked as written: "-5" would otherwise wrap to a huge unsigned seed.
    auto* seed =
        cmd->add_option("--seed", a->seed, "Random seed (overrides the file's)")
            ->check(CLI::Validator(
                [](std::string& v) -> std::string {
                    return v.find_first_not_of("0123456789") == std::string::npos && !v.empty()
                               ? ""
                               : "must be a whole number from 1 up, not '" + v + "'";
                },
                "SEED"));
    cmd->add_flag("--quiet", a->quiet, "No progress and no summary on stdout");
    cmd->add_option("--cache", a->run.cache, "Image cache folder for VM endpoints");
    cmd->add_option("--ranks", a->run.ranks,
                    "Split the simulation among N ranks of ns-3's distributed simulator: runs "
                    "`mpirun -np N` of this command (RoCEv2 packet runs; see "
                    "docs/partitioned-runs.md). `mpirun -np N fabemu run FILE` works too")
        ->check(CLI::Range(1, 4096));
    cmd->add_option("--engine", a->run.engine,
                    "With --ranks: gtw (granted time window) or null (null messages)")
        ->check(CLI::IsMember({"gtw", "null"}))
        ->capture_default_str();
    cmd->callback([&io, a, seed] {
        if (*seed)
        {
            a->run.seed = a->seed;
        }
        a->run.progress = a->quiet                               ? ProgressMode::Quiet
                          : (&io.out == &std::cout && isatty(1)) ? ProgressMode::Bar
                                                                 : ProgressMode::Lines;
        io.rc = RunScenarioFile(a->run, io.out, io.err);
    });
}

void
AddSweep(CLI::App& app, Io& io)
{
    struct Args
    {
        SweepOptions sweep;
        std::string collect;
        std::string task;
        unsigned index{0};
    };
    auto a = std::make_shared<Args>();
    auto* cmd = app.add_subcommand(
        "sweep", "Run a scenario over the cross product of --grid values (and seeds), here "
                 "(-j N at once) or as a Slurm job array; DIR/sweep.csv holds one row per run, "
                 "DIR/plots a metric against a grid key. Run again to resume.");
    cmd->add_option("file", a->sweep.file, "Scenario file (YAML)");
    cmd->add_option("--grid", a->sweep.grid,
                    "KEY=V1,V2,...: a scenario key (as --set takes it) and its values; "
                    "repeatable, the runs are the cross product");
    cmd->add_option("--set", a->sweep.set, "KEY=VALUE for every run, as for run; repeatable");
    cmd->add_option("--seeds", a->sweep.seeds, "Run each combination with seeds 1..N");
    auto* jobs = cmd->add_option("-j,--jobs", a->sweep.jobs,
                                 "Runs at once here; with --slurm, the job array's limit")
                     ->capture_default_str();
    cmd->add_option("--out", a->sweep.out, "Sweep folder: DIR/<combination>/ per run");
    cmd->add_option("--plot", a->sweep.plots,
                    "METRIC[,XKEY[,LINEKEY]]: a sweep.csv metric against a grid key, one line "
                    "per value of another (default: the first two grid keys); repeatable");
    cmd->add_flag("--slurm", a->sweep.slurm, "Submit the runs as a Slurm job array (sbatch)");
    cmd->add_flag("--no-wait", a->sweep.noWait,
                  "With --slurm: submit and return; collect later with --collect DIR");
    cmd->add_option("--collect", a->collect,
                    "Instead: write DIR/sweep.csv and the plots from the runs finished so far");
    cmd->add_flag("--quiet", a->sweep.quiet, "No progress lines");
    // What each Slurm array task runs; not for people.
    cmd->add_option("--task", a->task)->group("");
    cmd->add_option("--index", a->index)->group("");
    cmd->callback([&io, a, jobs] {
        a->sweep.jobsGiven = jobs->count() > 0;
        if (!a->task.empty())
        {
            io.rc = RunSweepTask(a->task, a->index, io.err);
        }
        else if (!a->collect.empty())
        {
            io.rc = CollectSweep(a->collect, a->sweep.plots, io.out, io.err);
        }
        else if (a->sweep.file.empty())
        {
            io.err << "fabemu sweep: give a scenario file (or --collect DIR)\n";
            io.rc = kExitBadInput;
        }
        else
        {
            io.rc = RunSweep(a->sweep, io.out, io.err);
        }
    });
}

void
AddValidate(CLI::App& app, Io& io)
{
    auto file = std::make_shared<std::string>();
    auto set = std::make_shared<std::vector<std::string>>();
    auto* cmd = app.add_subcommand("validate", "Check a scenario file without running it");
    cmd->add_option("file", *file, "Scenario file (YAML)")->required();
    cmd->add_option("--set", *set, "KEY=VALUE over the file, as for run");
    cmd->callback([&io, file, set] { io.rc = ValidateScenarioFile(*file, *set, io.out, io.err); });
}

void
AddTopo(CLI::App& app, Io& io)
{
    auto file = std::make_shared<std::string>();
    auto set = std::make_shared<std::vector<std::string>>();
    auto* cmd = app.add_subcommand(
        "topo", "Print a scenario's server inside as nvidia-smi topo -m does (NV#, PIX, PHB)");
    cmd->add_option("file", *file, "Scenario file (YAML)")->required();
    cmd->add_option("--set", *set, "KEY=VALUE over the file, as for run");
    cmd->callback([&io, file, set] { io.rc = PrintNodeTopology(*file, *set, io.out, io.err); });
}

void
AddList(CLI::App& app, Io& io)
{
    auto type = std::make_shared<std::string>();
    auto* cmd = app.add_subcommand(
        "list", "List topology builders, workload types and every scenario key with its default");
    auto* attributes = cmd->add_option("--attributes", *type,
                                       "Instead: every ns-3 attribute of the models (name, type, "
                                       "initial value, help), or only TYPE's (ns3::SwitchMmu)")
                           ->expected(0, 1);
    cmd->callback([&io, type, attributes] {
        io.rc = *attributes ? ListAttributes(*type, io.out, io.err) : ListScenarioKeys(io.out);
    });
}

void
AddReport(CLI::App& app, Io& io)
{
    auto dir = std::make_shared<std::string>();
    auto* cmd =
        app.add_subcommand("report", "Re-render the plots and report.md of a results folder");
    cmd->add_option("dir", *dir, "Results folder")->required();
    cmd->callback([&io, dir] { io.rc = ReportResults(*dir, io.out, io.err); });
}

/// fabemu status: the live counters of each running emulation's status socket.
int
Status(std::vector<std::string> paths, std::ostream& out, std::ostream& err)
{
    if (paths.empty())
    {
        paths = FindStatusSockets();
        if (paths.empty())
        {
            err << "fabemu status: no emulation is running on this host (no live status "
                   "socket)\n";
            return kExitFailure;
        }
    }
    int rc = kExitOk;
    for (const auto& path : paths)
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

void
AddStatus(CLI::App& app, Io& io)
{
    auto paths = std::make_shared<std::vector<std::string>>();
    auto* cmd = app.add_subcommand(
        "status",
        "Live counters of running emulations (every one on this host, or the sockets named)");
    cmd->add_option("socket", *paths, "Status socket, as the run printed it");
    cmd->callback([&io, paths] { io.rc = Status(*paths, io.out, io.err); });
}

/// Parses \p args; the chosen subcommand's callback runs inside and leaves io.rc.
int
Parse(CLI::App& app, const std::vector<std::string>& args, Io& io)
{
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
            io.err << "fabemu: unknown subcommand '" << args[0] << "'\n"
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
        io.out << app.help();
        return kExitOk;
    }
    catch (const CLI::CallForAllHelp&)
    {
        io.out << app.help("", CLI::AppFormatMode::All);
        return kExitOk;
    }
    catch (const CLI::CallForVersion&)
    {
        io.out << app.version() << "\n";
        return kExitOk;
    }
    catch (const CLI::ParseError& e)
    {
        io.err << "fabemu: " << e.what() << "\n"
               << "Run 'fabemu --help' for the subcommands.\n";
        return kExitBadInput;
    }
    catch (const std::exception& e)
    {
        // What no subcommand answers itself (a fabric's plugin that does not load, ...):
        // said once, as a run-time failure, and never an abort.
        io.err << "fabemu: " << e.what() << "\n";
        return kExitFailure;
    }
    return io.rc;
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
    Io io{out, err};
    for (auto add : {AddDoctor, AddDemo, AddImage, AddVm, AddEmulate, AddRun, AddSweep, AddValidate,
                     AddTopo, AddList, AddReport, AddStatus})
    {
        add(app, io);
    }
    return Parse(app, args, io);
}

} // namespace fabemu
