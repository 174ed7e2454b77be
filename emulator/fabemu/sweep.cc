#include "emulator/fabemu/sweep.h"

#include "emulator/fabemu/exit-codes.h"
#include "emulator/fabemu/host-command.h"
#include "emulator/fabemu/results-folder.h"
#include "emulator/fabemu/run.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <thread>
#include <unistd.h>

namespace fabemu
{

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace
{

volatile std::sig_atomic_t g_stop = 0;

void
OnStopSignal(int)
{
    g_stop = 1;
}

/// SIGINT and SIGTERM set g_stop (and interrupt waits) while it lives.
class StopSignals
{
  public:
    StopSignals()
    {
        g_stop = 0;
        struct sigaction sa
        {
        };
        sa.sa_handler = OnStopSignal;
        sigemptyset(&sa.sa_mask);
        sa.sa_flags = 0; // no SA_RESTART: waitpid returns EINTR
        sigaction(SIGINT, &sa, &m_int);
        sigaction(SIGTERM, &sa, &m_term);
    }
    ~StopSignals()
    {
        sigaction(SIGINT, &m_int, nullptr);
        sigaction(SIGTERM, &m_term, nullptr);
    }
    StopSignals(const StopSignals&) = delete;
    StopSignals& operator=(const StopSignals&) = delete;

    /// For a child: the handlers the process had before.
    void Restore() const
    {
        sigaction(SIGINT, &m_int, nullptr);
        sigaction(SIGTERM, &m_term, nullptr);
    }

  private:
    struct sigaction m_int
    {
    };
    struct sigaction m_term
    {
    };
};

bool
Finished(const fs::path& dir, const SweepRun& run)
{
    return fs::exists(dir / (run.name + ".done"));
}

/// "[3/12] 002-cc=none: exit 0 in 4.2 s"
void
Report(std::ostream& out, size_t done, size_t total, const fs::path& dir, const SweepRun& run)
{
    const auto end = ReadRunEnd(dir, run);
    out << fmt::format("[{}/{}] {}: {}\n", done, total, run.name,
                       end ? fmt::format("exit {} in {:.1f} s", end->exit, end->wallTimeS)
                           : "no result (killed or crashed: see " + run.name + ".log)")
        << std::flush;
}

/// Forks run \p index; the child runs it and exits with its code. -1 if fork failed.
pid_t
StartRun(const fs::path& dir, size_t index, const StopSignals& signals, std::ostream& out)
{
    out << std::flush;
    std::cout.flush(); // else a child would write the parent's buffered output again
    std::fflush(nullptr);
    // Blocked across fork: a SIGTERM that reached the child before it had its own
    // handlers back would only set the child's copy of g_stop.
    sigset_t stops;
    sigset_t before;
    sigemptyset(&stops);
    sigaddset(&stops, SIGINT);
    sigaddset(&stops, SIGTERM);
    sigprocmask(SIG_BLOCK, &stops, &before);
    const pid_t parent = getpid();
    const pid_t pid = fork();
    if (pid == 0)
    {
        signals.Restore();
        // A sweep killed outright (SIGKILL) takes its runs with it.
        prctl(PR_SET_PDEATHSIG, SIGTERM);
        sigprocmask(SIG_SETMASK, &before, nullptr);
        if (getppid() != parent)
        {
            _exit(kExitFailure);
        }
        int rc = kExitFailure;
        try
        {
            rc = RunSweepTask(dir.string(), static_cast<unsigned>(index), std::cerr);
        }
        catch (const std::exception& e)
        {
            std::cerr << "fabemu sweep: " << e.what() << "\n";
        }
        std::cerr.flush();
        _exit(rc);
    }
    sigprocmask(SIG_SETMASK, &before, nullptr);
    return pid;
}

/// A run's child has ended: reports it, or, when it was stopped before it finished,
/// removes what it left so that a resume runs it again.
void
Reaped(const fs::path& dir, const SweepRun& run, pid_t pid, int status, bool stopping, size_t& done,
       size_t total, bool quiet, std::ostream& out)
{
    const auto end = ReadRunEnd(dir, run);
    // A run with VM endpoints catches the stop itself, tears down and exits 1.
    if (end && !(stopping && end->exit != kExitOk))
    {
        ++done;
        if (!quiet)
        {
            Report(out, done, total, dir, run);
        }
        return;
    }
    std::error_code ec;
    fs::remove(dir / (run.name + ".done"), ec);
    fs::remove_all(dir / TemporaryResultsName(run.name, pid), ec);
    out << fmt::format("{}: stopped before it finished ({}; see {}.log)\n", run.name,
                       WIFSIGNALED(status) ? strsignal(WTERMSIG(status)) : "interrupted", run.name)
        << std::flush;
}

/// Runs the pending runs here, \p jobs at once, each in a forked child. False if stopped.
bool
RunHere(const fs::path& dir, const SweepPlan& plan, const std::vector<size_t>& pending,
        unsigned jobs, bool quiet, std::ostream& out)
{
    StopSignals signals;
    std::map<pid_t, size_t> running;
    bool stopping = false;
    size_t next = 0;
    size_t done = plan.runs.size() - pending.size();
    while (next < pending.size() || !running.empty())
    {
        while (!g_stop && next < pending.size() && running.size() < jobs)
        {
            const size_t index = pending[next++];
            const pid_t pid = StartRun(dir, index, signals, out);
            if (pid < 0)
            {
                out << "fabemu sweep: fork failed: " << std::strerror(errno) << "\n";
                g_stop = 1;
                break;
            }
            running[pid] = index;
        }
        if (running.empty())
        {
            break;
        }
        if (g_stop && !stopping)
        {
            stopping = true;
            for (const auto& [child, index] : running)
            {
                kill(child, SIGTERM);
            }
        }
        int status = 0;
        // Polled, so that a signal between the check above and the wait is never missed.
        const pid_t pid = waitpid(-1, &status, WNOHANG);
        if (pid < 0 && errno == ECHILD)
        {
            break; // reaped elsewhere (SIGCHLD ignored): their .done files tell
        }
        if (pid <= 0)
        {
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
            continue;
        }
        const auto it = running.find(pid);
        if (it != running.end())
        {
            Reaped(dir, plan.runs[it->second], pid, status, stopping, done, plan.runs.size(), quiet,
                   out);
            running.erase(it);
        }
    }
    return !g_stop;
}

/// Slurm's MaxArraySize is 1001 by default: larger sweeps go in several arrays.
constexpr size_t kArrayChunk = 1000;

/// Submits the pending runs as Slurm job arrays (task i of array c runs the i-th index
/// of DIR/slurm-tasks-c.txt). Their ids, or none (why in \p err).
std::vector<std::string>
Submit(const fs::path& dir, const std::string& sbatch, const std::vector<size_t>& pending,
       const SweepOptions& opt, std::ostream& err)
{
    std::error_code ec;
    const fs::path self = fs::read_symlink("/proc/self/exe", ec);
    const fs::path script = dir / "sweep.sbatch";
    {
        std::ofstream s(script);
        s << "#!/bin/sh\n"
          << "# fabemu sweep: each task of a Slurm job array is one run of the plan in\n"
          << "# sweep.json: task i runs the run whose index is line i+1 of the file given\n"
          << "# as the argument. Written by fabemu sweep --slurm.\n"
          << "#SBATCH --ntasks=1\n"
          << "index=$(sed -n \"$((SLURM_ARRAY_TASK_ID + 1))p\" \"$1\")\n"
          << "exec " << ShellQuote(self.string()) << " sweep --task " << ShellQuote(dir.string())
          << " --index \"$index\"\n";
    }
    std::vector<std::string> ids;
    for (size_t c = 0; c * kArrayChunk < pending.size(); ++c)
    {
        const size_t n = std::min(kArrayChunk, pending.size() - c * kArrayChunk);
        const fs::path tasks = dir / fmt::format("slurm-tasks-{}.txt", c);
        {
            std::ofstream t(tasks);
            for (size_t i = 0; i < n; ++i)
            {
                t << pending[c * kArrayChunk + i] << "\n";
            }
        }
        const std::string cmd = fmt::format(
            "{} --parsable --job-name=fabemu-sweep --array=0-{}{} --output={} --chdir={} {} {} "
            "2>{}",
            ShellQuote(sbatch), n - 1, opt.jobsGiven ? fmt::format("%{}", opt.jobs) : "",
            ShellQuote((dir / fmt::format("slurm-{}-%a.out", c)).string()),
            ShellQuote(dir.string()), ShellQuote(script.string()), ShellQuote(tasks.string()),
            ShellQuote((dir / "sbatch.err").string()));
        std::string said;
        const int rc = Capture(cmd, said);
        // --parsable: "id" or "id;cluster" on the last line; warnings go to stderr.
        while (!said.empty() && said.back() == '\n')
        {
            said.pop_back();
        }
        std::string id = said.substr(said.find_last_of('\n') + 1);
        id = id.substr(0, id.find(';'));
        if (rc != 0 || id.empty() || id.find_first_not_of("0123456789") != std::string::npos)
        {
            std::ifstream e(dir / "sbatch.err");
            std::stringstream why;
            why << e.rdbuf();
            err << fmt::format("fabemu sweep: sbatch failed (exit {}): {}{}\n", rc, said,
                               why.str());
            for (const auto& submitted : ids)
            {
                std::string ignored;
                Capture("scancel " + submitted + " 2>&1", ignored);
            }
            return {};
        }
        ids.push_back(id);
    }
    std::ofstream(dir / "slurm-jobs") << fmt::format("{}\n", fmt::join(ids, " "));
    return ids;
}

/// The jobs of DIR/slurm-jobs that squeue still shows, or "" (none, or no such file).
std::string
QueuedJobs(const fs::path& dir)
{
    std::ifstream in(dir / "slurm-jobs");
    std::vector<std::string> ids;
    for (std::string id; in >> id;)
    {
        ids.push_back(id);
    }
    if (ids.empty())
    {
        return "";
    }
    std::string said;
    const int rc =
        Capture(fmt::format("squeue -h -o %A -j {} 2>/dev/null", fmt::join(ids, ",")), said);
    return rc == 0 && said.find_first_not_of(" \n") != std::string::npos
               ? fmt::format("{}", fmt::join(ids, " "))
               : "";
}

/// Waits for the Slurm jobs \p ids, reporting runs as they finish. False if stopped
/// (the jobs cancelled) or if squeue kept failing.
bool
WaitForJob(const fs::path& dir, const SweepPlan& plan, const std::vector<size_t>& pending,
           const std::vector<std::string>& ids, bool quiet, std::ostream& out)
{
    StopSignals signals;
    std::vector<bool> reported(plan.runs.size(), false);
    size_t done = plan.runs.size() - pending.size();
    const std::string list = fmt::format("{}", fmt::join(ids, ","));
    int failures = 0;
    while (true)
    {
        if (g_stop)
        {
            std::string ignored;
            Capture(fmt::format("scancel {} 2>&1", fmt::join(ids, " ")), ignored);
            out << fmt::format("fabemu sweep: interrupted: cancelled Slurm job(s) {}\n", list);
            return false;
        }
        std::string queued;
        const int rc = Capture("squeue -h -o %A -j " + list + " 2>&1", queued);
        for (size_t i : pending)
        {
            if (!reported[i] && Finished(dir, plan.runs[i]))
            {
                reported[i] = true;
                if (!quiet)
                {
                    Report(out, ++done, plan.runs.size(), dir, plan.runs[i]);
                }
            }
        }
        // squeue forgets a job soon after it ends ("Invalid job id"): gone either way.
        const bool empty = queued.find_first_not_of(" \n") == std::string::npos;
        if ((rc == 0 && empty) || queued.find("Invalid job id") != std::string::npos)
        {
            return true;
        }
        failures = rc == 0 ? 0 : failures + 1;
        if (failures >= 30) // a minute of errors: Slurm is not answering
        {
            out << fmt::format("fabemu sweep: squeue keeps failing ({}); the job(s) {} may still "
                               "run: fabemu sweep --collect {} later\n",
                               queued, list, ShellQuote(dir.string()));
            return false;
        }
        std::this_thread::sleep_for(std::chrono::seconds(2));
    }
}

/// Makes \p dir, or checks that it holds this very sweep (to resume). "" or the problem.
std::string
PrepareFolder(const fs::path& dir, const SweepPlan& plan, bool& resumed)
{
    std::error_code ec;
    resumed = false;
    if (fs::exists(dir / "sweep.json", ec))
    {
        try
        {
            if (!SweepPlan::Read(dir).SameAs(plan))
            {
                return fmt::format("{} holds another sweep (its sweep.json has another file, "
                                   "--set, grid or seeds); choose another --out",
                                   dir.string());
            }
        }
        catch (const std::exception& e)
        {
            return e.what();
        }
        resumed = true;
        return "";
    }
    if (fs::exists(dir, ec) && (!fs::is_directory(dir, ec) || !fs::is_empty(dir, ec)))
    {
        return fmt::format("{} exists and is not a sweep folder (no sweep.json); choose another "
                           "--out",
                           dir.string());
    }
    fs::create_directories(dir, ec);
    if (ec)
    {
        return fmt::format("cannot create {}: {}", dir.string(), ec.message());
    }
    plan.Write(dir);
    return "";
}

/// The checks before anything runs: flags, the plan, the plots, the folder.
int
Prepare(const SweepOptions& opt, SweepPlan& plan, std::string& sbatch, std::ostream& err)
{
    auto bad = [&err](const std::string& why) {
        err << "fabemu sweep: " << why << "\n";
        return kExitBadInput;
    };
    if (opt.grid.empty() && opt.seeds == 0)
    {
        return bad("nothing to sweep: give --grid KEY=V1,V2,... and/or --seeds N");
    }
    if (opt.out.empty())
    {
        return bad("--out DIR is required: each run goes into DIR/<combination>/");
    }
    if (opt.noWait && !opt.slurm)
    {
        return bad("--no-wait goes with --slurm (a local sweep always waits)");
    }
    if (opt.jobs == 0)
    {
        return bad("-j must be 1 or more");
    }
    if (opt.slurm)
    {
        sbatch = FindOnPath("sbatch");
        if (sbatch.empty() || FindOnPath("squeue").empty())
        {
            return bad(fmt::format("--slurm: {} is not on PATH (install Debian's slurm-client "
                                   "and point it at a cluster, or run here with -j N)",
                                   sbatch.empty() ? "sbatch" : "squeue"));
        }
    }
    try
    {
        std::vector<GridAxis> grid;
        for (const auto& g : opt.grid)
        {
            grid.push_back(ParseGridAxis(g));
            for (const auto& kv : opt.set)
            {
                if (kv.substr(0, kv.find('=')) == grid.back().key)
                {
                    return bad(fmt::format("--set {} and --grid {}: one key, two sources; "
                                           "give it in one of them",
                                           kv, g));
                }
            }
        }
        for (const auto& kv : opt.set)
        {
            if (opt.seeds > 0 && kv.substr(0, kv.find('=')) == "seed")
            {
                return bad(fmt::format("--set {} and --seeds both set the seed: use one", kv));
            }
        }
        plan = MakeSweepPlan(opt.file, opt.set, grid, opt.seeds);
    }
    catch (const std::invalid_argument& e)
    {
        return bad(e.what());
    }
    if (const std::string why = CheckSweepPlan(plan); !why.empty())
    {
        return bad(why);
    }
    for (const auto& spec : opt.plots)
    {
        if (const std::string why = CheckPlotSpec(spec, plan); !why.empty())
        {
            return bad(why);
        }
    }
    return kExitOk;
}

/// sweep.csv, the plots and the closing lines. Exit 0 when every run exited 0; 1 when one
/// failed or did not finish; else 3 when one did not meet the file's expectations.
int
Collect(const fs::path& dir, const SweepPlan& plan, const std::vector<std::string>& plots,
        std::ostream& out, std::ostream& err)
{
    const auto rows = ReadSweepRows(dir, plan);
    WriteSweepCsv(dir, plan, rows);
    const auto drawn = DrawSweepPlots(dir, plan, rows, plots, err);
    WriteSweepReport(dir, plan, rows, drawn);
    size_t finished = 0;
    std::vector<std::string> failed;
    std::vector<std::string> unmet;
    for (size_t r = 0; r < rows.size(); ++r)
    {
        if (!rows[r].exit)
        {
            continue; // not finished
        }
        ++finished;
        if (*rows[r].exit == kExitExpectation)
        {
            unmet.push_back(plan.runs[r].name);
        }
        else if (*rows[r].exit != kExitOk)
        {
            failed.push_back(plan.runs[r].name);
        }
    }
    out << fmt::format("{}/sweep.csv and report.md: {} of {} runs finished", dir.string(), finished,
                       plan.runs.size());
    out << (drawn.empty() ? "" : fmt::format("; {}", fmt::join(drawn, ", "))) << "\n";
    if (!failed.empty())
    {
        out << fmt::format("{} run(s) failed (exit 1 or 2; their .log says why): {}\n",
                           failed.size(), fmt::join(failed, ", "));
    }
    if (!unmet.empty())
    {
        out << fmt::format("{} run(s) did not meet the file's expect: (exit 3): {}\n", unmet.size(),
                           fmt::join(unmet, ", "));
    }
    if (finished < plan.runs.size() || !failed.empty())
    {
        return kExitFailure;
    }
    return unmet.empty() ? kExitOk : kExitExpectation;
}

/// DIR/sweep.json, or none with why on \p err ("fabemu sweep FLAG: ...").
std::optional<SweepPlan>
ReadPlan(const std::string& dir, const char* flag, std::ostream& err)
{
    try
    {
        return SweepPlan::Read(dir);
    }
    catch (const std::exception& e)
    {
        err << "fabemu sweep " << flag << ": " << e.what() << "\n";
        return std::nullopt;
    }
}

} // namespace

int
RunSweep(const SweepOptions& opt, std::ostream& out, std::ostream& err)
{
    SweepPlan plan;
    std::string sbatch;
    if (const int rc = Prepare(opt, plan, sbatch, err); rc != kExitOk)
    {
        return rc;
    }
    const fs::path dir = fs::absolute(opt.out).lexically_normal();
    bool resumed = false;
    if (const std::string why = PrepareFolder(dir, plan, resumed); !why.empty())
    {
        err << "fabemu sweep: " << why << "\n";
        return kExitBadInput;
    }
    // One sweep at a time in a folder: a second would run the same runs again.
    const int lock = open((dir / "sweep.lock").c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0644);
    if (lock < 0 || flock(lock, LOCK_EX | LOCK_NB) != 0)
    {
        err << fmt::format("fabemu sweep: another fabemu sweep is running in {} (it holds "
                           "sweep.lock); wait for it to end\n",
                           dir.string());
        if (lock >= 0)
        {
            close(lock);
        }
        return kExitBadInput;
    }
    struct Unlock
    {
        int fd;
        ~Unlock() { close(fd); }
    } unlock{lock};
    if (const std::string queued = opt.slurm ? QueuedJobs(dir) : ""; !queued.empty())
    {
        err << fmt::format("fabemu sweep: Slurm job(s) {} of this sweep are still queued or "
                           "running; wait for them (then fabemu sweep --collect {}) or scancel "
                           "them\n",
                           queued, ShellQuote(dir.string()));
        return kExitBadInput;
    }
    std::vector<size_t> pending;
    for (size_t i = 0; i < plan.runs.size(); ++i)
    {
        if (!Finished(dir, plan.runs[i]))
        {
            pending.push_back(i);
        }
    }
    if (!opt.quiet)
    {
        out << fmt::format("sweep: {} run(s) of {} in {}{}\n", plan.runs.size(), plan.file,
                           dir.string(),
                           resumed ? fmt::format(" (resumed: {} finished before, not rerun)",
                                                 plan.runs.size() - pending.size())
                                   : "");
    }
    bool complete = true;
    if (!pending.empty() && opt.slurm)
    {
        const auto ids = Submit(dir, sbatch, pending, opt, err);
        if (ids.empty())
        {
            return kExitFailure;
        }
        out << fmt::format("sweep: submitted Slurm job {} ({} array task(s))\n",
                           fmt::join(ids, ", "), pending.size());
        if (opt.noWait)
        {
            out << fmt::format("When it ends, collect the results with: fabemu sweep --collect "
                               "{}\n",
                               ShellQuote(dir.string()));
            return kExitOk;
        }
        complete = WaitForJob(dir, plan, pending, ids, opt.quiet, out);
    }
    else if (!pending.empty())
    {
        complete = RunHere(dir, plan, pending, opt.jobs, opt.quiet, out);
    }
    const int rc = Collect(dir, plan, opt.plots, out, err);
    if (!complete)
    {
        out << "fabemu sweep: interrupted; the same command resumes it (finished runs are not "
               "rerun)\n";
        return kExitFailure;
    }
    return rc;
}

int
CollectSweep(const std::string& dir, const std::vector<std::string>& plots, std::ostream& out,
             std::ostream& err)
{
    const auto read = ReadPlan(dir, "--collect", err);
    if (!read)
    {
        return kExitBadInput;
    }
    const SweepPlan& plan = *read;
    for (const auto& spec : plots)
    {
        if (const std::string why = CheckPlotSpec(spec, plan); !why.empty())
        {
            err << "fabemu sweep --collect: " << why << "\n";
            return kExitBadInput;
        }
    }
    return Collect(fs::absolute(dir).lexically_normal(), plan, plots, out, err);
}

int
RunSweepTask(const std::string& dir, unsigned index, std::ostream& err)
{
    const auto read = ReadPlan(dir, "--task", err);
    if (!read)
    {
        return kExitBadInput;
    }
    const SweepPlan& plan = *read;
    if (index >= plan.runs.size())
    {
        err << fmt::format("fabemu sweep --task: {} has runs 0..{}, not {}\n", dir,
                           plan.runs.size() - 1, index);
        return kExitBadInput;
    }
    const SweepRun& run = plan.runs[index];
    RunOptions o;
    o.file = plan.file;
    o.set = run.Overrides(plan.set, plan.grid);
    o.out = (fs::path(dir) / run.name).string();
    o.progress = ProgressMode::Lines;
    const auto t0 = std::chrono::steady_clock::now();
    std::ofstream log(fs::path(dir) / (run.name + ".log"));
    const int rc = RunScenarioFile(o, log, log);
    log.close();
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const fs::path done = fs::path(dir) / (run.name + ".done");
    std::ofstream(done.string() + ".tmp")
        << json{{"exit", rc}, {"wall_time_s", wall}}.dump() << "\n";
    std::error_code ec;
    fs::rename(done.string() + ".tmp", done, ec);
    return rc;
}

} // namespace fabemu
