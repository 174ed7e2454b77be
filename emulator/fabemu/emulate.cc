#include "emulator/fabemu/emulate.h"

#include "containers/launcher/vm-launcher.h"
#include "containers/netns/netns-endpoint.h"
#include "containers/probe/host-rdma-probe.h"
#include "emulator/edge/edge-port.h"
#include "emulator/edge/lag-monitor.h"
#include "emulator/edge/realtime-simulator.h"
#include "emulator/edge/realtime-thread.h"
#include "emulator/edge/tap-relay.h"
#include "emulator/fabemu/endpoints.h"
#include "emulator/fabemu/exit-codes.h"
#include "emulator/fabemu/status-server.h"
#include "emulator/fabemu/time-resolution.h"
#include "emulator/runner/fabric.h"
#include "emulator/runner/fault-schedule.h"
#include "emulator/runner/scenario-fabric.h"
#include "emulator/runner/summary.h"
#include "scenarios/src/results.h"

#include "ns3/abort.h"
#include "ns3/config.h"
#include "ns3/double.h"
#include "ns3/global-value.h"
#include "ns3/host-address.h"
#include "ns3/simulator.h"
#include "ns3/string.h"
#include "ns3/uinteger.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <future>
#include <map>
#include <mutex>
#include <optional>
#include <pthread.h>
#include <sstream>
#include <thread>
#include <unistd.h>

namespace fabemu
{

using namespace ns3;

namespace
{

/// Runs the real-time simulator on its own thread; stops and joins it on every path out.
class SimulatorThread
{
  public:
    explicit SimulatorThread(ThreadScheduling how)
        : m_done(m_finished.get_future()),
          m_tuned(m_tunedPromise.get_future()),
          m_thread([this, how] {
              // Named for top -H, perf and taskset: the one thread that carries the frames.
              (void)pthread_setname_np(pthread_self(), "fabemu-sim");
              m_tunedPromise.set_value(TuneRealtimeThread(how));
              const auto start = std::chrono::steady_clock::now();
              Simulator::Run();
              m_wall = std::chrono::steady_clock::now() - start;
              m_cpu = ThreadCpuTime();
              m_finished.set_value();
          })
    {
    }
    /// What the simulation thread got: "SCHED_FIFO" or "nice N" (CurrentThreadScheduling).
    std::string Scheduling()
    {
        if (m_tuned.valid())
        {
            m_scheduling = m_tuned.get();
        }
        return m_scheduling;
    }
    /// The simulation thread's CPU time (user and system) and the wall time it ran for;
    /// after Stop.
    std::chrono::nanoseconds Cpu() const { return m_cpu; }
    std::chrono::nanoseconds Wall() const { return m_wall; }
    ~SimulatorThread() { Stop(); }
    void Stop()
    {
        if (m_thread.joinable())
        {
            // Thread-safe in the real-time simulator: runs on the simulation thread.
            Simulator::ScheduleWithContext(0, Time(0), &Simulator::Stop);
            // That event is due at the wall clock's now; a simulation that has fallen
            // behind would reach it only after everything earlier. Then stop it outright.
            if (m_done.wait_for(std::chrono::seconds(2)) != std::future_status::ready)
            {
                Simulator::Stop();
            }
            m_thread.join();
        }
    }

  private:
    std::promise<void> m_finished;
    std::future<void> m_done;
    std::promise<std::string> m_tunedPromise;
    std::future<std::string> m_tuned;
    std::string m_scheduling;
    std::chrono::nanoseconds m_cpu{0};  ///< written by the thread before m_finished
    std::chrono::nanoseconds m_wall{0}; ///< likewise
    std::thread m_thread;               // last: it starts at once and uses the members above
};

CommandResult Collect(AgentClient& agent, uint64_t id, std::chrono::seconds timeout);

/// Turns SIGINT/SIGTERM into a clean stop: the signals are blocked in every thread
/// (threads made later inherit the mask) and one thread waits for them; on one it
/// kills the VMs' QEMU processes, so every agent call fails and the run unwinds
/// through its destructors, leaving nothing behind.
class SignalGuard
{
  public:
    SignalGuard()
    {
        sigemptyset(&m_set);
        sigaddset(&m_set, SIGINT);
        sigaddset(&m_set, SIGTERM);
        pthread_sigmask(SIG_BLOCK, &m_set, &m_old);
        m_thread = std::thread([this] {
            const timespec tick{0, 200'000'000};
            while (!m_done)
            {
                const int sig = sigtimedwait(&m_set, nullptr, &tick);
                if (sig > 0)
                {
                    m_signal = sig;
                    std::lock_guard<std::mutex> lock(m_mutex);
                    for (const auto& stop : m_stops)
                    {
                        stop();
                    }
                }
            }
        });
    }
    ~SignalGuard()
    {
        m_done = true;
        m_thread.join();
        pthread_sigmask(SIG_SETMASK, &m_old, nullptr);
    }
    /// \p stop ends an endpoint's part in the run (kills its QEMU, or its commands).
    void Watch(std::function<void()> stop)
    {
        std::lock_guard<std::mutex> lock(m_mutex);
        m_stops.push_back(stop);
        if (m_signal)
        {
            stop();
        }
    }
    int Signal() const { return m_signal; }

  private:
    sigset_t m_set;
    sigset_t m_old;
    std::thread m_thread;
    std::atomic<bool> m_done{false};
    std::atomic<int> m_signal{0};
    std::mutex m_mutex;
    std::vector<std::function<void()>> m_stops;
};

/// A running endpoint the emulator drives: a VM through its guest agent, or a
/// network namespace. Wait never throws: a failure becomes the command's result.
class Endpoint
{
  public:
    virtual ~Endpoint() = default;
    virtual const std::string& Interface() const = 0; ///< its tap, or the host end of its veth
    virtual uint64_t Start(const std::string& cmd, std::chrono::seconds timeout) = 0;
    virtual CommandResult Wait(uint64_t id, std::chrono::seconds timeout) = 0;
    /// The command's result if it ended within \p wait, else nothing (it runs on).
    virtual std::optional<CommandResult> Poll(uint64_t id, std::chrono::milliseconds wait) = 0;
    /// Stops a started command; quiet when it or its endpoint is already gone.
    virtual void Kill(uint64_t id) = 0;
    /// Whether Poll returns at once when the command runs on (a namespace's waits for it).
    virtual bool Pollable() const { return true; }
    /// Crashes the endpoint (a crash fault): a VM's QEMU is killed at once. Safe from
    /// any thread; its commands then fail as on any dead VM.
    virtual void Crash() = 0;
    virtual std::chrono::milliseconds ReadyTime() const = 0;
};

class VmEndpoint : public Endpoint
{
  public:
    explicit VmEndpoint(std::unique_ptr<Vm> vm) : m_vm(std::move(vm)) {}
    const std::string& Interface() const override { return m_vm->Spec().tap; }
    uint64_t Start(const std::string& cmd, std::chrono::seconds timeout) override
    {
        return m_vm->Agent().Start(cmd, timeout);
    }
    CommandResult Wait(uint64_t id, std::chrono::seconds timeout) override
    {
        return Collect(m_vm->Agent(), id, timeout);
    }
    std::optional<CommandResult> Poll(uint64_t id, std::chrono::milliseconds wait) override
    {
        try
        {
            return m_vm->Agent().Wait(id, wait);
        }
        catch (const AgentTimeout&)
        {
            return std::nullopt; // still running; the connection stays
        }
        catch (const AgentError& e)
        {
            CommandResult failed; // the VM is gone
            failed.err = std::string("fabemu: ") + e.what() + "\n";
            return failed;
        }
    }
    void Kill(uint64_t id) override
    {
        try
        {
            m_vm->Agent().Kill(id);
        }
        catch (const AgentError&)
        {
            // The VM is gone: nothing left to kill.
        }
    }
    void Crash() override
    {
        if (const pid_t pid = m_vm->Pid(); pid > 0)
        {
            kill(pid, SIGKILL); // reaped when the Vm goes
        }
    }
    std::chrono::milliseconds ReadyTime() const override { return m_vm->ReadyTime(); }
    pid_t Pid() const { return m_vm->Pid(); }

  private:
    std::unique_ptr<Vm> m_vm;
};

class NamespaceEndpoint : public Endpoint
{
  public:
    explicit NamespaceEndpoint(const NetnsSpec& spec) : m_ns(spec) {}
    const std::string& Interface() const override { return m_ns.Spec().hostIf; }
    uint64_t Start(const std::string& cmd, std::chrono::seconds timeout) override
    {
        return m_ns.Start(cmd, timeout);
    }
    CommandResult Wait(uint64_t id, std::chrono::seconds) override
    {
        // The timeout given to Start holds: Wait ends by then.
        const auto r = m_ns.Wait(id);
        CommandResult c;
        c.exitCode = r.exitCode;
        c.out = r.out;
        return c;
    }
    std::optional<CommandResult> Poll(uint64_t id, std::chrono::milliseconds) override
    {
        // A namespace's command cannot be polled: wait for it (its timeout holds).
        return Wait(id, std::chrono::seconds(0));
    }
    void Kill(uint64_t) override { m_ns.KillAll(); }
    void Crash() override { m_ns.KillAll(); } // not reached: crash faults are for VMs
    bool Pollable() const override { return false; }
    std::chrono::milliseconds ReadyTime() const override { return m_ns.ReadyTime(); }
    void KillAll() { m_ns.KillAll(); }

  private:
    NetnsEndpoint m_ns;
};

/// Waits for a started command; a timeout or a dead VM becomes that command's recorded
/// failure (exit -1, the reason as its output) instead of ending the whole run.
/// A signal still ends the run (the caller rethrows when one arrived).
CommandResult
Collect(AgentClient& agent, uint64_t id, std::chrono::seconds timeout)
{
    try
    {
        return agent.Wait(id, timeout);
    }
    catch (const AgentError& e)
    {
        try
        {
            agent.Kill(id); // it may still be running in the guest
        }
        catch (const AgentError&)
        {
            // The VM is gone: nothing left to kill.
        }
        CommandResult failed;
        failed.out = agent.OutputSoFar(id); // what it said before it went quiet
        failed.err = std::string("fabemu: ") + e.what() + "\n";
        return failed;
    }
}

/// Publishes the run's counters to the live status (fabemu status) at most every
/// 100 ms, on the simulation thread, where they are read safely. It runs from the
/// simulator's idle hook, which comes at least that often, not as an event: an
/// event would wake an idle simulation for nothing and count its own lateness as
/// the model's lag.
struct StatusPublisher
{
    std::function<nlohmann::json()> gather; ///< an object: its members replace the document's
    std::shared_ptr<LiveStatus> live;
    std::chrono::steady_clock::time_point last{};
    void MaybePublish()
    {
        const auto now = std::chrono::steady_clock::now();
        if (now - last < std::chrono::milliseconds(100))
        {
            return;
        }
        last = now;
        const nlohmann::json parts = gather();
        for (const auto& [key, value] : parts.items())
        {
            live->Set(key, value);
        }
    }
};

nlohmann::json
CommandsJson(const std::vector<CommandOutcome>& commands)
{
    nlohmann::json list = nlohmann::json::array();
    for (const auto& c : commands)
    {
        list.push_back({{"on", c.on},
                        {"run", c.cmd},
                        {"state", !c.started ? "not started"
                                  : c.ended  ? "ended"
                                             : "running"},
                        {"exit_code", c.exitCode}});
    }
    return list;
}

void
PrintCommands(const std::vector<CommandOutcome>& commands, bool whole, std::ostream& out)
{
    for (const auto& c : commands)
    {
        if (whole)
        {
            out << fmt::format("--- {}: {} (exit {})\n{}", c.on, c.cmd, c.exitCode, c.out);
        }
        else
        {
            out << fmt::format("{}: {}: exit {}\n", c.on, c.cmd, c.exitCode);
            const nlohmann::json metrics = PerftestMetrics(c.out);
            if (metrics.contains("untimed"))
            {
                // Why its figures are missing, where the expectations would show only null.
                out << "    | untimed: " << metrics["untimed"].get<std::string>() << "\n";
            }
            if (c.exitCode != 0)
            {
                // What a failed command last said, where a log of the run alone shows it.
                std::istringstream tail(Tail(c.out, 4));
                for (std::string line; std::getline(tail, line);)
                {
                    out << "    | " << line << "\n";
                }
            }
        }
    }
}

/// What a command's record keeps: its output, its errors, and how it ended when the
/// agent ended it (its output may be lost then: a program killed loses what it buffered).
std::string
Output(const CommandResult& c)
{
    std::string out = c.out + c.err;
    if (c.timedOut)
    {
        out += "fabemu: killed at its timeout\n";
    }
    else if (c.signal != 0)
    {
        out += fmt::format("fabemu: ended by signal {}\n", c.signal);
    }
    return out;
}

/// A command's or a launch's 'timeout', in whole seconds (at least 1), as the agents take it.
std::chrono::seconds
TimeoutOf(const WorkloadSpec& w)
{
    return std::chrono::seconds(std::max<int64_t>(1, w.timeoutPs / 1'000'000'000'000));
}

/// A launch under way: one command per rank, started together with torchrun's
/// variables set (StartLaunch), then waited for together (FinishLaunch).
struct Launch
{
    struct Rank
    {
        size_t record; ///< its entry in the run's commands
        uint32_t host;
        uint64_t id;
        bool done;
    };
    std::vector<Rank> ranks;
    std::chrono::seconds timeout{0};
    std::chrono::steady_clock::time_point deadline;
    std::string failed; ///< the first rank that failed, "rank K (hN)"; empty while none has
};

/// Rank \p r's command line of launch \p w: torchrun's variables exported, so they reach
/// every command of run ("cd x && prog", "sleep 1; prog").
std::string
RankCommand(const WorkloadSpec& w, size_t r)
{
    return fmt::format("export RANK={} WORLD_SIZE={} LOCAL_RANK=0 LOCAL_WORLD_SIZE=1 "
                       "MASTER_ADDR={} MASTER_PORT={}; {}",
                       r, w.hosts.size(), Scenario::HostAddress(w.hosts.front()), w.masterPort,
                       w.run);
}

Launch
StartLaunch(const WorkloadSpec& w, std::map<uint32_t, std::unique_ptr<Endpoint>>& vms,
            LiveStatus& live, std::vector<CommandOutcome>& commands)
{
    Launch launch;
    launch.timeout = TimeoutOf(w);
    const size_t n = w.hosts.size();
    for (size_t r = 0; r < n; ++r)
    {
        const uint32_t host = w.hosts[r];
        const std::string cmd = RankCommand(w, r);
        launch.ranks.push_back({commands.size(), host, 0, false});
        commands.push_back({"h" + std::to_string(host), cmd, -1, ""});
        if (!launch.failed.empty())
        {
            launch.ranks.back().done = true; // pointless without the rank that failed
            commands.back().out = "fabemu: not started: " + launch.failed + " could not start\n";
            commands.back().started = false;
            commands.back().ended = true;
            continue;
        }
        try
        {
            launch.ranks.back().id = vms.at(host)->Start(cmd, launch.timeout);
        }
        catch (const AgentError& e)
        {
            // Its VM is gone already: a failed rank, which stops the others.
            launch.ranks.back().done = true;
            commands.back().out = std::string("fabemu: ") + e.what() + "\n";
            commands.back().started = false;
            commands.back().ended = true;
            if (launch.failed.empty())
            {
                launch.failed = fmt::format("rank {} (h{})", r, host);
            }
        }
    }
    for (const auto& rank : launch.ranks)
    {
        if (!launch.failed.empty() && !rank.done)
        {
            vms.at(rank.host)->Kill(rank.id); // now, not when a background launch is collected
        }
    }
    launch.deadline = std::chrono::steady_clock::now() + launch.timeout + kAgentTimeoutGrace;
    live.Set("commands", CommandsJson(commands));
    return launch;
}

/// Waits for every rank of \p launch. The first rank that fails (an exit status
/// not 0, a dead VM, its timeout) stops the others: their collective cannot finish
/// without it. Returns whether every rank exited 0.
bool
FinishLaunch(Launch& launch, std::map<uint32_t, std::unique_ptr<Endpoint>>& vms,
             const SignalGuard& signals, LiveStatus& live, std::vector<CommandOutcome>& commands)
{
    const size_t n = launch.ranks.size();
    std::string& failed = launch.failed; // the first rank that failed, for the others' records
    bool ok = failed.empty();
    size_t left = 0;
    for (const auto& rank : launch.ranks)
    {
        if (!rank.done)
        {
            ++left;
            if (!ok)
            {
                vms.at(rank.host)->Kill(rank.id); // a rank could not start: the rest cannot finish
            }
        }
    }
    while (left > 0)
    {
        for (size_t r = 0; r < n; ++r)
        {
            auto& rank = launch.ranks[r];
            if (rank.done)
            {
                continue;
            }
            auto& endpoint = *vms.at(rank.host);
            auto c = endpoint.Poll(rank.id, std::chrono::milliseconds(100));
            if (!c && std::chrono::steady_clock::now() < launch.deadline && !signals.Signal())
            {
                continue;
            }
            if (!c)
            {
                endpoint.Kill(rank.id);
                c = endpoint.Poll(rank.id, std::chrono::seconds(5));
                if (!c)
                {
                    c = CommandResult{};
                }
                c->exitCode = -1;
                c->err += signals.Signal() ? "fabemu: stopped by a signal\n"
                                           : fmt::format("fabemu: rank {} did not end in {} s\n", r,
                                                         launch.timeout.count());
            }
            rank.done = true;
            --left;
            auto& record = commands[rank.record];
            record.exitCode = c->exitCode;
            record.out = Output(*c);
            record.ended = true;
            if (c->exitCode != 0 && ok)
            {
                ok = false;
                failed = fmt::format("rank {} (h{})", r, rank.host);
                for (auto& other : launch.ranks)
                {
                    if (!other.done)
                    {
                        vms.at(other.host)->Kill(other.id);
                    }
                }
            }
            else if (c->exitCode != 0 && !failed.empty())
            {
                record.out += fmt::format("fabemu: stopped because {} failed\n", failed);
            }
            live.Set("commands", CommandsJson(commands));
        }
    }
    return ok;
}

/// Waits for foreground command \p id on \p endpoint until \p deadline: its result, or
/// the reason it has none (its timeout, a signal) as a failed one.
CommandResult
WaitForeground(Endpoint& endpoint, uint64_t id, std::chrono::steady_clock::time_point deadline,
               const SignalGuard& signals)
{
    for (;;)
    {
        if (auto c = endpoint.Poll(id, std::chrono::milliseconds(200)))
        {
            return *c;
        }
        if (signals.Signal() || std::chrono::steady_clock::now() >= deadline)
        {
            endpoint.Kill(id);
            auto c = endpoint.Poll(id, std::chrono::seconds(5)).value_or(CommandResult{});
            c.exitCode = -1;
            c.err += signals.Signal() ? "fabemu: stopped by a signal\n"
                                      : "fabemu: did not end within its timeout\n";
            return c;
        }
    }
}

/// Records workload \p w (a command, or each rank of a launch) as not started because
/// on_failure: stop saw \p stoppedBy fail: so commands.K still names the file's K-th.
void
RecordNotStarted(const WorkloadSpec& w, const std::string& stoppedBy,
                 std::vector<CommandOutcome>& commands)
{
    const std::string why =
        fmt::format("fabemu: not started: on_failure: stop after {} failed\n", stoppedBy);
    for (size_t r = 0; r < (w.type == "launch" ? w.hosts.size() : 1); ++r)
    {
        const uint32_t host = w.type == "launch" ? w.hosts[r] : w.on;
        commands.push_back({"h" + std::to_string(host),
                            w.type == "launch" ? RankCommand(w, r) : w.run, -1, why, false, true});
    }
}

/// Waits \p w's 'after', but not past a signal (a command started after SIGINT would
/// escape the clean-up that already ran). False when a signal came.
bool
WaitAfter(const WorkloadSpec& w, const SignalGuard& signals)
{
    const auto start =
        std::chrono::steady_clock::now() + std::chrono::milliseconds(w.afterPs / 1'000'000'000);
    while (std::chrono::steady_clock::now() < start && !signals.Signal())
    {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return !signals.Signal();
}

/// Starts command \p w on \p endpoint and records it in \p commands; its id, or nothing
/// when its VM is gone (it died, or a crash fault killed it): then that is its record.
std::optional<uint64_t>
StartCommand(Endpoint& endpoint, const WorkloadSpec& w, std::vector<CommandOutcome>& commands)
{
    commands.push_back({"h" + std::to_string(w.on), w.run, -1, ""});
    try
    {
        return endpoint.Start(w.run, TimeoutOf(w));
    }
    catch (const AgentError& e)
    {
        commands.back().out = std::string("fabemu: ") + e.what() + "\n";
        commands.back().started = false;
        commands.back().ended = true;
        return std::nullopt;
    }
}

/// Runs the scenario's commands through the guest agents: each after its 'after'
/// delay, waited for unless it is in the background; the background ones are
/// collected at the end. A command that fails (or whose VM is gone) is recorded as
/// failed; with on_failure: stop, the first failure waited for stops the commands
/// still running, and the workloads after it are recorded as not started. Returns
/// whether every one exited 0.
bool
RunCommands(const Scenario& s, std::map<uint32_t, std::unique_ptr<Endpoint>>& vms,
            const SignalGuard& signals, LiveStatus& live, std::vector<CommandOutcome>& commands)
{
    // Commands in order: wait 'after', start; wait for it unless it is in the background.
    struct Background
    {
        size_t record;
        uint32_t host;
        uint64_t id;
        std::chrono::steady_clock::time_point deadline;
        bool collected{false}; ///< its result is in its record already
        bool stopped{false};   ///< killed by on_failure: stop
    };
    std::vector<Background> background;
    std::vector<Launch> launches; // in the background
    bool ok = true;
    std::string stoppedBy; // on_failure: stop, once something failed: what
    auto record = [&](Background& b, const CommandResult& c) {
        commands[b.record].exitCode = c.exitCode;
        commands[b.record].out = Output(c);
        commands[b.record].ended = true;
        b.collected = true;
        ok = ok && c.exitCode == 0;
    };
    auto failed = [&](size_t wi, const std::string& on) {
        ok = false;
        if (s.onFailure != "stop" || !stoppedBy.empty())
        {
            return;
        }
        // "workload 2 on h1", or for a launch "workload 3, rank 1 (h1)".
        stoppedBy = on.rfind("rank ", 0) == 0 ? fmt::format("workload {}, {}", wi, on)
                                              : fmt::format("workload {} on {}", wi, on);
        for (auto& b : background)
        {
            // One that ended already (its VM crashed, say) keeps its own account.
            auto& endpoint = *vms.at(b.host);
            if (endpoint.Pollable())
            {
                if (const auto c = endpoint.Poll(b.id, std::chrono::milliseconds(100)))
                {
                    record(b, *c);
                    continue;
                }
            }
            endpoint.Kill(b.id);
            b.stopped = true;
        }
        for (auto& l : launches)
        {
            if (l.failed.empty())
            {
                l.failed = stoppedBy; // its ranks' records: "stopped because ... failed"
            }
            for (const auto& rank : l.ranks)
            {
                if (!rank.done)
                {
                    vms.at(rank.host)->Kill(rank.id);
                }
            }
        }
    };
    for (size_t wi = 0; wi < s.workloads.size(); ++wi)
    {
        const WorkloadSpec& w = s.workloads[wi];
        if ((w.type != "command" && w.type != "launch") || signals.Signal())
        {
            continue;
        }
        if (!stoppedBy.empty())
        {
            RecordNotStarted(w, stoppedBy, commands);
            continue;
        }
        if (!WaitAfter(w, signals))
        {
            break;
        }
        if (w.type == "launch")
        {
            Launch launch = StartLaunch(w, vms, live, commands);
            if (w.background)
            {
                launches.push_back(std::move(launch)); // waited for with the others at the end
                continue;
            }
            if (!FinishLaunch(launch, vms, signals, live, commands))
            {
                failed(wi, launch.failed); // "rank K (hN)"
            }
            continue;
        }
        const auto timeout = TimeoutOf(w);
        auto& endpoint = *vms.at(w.on);
        const std::optional<uint64_t> started = StartCommand(endpoint, w, commands);
        live.Set("commands", CommandsJson(commands));
        if (!started)
        {
            failed(wi, commands.back().on);
            continue;
        }
        const uint64_t id = *started;
        if (w.background)
        {
            // As for a foreground command: the guest kills it at its timeout, and the
            // host waits kAgentTimeoutGrace more for word of that.
            background.push_back({commands.size() - 1, w.on, id,
                                  std::chrono::steady_clock::now() + timeout + kAgentTimeoutGrace});
            continue;
        }
        const auto c = WaitForeground(
            endpoint, id, std::chrono::steady_clock::now() + timeout + kAgentTimeoutGrace, signals);
        commands.back().exitCode = c.exitCode;
        commands.back().out = Output(c);
        commands.back().ended = true;
        live.Set("commands", CommandsJson(commands));
        if (c.exitCode != 0)
        {
            failed(wi, commands.back().on);
        }
    }
    const std::string stopped =
        stoppedBy.empty()
            ? ""
            : fmt::format("fabemu: stopped: on_failure: stop after {} failed\n", stoppedBy);
    for (auto& launch : launches)
    {
        ok = FinishLaunch(launch, vms, signals, live, commands) && ok;
    }
    for (auto& b : background)
    {
        if (b.collected)
        {
            continue;
        }
        // A server whose client failed may wait for ever: then it gets 10 s more.
        const auto left = std::chrono::duration_cast<std::chrono::seconds>(
            b.deadline - std::chrono::steady_clock::now());
        const auto wait =
            ok ? std::max(left, std::chrono::seconds(10))
               : std::min(std::max(left, std::chrono::seconds(1)), std::chrono::seconds(10));
        auto c = vms.at(b.host)->Wait(b.id, wait);
        if (b.stopped)
        {
            c.err += stopped;
        }
        record(b, c);
        live.Set("commands", CommandsJson(commands));
    }
    return ok;
}

/// "h1: ib_write_bw ... {h0}" -> host 1 and the command with {hN} replaced by hN's address.
bool
ParseTarget(const std::string& spec, unsigned count, WorkloadSpec& w, std::string& why)
{
    const auto colon = spec.find(':');
    unsigned host = 0;
    if (colon == std::string::npos || std::sscanf(spec.c_str(), "h%u:", &host) != 1)
    {
        why = "'" + spec + "' is not 'hN: command'";
        return false;
    }
    if (host >= count)
    {
        why = "'" + spec + "' names h" + std::to_string(host) + ", but there are " +
              std::to_string(count) + " endpoints (h0..h" + std::to_string(count - 1) + ")";
        return false;
    }
    std::string cmd = spec.substr(colon + 1);
    cmd.erase(0, cmd.find_first_not_of(' '));
    w.runAsWritten = cmd;
    for (unsigned h = 0; h < count; ++h)
    {
        const std::string key = "{h" + std::to_string(h) + "}";
        for (auto pos = cmd.find(key); pos != std::string::npos; pos = cmd.find(key))
        {
            cmd.replace(pos, key.size(), HostIpv4Text(h));
        }
    }
    w.type = "command";
    w.on = host;
    w.run = cmd;
    return true;
}

} // namespace

EmulateResult
RunEmulation(const EmulateOptions& opt, std::ostream& out, std::ostream& err)
{
    EmulateResult result;
    result.exitCode = kExitBadInput;
    if (opt.backend != "vm" && opt.backend != "netns")
    {
        err << "fabemu emulate: --backend must be vm or netns, not '" << opt.backend << "'\n";
        return result;
    }
    if (opt.noRdma && opt.backend != "netns")
    {
        err << "fabemu emulate: --no-rdma is for --backend netns\n";
        return result;
    }
    if (opt.count < 2 || opt.count > 16)
    {
        err << "fabemu emulate: --count must be 2..16, not " << opt.count << "\n";
        return result;
    }
    // The command line describes a scenario: a star of VMs, servers in the background.
    Scenario s;
    s.name = "emulate";
    s.file = "fabemu emulate";
    if (opt.cc != "none" && opt.cc != "dcqcn")
    {
        err << "fabemu emulate: --cc must be dcqcn or none, not '" << opt.cc << "'\n";
        return result;
    }
    s.fabric.cc = opt.cc; // dcqcn: the edges run it for the VMs (rxe has none)
    s.durationPs = 3600'000'000'000'000LL;
    s.topology.builder = "star";
    s.topology.hosts = opt.count;
    s.topology.link.rate = opt.rate;
    s.topology.link.delay = opt.delay;
    s.lagThreshold = opt.lagThreshold;
    if (opt.scheduling != "shared" && opt.scheduling != "realtime")
    {
        err << "fabemu emulate: --scheduling must be shared or realtime, not '" << opt.scheduling
            << "'\n";
        return result;
    }
    s.scheduling = opt.scheduling;
    if (!ParseRate(opt.rate, s.topology.link.bitsPerSecond) ||
        !ParseTime(opt.delay, s.topology.link.delayPs) ||
        !ParseTime(opt.lagThreshold, s.lagThresholdPs))
    {
        err << "fabemu emulate: --rate, --delay or --lag-threshold is not a rate or a time\n";
        return result;
    }
    for (unsigned i = 0; i < opt.count; ++i)
    {
        EndpointSpec e;
        e.host = "h" + std::to_string(i);
        e.index = i;
        e.kind = opt.backend;
        e.device = opt.noRdma ? "none" : e.device;
        s.endpoints.push_back(e);
    }
    for (auto [specs, background] :
         {std::pair{&opt.servers, true}, std::pair{&opt.run, opt.parallel}})
    {
        for (const auto& spec : *specs)
        {
            WorkloadSpec w;
            std::string why;
            if (!ParseTarget(spec, opt.count, w, why))
            {
                err << "fabemu emulate: " << why << "\n";
                return result;
            }
            w.background = background;
            s.workloads.push_back(w);
        }
    }
    // Servers get a moment to listen before the first client.
    if (!opt.servers.empty() && s.workloads.size() > opt.servers.size())
    {
        s.workloads[opt.servers.size()].afterPs = 1'500'000'000'000;
    }
    for (const auto& kv : opt.set)
    {
        const auto eq = kv.find('=');
        if (eq == std::string::npos || kv.rfind("ns3::", 0) != 0)
        {
            err << "fabemu emulate: --set '" << kv << "' is not ns3::Class::Attribute=value\n";
            return result;
        }
        s.fabric.set.push_back({kv.substr(0, eq), kv.substr(eq + 1), {}});
    }
    EmulateSetup setup;
    setup.cache = opt.cache;
    setup.bridge = opt.bridge;
    setup.relay = opt.relay;
    return EmulateScenario(s, setup, out, err);
}

namespace
{

/// Everything checked before anything starts: the baselines' choice, the attributes, root,
/// RDMA in namespaces, the VM image (built or found in \p image). The exit code when the run
/// cannot go on, else kExitOk.
int
CheckEmulation(const Scenario& s, const EmulateSetup& setup, std::string& image, std::ostream& err)
{
    if (setup.bridge && setup.relay)
    {
        err << "fabemu emulate: --bridge and --relay are two baselines; choose one\n";
        return kExitBadInput;
    }
    if ((setup.bridge || setup.relay) && !s.faults.empty())
    {
        // A baseline has no fabric to break: say so, rather than let a user read its
        // figures as the faulted run's.
        const FaultSpec& first = s.faults.front();
        err << "warning: " << s.file << ":" << first.mark.line << ":" << first.mark.column
            << ": faults: the " << (setup.bridge ? "--bridge" : "--relay")
            << " baseline has no fabric model, so its " << s.faults.size()
            << (s.faults.size() == 1 ? " fault is" : " faults are") << " not applied\n";
    }
    try
    {
        CheckAttributes(s);
        (void)FabricRegistry::Create(s.fabric.type);
    }
    catch (const ScenarioError& e)
    {
        err << e.what() << "\n";
        return kExitBadInput;
    }
    catch (const std::invalid_argument& e)
    {
        err << s.file << ": fabric.type: " << e.what() << "\n";
        return kExitBadInput;
    }
    if (geteuid() != 0)
    {
        err << s.file
            << ": real endpoints need root (a VM's tap, a namespace's veth); run as "
               "root, or drop the endpoints to simulate only\n";
        return kExitFailure;
    }
    const auto rdmaNamespace =
        std::find_if(s.endpoints.begin(), s.endpoints.end(),
                     [](const auto& e) { return e.kind == "netns" && e.device != "none"; });
    if (rdmaNamespace != s.endpoints.end())
    {
        const auto host = ProbeHostRdma();
        if (!host.available)
        {
            err << s.file << ": " << rdmaNamespace->host << " is a namespace with "
                << rdmaNamespace->device
                << ", which needs Soft-RoCE/Soft-iWARP in namespaces: " << host.reason
                << " (VM endpoints, the default, work here; device none gives a plain IP "
                   "namespace)\n";
            return kExitFailure;
        }
    }
    const bool anyVm = std::any_of(s.endpoints.begin(), s.endpoints.end(),
                                   [](const auto& e) { return e.kind != "netns"; });
    if (anyVm)
    {
        image = BuildImage(setup.cache.empty() ? DefaultCacheDir() : setup.cache, "", err);
        if (image.empty())
        {
            return kExitFailure;
        }
    }
    return kExitOk;
}

/// The scenario's real endpoints, running; the launcher outlives its VMs.
struct RealEndpoints
{
    std::unique_ptr<VmLauncher> launcher;
    std::map<uint32_t, std::unique_ptr<Endpoint>> byHost;
    std::vector<EndpointAddress> directory; ///< in s.endpoints' order
};

/// Starts namespace endpoint \p e at hN's addresses (HostIpv4, HostMac).
std::unique_ptr<Endpoint>
StartNamespace(const Scenario& s, const EndpointSpec& e, SignalGuard& signals)
{
    NetnsSpec spec;
    spec.name = e.host;
    spec.netns = fmt::format("fe{}n{}", getpid(), e.index);
    spec.hostIf = fmt::format("fe{}t{}", getpid(), e.index);
    spec.ipv4 = HostIpv4Text(e.index) + "/16";
    spec.mac = HostMacText(e.index);
    spec.mtu = IpMtuForPathMtu(s.fabric.mtu);
    spec.device = e.device;
    auto ns = std::make_unique<NamespaceEndpoint>(spec);
    NamespaceEndpoint* raw = ns.get();
    signals.Watch([raw] { raw->KillAll(); });
    return ns;
}

/// VM endpoint \p e's spec: hN's addresses, its tap, the fabric's path MTU.
VmSpec
VmSpecFor(const Scenario& s, const Fabric& fabric, const EndpointSpec& e)
{
    VmSpec spec;
    spec.name = e.host;
    spec.ipv4 = HostIpv4Text(e.index) + "/16";
    spec.mac = HostMacText(e.index);
    spec.device = e.device;
    spec.mtu = IpMtuForPathMtu(s.fabric.mtu); // rxe takes its path MTU from eth0
    spec.tap = fmt::format("fe{}t{}", getpid(), e.index);
    spec.tcpEcn = fabric.GuestTcpEcn(s);
    return spec;
}

/// The endpoints first: their taps (or veths) must exist before the edges open them.
/// The VMs boot side by side (each boot keeps one core busy for 10-15 s under TCG).
void
StartEndpoints(const Scenario& s, const Fabric& fabric, const std::string& image,
               RealEndpoints& eps, SignalGuard& signals, std::ostream& out)
{
    if (std::any_of(s.endpoints.begin(), s.endpoints.end(),
                    [](const auto& e) { return e.kind == "netns"; }))
    {
        NetnsEndpoint::SweepStale();
    }
    if (!image.empty())
    {
        eps.launcher = std::make_unique<VmLauncher>(VmImage::In(image));
    }
    std::vector<VmSpec> specs;
    for (const auto& e : s.endpoints)
    {
        if (e.kind != "netns")
        {
            specs.push_back(VmSpecFor(s, fabric, e));
        }
    }
    std::vector<std::unique_ptr<Vm>> vms;
    if (!specs.empty())
    {
        vms = eps.launcher->StartAll(specs);
    }
    auto nextVm = vms.begin();
    for (const auto& e : s.endpoints)
    {
        if (e.kind == "netns")
        {
            eps.byHost[e.index] = StartNamespace(s, e, signals);
        }
        else
        {
            auto vm = std::make_unique<VmEndpoint>(std::move(*nextVm++));
            const pid_t pid = vm->Pid();
            signals.Watch([pid] { kill(pid, SIGKILL); });
            eps.byHost[e.index] = std::move(vm);
        }
        eps.directory.push_back({HostIpv4(e.index), HostMac(e.index)});
        const std::string what = e.kind != "netns"    ? e.device + "0"
                                 : e.device == "none" ? "namespace, no RDMA device,"
                                                      : "namespace with " + e.device + "0";
        // Progress goes out at once, also into a pipe (block-buffered otherwise).
        out << fmt::format("{}: {} ready ({} ms)\n", e.host, what,
                           eps.byHost[e.index]->ReadyTime().count())
            << std::flush;
    }
}

/// The two baselines: the same endpoints and commands with no model between them (a plain
/// Linux bridge, or the emulator's own tap I/O and thread).
/// "<who>: 0.41 s of CPU in 17.2 s (2.4 % busy), 6.1 us a frame from the endpoints": what
/// carrying the frames cost the thread that did it.
std::string
ThreadLine(const std::string& who, const EmulateResult& r)
{
    const double busy = r.threadWallS > 0 ? 100 * r.threadCpuS / r.threadWallS : 0;
    std::string line = fmt::format("{}: {:.2f} s of CPU in {:.1f} s ({:.1f} % busy)", who,
                                   r.threadCpuS, r.threadWallS, busy);
    if (r.framesFromEndpoints > 0)
    {
        line += fmt::format(", {:.1f} us a frame from the endpoints",
                            1e6 * r.threadCpuS / static_cast<double>(r.framesFromEndpoints));
    }
    return line;
}

EmulateResult
RunBaseline(const Scenario& s, const EmulateSetup& setup, RealEndpoints& eps,
            const SignalGuard& signals, std::ostream& out)
{
    EmulateResult r;
    const auto run = [&] {
        LiveStatus live;
        const bool ok = RunCommands(s, eps.byHost, signals, live, r.commands);
        if (signals.Signal())
        {
            throw AgentError("interrupted");
        }
        PrintCommands(r.commands, setup.printOutputs, out);
        r.exitCode = ok ? kExitOk : kExitFailure;
    };
    if (setup.bridge)
    {
        LinuxBridge bridge;
        for (const auto& [index, endpoint] : eps.byHost)
        {
            bridge.Join(endpoint->Interface());
        }
        run();
        out << "baseline: the VMs were on a plain Linux bridge (no fabric model, no lag)\n";
        return r;
    }
    std::vector<TapRelay::Member> members;
    for (size_t i = 0; i < s.endpoints.size(); ++i)
    {
        members.push_back({std::make_unique<TapPort>(eps.byHost[s.endpoints[i].index]->Interface()),
                           eps.directory[i].mac});
    }
    TapRelay relay(std::move(members));
    const auto start = std::chrono::steady_clock::now();
    relay.Start();
    run();
    relay.Stop();
    r.threadCpuS = std::chrono::duration<double>(relay.ThreadCpu()).count();
    r.threadWallS = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    r.framesFromEndpoints = relay.FramesRead();
    r.framesToEndpoints = relay.FramesWritten();
    r.scheduling = relay.Scheduling();
    out << fmt::format(
        "baseline: the endpoints were joined by a bare user-space relay (no fabric model, "
        "its thread {}): {} frames read, {} written, {} refused by a full tap\n",
        r.scheduling, r.framesFromEndpoints, r.framesToEndpoints, relay.FramesRefused());
    out << ThreadLine("the relay's thread", r) << "\n";
    return r;
}

/// ns-3 reset onto the real-time simulator, with the scenario's defaults for emulation.
void
PrepareRealtimeNs3(const Scenario& s)
{
    // Config::Reset also resets globals, so it comes first; the binding takes effect
    // when a simulator is created, so any made already is dropped.
    Config::Reset();
    Simulator::Destroy();
    GlobalValue::Bind("SimulatorImplementationType",
                      StringValue("ns3::FabemuRealtimeSimulatorImpl"));
    // A heap keeps its events in one vector: no allocation per event, where the map
    // allocates a node for each (4 a frame through the emulator, emulator-capacity). A
    // real-time run holds few events at once, so a heap's cost at large sets (slower
    // than the map in big simulations, docs/performance.md) does not arise. ns-3's
    // PriorityQueueScheduler is std::priority_queue's heap: 1,300 fewer instructions a
    // frame than HeapScheduler, whose every step is a call with a log check.
    GlobalValue::Bind("SchedulerType", StringValue("ns3::PriorityQueueScheduler"));
    UsePicoseconds();
    ApplyFabricDefaults(s, RunMode::Emulation);
}

/// Live counters for `fabemu status`: the simulation, each edge, the fabric.
nlohmann::json
LiveJson(const Scenario& s, const std::vector<std::unique_ptr<EdgePort>>& edges,
         const Fabric& fabric, const LagMonitor& lag, const FabemuRealtimeSimulatorImpl& sim)
{
    nlohmann::json edgeList = nlohmann::json::array();
    for (const auto& e : edges)
    {
        const auto c = e->GetCounters();
        edgeList.push_back({{"host", e->Name()},
                            {"frames_from_endpoint", c.fromTap},
                            {"frames_to_endpoint", c.toTap},
                            {"bytes_to_endpoint", c.bytesToTap},
                            {"held_bytes_now", c.heldBytesNow},
                            {"frames_held", c.framesHeld},
                            {"pauses_sent", c.pausesToFabric},
                            {"dcqcn_cnps_sent", c.cnpsSent},
                            {"dcqcn_frames_paced", c.framesPaced},
                            {"dcqcn_frames_made_ect", c.framesMadeEct},
                            {"drops", c.drops}});
    }
    return nlohmann::json{
        {"simulation",
         {{"time_s", sim.SimulatedNow().GetSeconds()},
          {"lag_ms", lag.LastNs() / 1e6},
          {"lag_max_ms", lag.MaxNs() / 1e6},
          {"scheduling", CurrentThreadScheduling()}, // this runs on the simulation thread
          {"timing_faithful_so_far", lag.MaxNs() * 1000 <= s.lagThresholdPs}}},
        {"edges", edgeList},
        {"fabric", fabric.Live()}};
}

/// Stops the edges and sums what they did into \p t.
void
StopEdges(const std::vector<std::unique_ptr<EdgePort>>& edges, EdgeTotals& t)
{
    for (auto& e : edges)
    {
        e->Stop();
        const auto c = e->GetCounters();
        t.framesFromEndpoints += c.fromTap;
        t.framesToEndpoints += c.toTap;
        t.bytesToEndpoints += c.bytesToTap;
        t.arpReplies += c.arpReplies;
        t.neighbourAdverts += c.neighbourAdverts;
        t.edgeCnpsSent += c.cnpsSent;
        t.edgeCnpsConsumed += c.cnpsConsumed;
        t.framesPaced += c.framesPaced;
        t.framesMadeEct += c.framesMadeEct;
        t.framesHeld += c.framesHeld;
        t.peakHeldBytes = std::max(t.peakHeldBytes, c.peakHeldBytes);
        t.edgePauses += c.pausesToFabric;
        if (c.heldAtStop > 0)
        {
            t.edgeDrops["held_at_stop"] += c.heldAtStop;
        }
        if (c.lowestRateBps && (!t.lowestRateBps || c.lowestRateBps < t.lowestRateBps))
        {
            t.lowestRateBps = c.lowestRateBps;
        }
        for (const auto& [why, n] : c.drops)
        {
            t.edgeDrops[why] += n;
        }
    }
}

/// The lag's summary into \p t, its distribution into lag.csv (when there is a folder).
void
RecordLag(const Scenario& s, const LagMonitor& lag, const FabemuRealtimeSimulatorImpl& sim,
          const std::string& dir, LagTotals& t)
{
    const LagMonitor::Summary summary = lag.Summarize();
    t.lagMaxMs = summary.maxMs;
    t.lagP99Ms = summary.p99Ms;
    t.readsDeferred = sim.GetDeferredReads();
    t.maxBacklogMs = sim.GetMaxBacklog().GetSeconds() * 1e3;
    t.timingFaithful = t.lagMaxMs * 1e9 <= s.lagThresholdPs;
    if (!dir.empty())
    {
        std::ostringstream rows;
        for (const auto& [boundNs, events] : summary.distribution)
        {
            rows << boundNs << ' ' << events << '\n';
        }
        WriteCsv(dir + "/lag.csv", "lag_ns_at_most,events", rows.str());
    }
}

/// The live status socket, or a warning and none.
std::unique_ptr<StatusServer>
OpenStatusServer(std::shared_ptr<LiveStatus> live, std::ostream& out, std::ostream& err)
{
    try
    {
        SweepStaleStatusSockets();
        auto status = std::make_unique<StatusServer>(StatusSocketPath(getpid()), live);
        out << "live status: fabemu status " << status->Path() << "\n" << std::flush;
        return status;
    }
    catch (const StatusError& e)
    {
        err << "warning: " << e.what() << "; the run goes on without live status\n";
        return nullptr;
    }
}

/// The endpoints on the modelled fabric in real time, with simulated background flows if
/// any: the fabric built through its seam, an uplink per endpoint, the commands run.
EmulateResult
RunOnFabric(const Scenario& s, Fabric& fabric, const EmulateSetup& setup, RealEndpoints& eps,
            const SignalGuard& signals, std::ostream& out, std::ostream& err)
{
    PrepareRealtimeNs3(s);
    EmulateResult r;
    fabric.Build(s, RunMode::Emulation);
    FaultSchedule faults(s);
    faults.SetCrash([&eps](uint32_t host) { eps.byHost.at(host)->Crash(); });
    faults.Schedule(fabric);
    std::vector<RealHost> hosts;
    for (const auto& e : s.endpoints)
    {
        hosts.push_back({e.index, e.host, eps.byHost[e.index]->Interface()});
    }
    std::vector<std::unique_ptr<EdgePort>> edges =
        fabric.Uplinks(s, hosts, eps.directory, IpMtuForPathMtu(s.fabric.mtu));
    fabric.AttachRecorders(s,
                           {setup.resultsDir,
                            PicoSeconds(std::max<int64_t>(s.record.queueIntervalPs, 1'000'000'000)),
                            RunMode::Emulation});
    FlowRunner runner(fabric.Rdma()); // simulated background traffic, if any
    runner.Add(BuildFlows(s));
    FaultSchedule::AddStragglers(s, runner);
    runner.Start();
    LagMonitor lag;
    lag.Start();
    for (auto& e : edges)
    {
        e->Start();
    }
    auto live = std::make_shared<LiveStatus>();
    live->Set("scenario", s.name);
    live->Set("fabric_type", s.fabric.type);
    live->Set("pid", static_cast<long>(getpid()));
    live->Set("commands", nlohmann::json::array());
    const auto simImpl = DynamicCast<FabemuRealtimeSimulatorImpl>(Simulator::GetImplementation());
    StatusPublisher publisher;
    publisher.live = live;
    publisher.gather = [&] { return LiveJson(s, edges, fabric, lag, *simImpl); };
    simImpl->AddIdleHook([&publisher] { publisher.MaybePublish(); });
    const std::unique_ptr<StatusServer> status = OpenStatusServer(live, out, err);
    SimulatorThread sim(s.scheduling == "realtime" ? ThreadScheduling::Realtime
                                                   : ThreadScheduling::Shared);
    r.scheduling = sim.Scheduling();
    if (s.scheduling == "realtime" && r.scheduling != "SCHED_FIFO")
    {
        err << "warning: scheduling realtime: SCHED_FIFO was not permitted; the simulation thread "
               "runs at "
            << r.scheduling << "\n";
    }
    const bool ok = RunCommands(s, eps.byHost, signals, *live, r.commands);
    if (signals.Signal())
    {
        throw AgentError("interrupted"); // unwind as on any other error
    }
    sim.Stop();
    r.threadCpuS = std::chrono::duration<double>(sim.Cpu()).count();
    r.threadWallS = std::chrono::duration<double>(sim.Wall()).count();
    r.simTimeS = Simulator::Now().GetSeconds();
    for (const auto& [host, what] : faults.Crashed())
    {
        // A crash on purpose reads as one, beside the agent's "connection lost".
        const std::string name = "h" + std::to_string(host);
        out << fmt::format("{}: crashed on purpose ({}: crash: vm): its QEMU was killed\n", name,
                           what);
        for (auto& c : r.commands)
        {
            // Those its death ended (the agent's words name the endpoint), not others.
            if (c.on == name && c.exitCode != 0 &&
                c.out.find("endpoint " + name + ":") != std::string::npos)
            {
                c.out += fmt::format("fabemu: {} crashed on purpose ({})\n", name, what);
            }
        }
    }
    StopEdges(edges, r);
    static_cast<FabricTotals&>(r) = fabric.Totals();
    r.flows = runner.Outcomes(); // every flow: completed, failed or pending
    faults.ExplainFailures(r.flows);
    r.flowCount = runner.Flows().size();
    RecordLag(s, lag, *simImpl, setup.resultsDir, r);
    fabric.WriteRecords();
    if (!faults.Empty())
    {
        if (!setup.resultsDir.empty())
        {
            faults.Write(setup.resultsDir);
        }
        r.faults = faults.Summary();
    }
    edges.clear();
    Simulator::Destroy();
    r.exitCode = ok ? kExitOk : kExitFailure;
    return r;
}

/// The run's account on the terminal: commands, edges, fabric, DCQCN at the edges, lag.
void
PrintEmulation(const Scenario& s, const Fabric& fabric, const EmulateSetup& setup,
               const EmulateResult& r, std::ostream& out)
{
    PrintCommands(r.commands, setup.printOutputs, out);
    out << fmt::format("edge: {} neighbour solicitations answered; {} frames held for VMs that "
                       "were not reading (peak {} bytes, {} pauses sent to the fabric)\n",
                       r.neighbourAdverts, r.framesHeld, r.peakHeldBytes, r.edgePauses);
    out << fabric.Notes(r);
    out << fmt::format("fabric: {} frames from endpoints, {} to endpoints, {} ARP answered, "
                       "{} dropped in switches ({} for lack of buffer), {} PFC frames, "
                       "{} ECN marks\n",
                       r.framesFromEndpoints, r.framesToEndpoints, r.arpReplies, r.fabricDrops,
                       r.congestionDrops, r.pfcFrames, r.ecnMarks);
    for (const auto& [why, n] : r.edgeDrops)
    {
        out << fmt::format("edge drops: {} {}\n", n, why);
    }
    for (const auto& [why, n] : r.switchDrops)
    {
        out << fmt::format("switch drops: {} {}\n", n, why);
    }
    if (s.fabric.cc == "dcqcn")
    {
        out << fmt::format("DCQCN at the edges: {} CNPs sent for CE-marked frames, {} acted on, "
                           "{} frames paced, lowest flow rate {:.1f} Mb/s\n",
                           r.edgeCnpsSent, r.edgeCnpsConsumed, r.framesPaced,
                           r.lowestRateBps / 1e6);
    }
    out << fmt::format(
        "lag of simulated time behind the wall clock ({}): max {:.3f} ms, p99 {:.3f} ms{}\n",
        r.scheduling, r.lagMaxMs, r.lagP99Ms,
        r.timingFaithful ? "" : "  WARNING: above the threshold, timing not faithful");
    out << ThreadLine("simulation thread", r) << "\n";
    if (r.readsDeferred > 0)
    {
        out << fmt::format(
            "overload: the simulation fell more than {:g} ms behind the wall clock and left "
            "the endpoints' frames in the kernel {} times until it caught up (what did not "
            "fit there is in the edge drops as socket_overflow)\n",
            r.maxBacklogMs, r.readsDeferred);
    }
}

} // namespace

EmulateResult
EmulateScenario(const Scenario& s, const EmulateSetup& setup, std::ostream& out, std::ostream& err)
{
    EmulateResult failed;
    std::string image;
    failed.exitCode = CheckEmulation(s, setup, image, err);
    if (failed.exitCode != kExitOk)
    {
        return failed;
    }
    failed.exitCode = kExitFailure;
    const std::unique_ptr<Fabric> fabric = FabricRegistry::Create(s.fabric.type); // checked above
    SignalGuard signals;
    try
    {
        RealEndpoints eps;
        StartEndpoints(s, *fabric, image, eps, signals, out);
        if (setup.bridge || setup.relay)
        {
            return RunBaseline(s, setup, eps, signals, out);
        }
        const EmulateResult r = RunOnFabric(s, *fabric, setup, eps, signals, out, err);
        PrintEmulation(s, *fabric, setup, r, out);
        return r;
    }
    catch (const ScenarioError& e)
    {
        err << e.what() << "\n";
        failed.exitCode = kExitBadInput;
        return failed;
    }
    catch (const std::invalid_argument& e)
    {
        err << s.file << ": the fabric cannot be built as configured: " << e.what() << "\n";
        failed.exitCode = kExitBadInput;
        return failed;
    }
    catch (const std::exception& e)
    {
        if (signals.Signal())
        {
            err << s.file << ": interrupted by signal " << signals.Signal()
                << "; VMs stopped, taps and run folders removed\n";
            failed.interruptedBy = signals.Signal();
        }
        else
        {
            err << s.file << ": " << e.what() << "\n";
        }
        return failed;
    }
}

nlohmann::json
EmulationSummaryJson(const EmulateResult& r)
{
    nlohmann::json summary = RunSummaryJson(r.simTimeS, r.flows, r);
    auto& totals = summary["totals"];
    totals["cnps"] = r.cnps + r.edgeCnpsSent;
    totals["bytes_delivered"] = r.bytesToEndpoints + totals["bytes_delivered"].get<uint64_t>();
    summary["edge"] = {{"frames_from_endpoints", r.framesFromEndpoints},
                       {"frames_to_endpoints", r.framesToEndpoints},
                       {"arp_replies", r.arpReplies},
                       {"neighbour_adverts", r.neighbourAdverts},
                       {"drops", r.edgeDrops},
                       {"dcqcn_cnps_sent", r.edgeCnpsSent},
                       {"dcqcn_cnps_acted_on", r.edgeCnpsConsumed},
                       {"dcqcn_frames_paced", r.framesPaced},
                       {"dcqcn_frames_made_ect", r.framesMadeEct},
                       {"dcqcn_lowest_rate_bps", r.lowestRateBps},
                       {"frames_held", r.framesHeld},
                       {"peak_held_bytes", r.peakHeldBytes},
                       {"pauses_sent", r.edgePauses}};
    summary["lag"] = {
        {"max_ms", r.lagMaxMs}, {"p99_ms", r.lagP99Ms}, {"reads_deferred", r.readsDeferred}};
    // The thread that carried the frames: what it cost, beside how late it ran.
    summary["thread"] = {{"cpu_s", r.threadCpuS}, {"wall_s", r.threadWallS}};
    summary["timing_faithful"] = r.timingFaithful;
    summary["scheduling"] = r.scheduling; // what the simulation thread got
    nlohmann::json commands = nlohmann::json::array();
    for (const auto& c : r.commands)
    {
        commands.push_back({{"on", c.on},
                            {"run", c.cmd},
                            {"started", c.started},
                            {"exit_code", c.exitCode},
                            {"stdout_tail", Tail(c.out, 12)},
                            {"metrics", CommandMetrics(c.out)}});
    }
    summary["commands"] = commands;
    if (!r.faults.is_null())
    {
        summary["faults"] = r.faults;
    }
    return summary;
}

} // namespace fabemu
