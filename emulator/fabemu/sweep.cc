#include "emulator/fabemu/sweep.h"

#include "emulator/fabemu/exit-codes.h"
#include "emulator/fabemu/run.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <sys/wait.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
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

std::string
ShellQuote(const std::string& s)
{
    std::string q = "'";
    for (char c : s)
    {
        q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    }
    return q + "'";
}

/// The full path of \p tool on PATH, or "".
std::string
FindOnPath(const std::string& tool)
{
    const char* path = std::getenv("PATH");
    std::stringstream ss(path ? path : "/usr/bin:/bin");
    for (std::string d; std::getline(ss, d, ':');)
    {
        const fs::path p = fs::path(d.empty() ? "." : d) / tool;
        if (access(p.c_str(), X_OK) == 0)
        {
            return p.string();
        }
    }
    return "";
}

/// Runs \p cmd by /bin/sh; its standard output in \p out, its exit code returned.
int
Capture(const std::string& cmd, std::string& out)
{
    out.clear();
    FILE* pipe = popen(cmd.c_str(), "r");
    if (!pipe)
    {
        return -1;
    }
    char buf[512];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, pipe)) > 0)
    {
        out.append(buf, n);
    }
    const int status = pclose(pipe);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/// "[3/12] 002-cc=none: exit 0 in 4.2 s"
void
Report(std::ostream& out, size_t done, size_t total, const fs::path& dir, const SweepRun& run)
{
    std::string what = "no result (killed or crashed: see " + run.name + ".log)";
    try
    {
        std::ifstream in(dir / (run.name + ".done"));
        if (in)
        {
            const json d = json::parse(in);
            what = fmt::format("exit {} in {:.1f} s", d.at("exit").get<int>(),
                               d.at("wall_time_s").get<double>());
        }
    }
    catch (const std::exception&)
    {
    }
    out << fmt::format("[{}/{}] {}: {}\n", done, total, run.name, what) << std::flush;
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
            out << std::flush;
            std::cout.flush(); // else a child would write the parent's buffered output again
            std::fflush(nullptr);
            // Blocked across fork: a SIGTERM that reached the child before it had its
            // own handlers back would only set the child's copy of g_stop.
            sigset_t stops;
            sigset_t before;
            sigemptyset(&stops);
            sigaddset(&stops, SIGINT);
            sigaddset(&stops, SIGTERM);
            sigprocmask(SIG_BLOCK, &stops, &before);
            const pid_t pid = fork();
            if (pid == 0)
            {
                signals.Restore();
                sigprocmask(SIG_SETMASK, &before, nullptr);
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
        const pid_t pid = waitpid(-1, &status, 0);
        if (pid < 0 && errno == ECHILD)
        {
            break; // reaped elsewhere (SIGCHLD ignored): their .done files tell
        }
        if (pid < 0)
        {
            continue; // EINTR: the loop's top stops the runs if it was SIGINT or SIGTERM
        }
        const auto it = running.find(pid);
        if (it == running.end())
        {
            continue; // not one of ours
        }
        const SweepRun& run = plan.runs[it->second];
        if (Finished(dir, run))
        {
            ++done;
            if (!quiet)
            {
                Report(out, done, plan.runs.size(), dir, run);
            }
        }
        else
        {
            // Killed before it finished: its half-written results folder goes too.
            std::error_code ec;
            fs::remove_all(dir / fmt::format(".{}.tmp-{}", run.name, pid), ec);
            out << fmt::format("{}: stopped before it finished ({}; see {}.log)\n", run.name,
                               WIFSIGNALED(status) ? strsignal(WTERMSIG(status)) : "no result",
                               run.name)
                << std::flush;
        }
        running.erase(it);
    }
    return !g_stop;
}

/// Submits the pending runs as one Slurm job array. Its id, or "" (why in \p err).
std::string
Submit(const fs::path& dir, const std::string& sbatch, const std::vector<size_t>& pending,
       const SweepOptions& opt, std::ostream& err)
{
    std::error_code ec;
    const fs::path self = fs::read_symlink("/proc/self/exe", ec);
    const fs::path script = dir / "sweep.sbatch";
    {
        std::ofstream s(script);
        s << "#!/bin/sh\n"
          << "# fabemu sweep: each task of this Slurm job array is one run of the plan in\n"
          << "# sweep.json; the task index is the run's. Written by fabemu sweep --slurm.\n"
          << "#SBATCH --ntasks=1\n"
          << "exec " << ShellQuote(self.string()) << " sweep --task " << ShellQuote(dir.string())
          << " --index \"$SLURM_ARRAY_TASK_ID\"\n";
    }
    std::vector<std::string> indexes;
    for (size_t i : pending)
    {
        indexes.push_back(std::to_string(i));
    }
    const std::string array = fmt::format("{}{}", fmt::join(indexes, ","),
                                          opt.jobsGiven ? fmt::format("%{}", opt.jobs) : "");
    const std::string cmd = fmt::format(
        "{} --parsable --job-name=fabemu-sweep --array={} --output={} --chdir={} {} 2>&1",
        ShellQuote(sbatch), array, ShellQuote((dir / "slurm-%a.out").string()),
        ShellQuote(dir.string()), ShellQuote(script.string()));
    std::string said;
    const int rc = Capture(cmd, said);
    const std::string id = said.substr(0, said.find_first_of(";\n"));
    if (rc != 0 || id.empty() || id.find_first_not_of("0123456789") != std::string::npos)
    {
        err << fmt::format("fabemu sweep: sbatch failed (exit {}): {}", rc, said);
        return "";
    }
    return id;
}

/// Waits for Slurm job \p id, reporting runs as they finish. False if stopped (cancelled).
bool
WaitForJob(const fs::path& dir, const SweepPlan& plan, const std::vector<size_t>& pending,
           const std::string& id, bool quiet, std::ostream& out)
{
    StopSignals signals;
    const std::string squeue = FindOnPath("squeue");
    std::vector<bool> reported(plan.runs.size(), false);
    size_t done = plan.runs.size() - pending.size();
    while (true)
    {
        std::string queued;
        const int rc =
            squeue.empty() ? -1 : Capture(ShellQuote(squeue) + " -h -j " + id + " 2>&1", queued);
        // squeue forgets a job soon after it ends ("Invalid job id"): gone either way.
        const bool gone = rc != 0 || queued.find_first_not_of(" \n") == std::string::npos;
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
        if (gone)
        {
            return true;
        }
        if (g_stop)
        {
            std::string ignored;
            Capture("scancel " + id + " 2>&1", ignored);
            out << "fabemu sweep: interrupted: cancelled Slurm job " << id << "\n";
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
                return fmt::format("{} holds another sweep (its sweep.json has other keys, values, "
                                   "seeds or file); choose another --out",
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
        if (sbatch.empty())
        {
            return bad("--slurm: sbatch is not on PATH (install Debian's slurm-client and point "
                       "it at a cluster, or run here with -j N)");
        }
    }
    try
    {
        std::vector<GridAxis> grid;
        for (const auto& g : opt.grid)
        {
            grid.push_back(ParseGridAxis(g));
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
    const size_t finished = WriteSweepCsv(dir, plan);
    const auto drawn = DrawSweepPlots(dir, plan, plots, err);
    WriteSweepReport(dir, plan, drawn);
    std::vector<std::string> failed;
    std::vector<std::string> unmet;
    for (const auto& run : plan.runs)
    {
        try
        {
            std::ifstream in(dir / (run.name + ".done"));
            const int rc = in ? json::parse(in).at("exit").get<int>() : kExitOk;
            (rc == kExitExpectation ? unmet : failed).push_back(run.name);
            if (rc == kExitOk)
            {
                failed.pop_back();
            }
        }
        catch (const std::exception&)
        {
            failed.push_back(run.name);
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
        const std::string id = Submit(dir, sbatch, pending, opt, err);
        if (id.empty())
        {
            return kExitFailure;
        }
        out << fmt::format("sweep: submitted Slurm job {} ({} array task(s))\n", id,
                           pending.size());
        if (opt.noWait)
        {
            out << fmt::format("When it ends, collect the results with: fabemu sweep --collect "
                               "{}\n",
                               ShellQuote(dir.string()));
            return kExitOk;
        }
        complete = WaitForJob(dir, plan, pending, id, opt.quiet, out);
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
    SweepPlan plan;
    try
    {
        plan = SweepPlan::Read(dir);
    }
    catch (const std::exception& e)
    {
        err << "fabemu sweep --collect: " << e.what() << "\n";
        return kExitBadInput;
    }
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
    SweepPlan plan;
    try
    {
        plan = SweepPlan::Read(dir);
    }
    catch (const std::exception& e)
    {
        err << "fabemu sweep --task: " << e.what() << "\n";
        return kExitBadInput;
    }
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
