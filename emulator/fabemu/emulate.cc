#include "emulate.h"

#include "edge-port.h"
#include "endpoints.h"
#include "exit-codes.h"
#include "time-resolution.h"
#include "vm-launcher.h"

#include "roce-fabric-helper.h"

#include "ns3/abort.h"
#include "ns3/config.h"
#include "ns3/global-value.h"
#include "ns3/realtime-simulator-impl.h"
#include "ns3/simulator.h"
#include "ns3/string.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <mutex>
#include <pthread.h>
#include <thread>
#include <unistd.h>

namespace fabemu
{

using namespace ns3;

namespace
{

struct Target
{
    unsigned host;
    std::string cmd;
};

/// "h1: ib_write_bw ... {h0}" -> host 1 and the command with {hN} replaced by hN's address.
bool
ParseTarget(const std::string& spec, unsigned count, Target& t, std::string& why)
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
    for (unsigned h = 0; h < count; ++h)
    {
        const std::string key = "{h" + std::to_string(h) + "}";
        for (auto pos = cmd.find(key); pos != std::string::npos; pos = cmd.find(key))
        {
            cmd.replace(pos, key.size(), fmt::format("10.0.0.{}", h + 1));
        }
    }
    t = Target{host, cmd};
    return true;
}

/// Runs the real-time simulator on its own thread; stops and joins it on every path out.
class SimulatorThread
{
  public:
    SimulatorThread()
        : m_thread([] { Simulator::Run(); })
    {
    }
    ~SimulatorThread() { Stop(); }
    void Stop()
    {
        if (m_thread.joinable())
        {
            // Thread-safe in the real-time simulator: runs on the simulation thread.
            Simulator::ScheduleWithContext(0, Time(0), &Simulator::Stop);
            m_thread.join();
        }
    }

  private:
    std::thread m_thread;
};

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
                    for (pid_t pid : m_pids)
                    {
                        kill(pid, SIGKILL);
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
    void Watch(pid_t qemu)
    {
        std::lock_guard<std::mutex> lock(m_mutex);
        m_pids.push_back(qemu);
        if (m_signal)
        {
            kill(qemu, SIGKILL);
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
    std::vector<pid_t> m_pids;
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
        failed.err = std::string("fabemu: ") + e.what() + "\n";
        return failed;
    }
}

/// Samples how far simulated time lags the wall clock, every millisecond.
struct LagMonitor
{
    std::vector<int64_t> lagNs;
    void Sample()
    {
        Ptr<RealtimeSimulatorImpl> rt =
            DynamicCast<RealtimeSimulatorImpl>(Simulator::GetImplementation());
        NS_ABORT_MSG_IF(!rt, "fabemu emulate: the simulator is not the real-time one");
        lagNs.push_back((rt->RealtimeNow() - Simulator::Now()).GetNanoSeconds());
        Simulator::Schedule(MilliSeconds(1), &LagMonitor::Sample, this);
    }
};

} // namespace

EmulateResult
RunEmulation(const EmulateOptions& opt, std::ostream& out, std::ostream& err)
{
    EmulateResult result;
    result.exitCode = kExitBadInput;
    if (opt.count < 2 || opt.count > 16)
    {
        err << "fabemu emulate: --count must be 2..16, not " << opt.count << "\n";
        return result;
    }
    std::vector<Target> servers;
    std::vector<Target> runs;
    for (auto [specs, targets] : {std::pair{&opt.servers, &servers}, std::pair{&opt.run, &runs}})
    {
        for (const auto& spec : *specs)
        {
            Target t;
            std::string why;
            if (!ParseTarget(spec, opt.count, t, why))
            {
                err << "fabemu emulate: " << why << "\n";
                return result;
            }
            targets->push_back(t);
        }
    }
    DataRateValue rate;
    TimeValue delay;
    TimeValue lagLimit;
    if (!rate.DeserializeFromString(opt.rate, MakeDataRateChecker()) ||
        !delay.DeserializeFromString(opt.delay, MakeTimeChecker()) ||
        !lagLimit.DeserializeFromString(opt.lagThreshold, MakeTimeChecker()))
    {
        err << "fabemu emulate: --rate, --delay or --lag-threshold is not a rate or a time\n";
        return result;
    }
    for (const auto& kv : opt.set)
    {
        const auto eq = kv.find('=');
        if (eq == std::string::npos || kv.rfind("ns3::", 0) != 0)
        {
            err << "fabemu emulate: --set '" << kv << "' is not ns3::Class::Attribute=value\n";
            return result;
        }
    }
    result.exitCode = kExitFailure;
    if (geteuid() != 0)
    {
        err << "fabemu emulate: taps need root\n";
        return result;
    }
    const std::string image = BuildImage(opt.cache.empty() ? DefaultCacheDir() : opt.cache, "", err);
    if (image.empty())
    {
        return result;
    }

    SignalGuard signals;
    try
    {
        // The VMs first: their taps must exist before the edge opens them.
        VmLauncher launcher(VmImage::In(image));
        std::vector<std::unique_ptr<Vm>> vms;
        std::vector<EndpointAddress> directory;
        for (unsigned i = 0; i < opt.count; ++i)
        {
            VmSpec spec;
            spec.name = "h" + std::to_string(i);
            spec.ipv4 = fmt::format("10.0.0.{}/24", i + 1);
            spec.mac = fmt::format("52:54:00:00:00:{:02x}", i + 1);
            spec.tap = fmt::format("fe{}t{}", getpid(), i);
            vms.push_back(launcher.Start(spec));
            signals.Watch(vms.back()->Pid());
            EndpointAddress a;
            a.ipv4 = 0x0a000001 + i;
            a.mac = {0x52, 0x54, 0, 0, 0, static_cast<uint8_t>(i + 1)};
            directory.push_back(a);
            // Progress goes out at once, also into a pipe (block-buffered otherwise).
            out << fmt::format("{}: rxe0 ready ({} ms)\n", spec.name, vms.back()->ReadyTime().count())
                << std::flush;
        }

        // Config::Reset also resets globals, so it comes first; the binding takes effect
        // when a simulator is created, so any made already is dropped.
        Config::Reset();
        Simulator::Destroy();
        GlobalValue::Bind("SimulatorImplementationType",
                          StringValue("ns3::RealtimeSimulatorImpl"));
        UsePicoseconds();
        for (const auto& kv : opt.set)
        {
            const auto eq = kv.find('=');
            if (!Config::SetDefaultFailSafe(kv.substr(0, eq), StringValue(kv.substr(eq + 1))))
            {
                err << "fabemu emulate: --set '" << kv
                    << "': no such attribute, or the value does not fit it\n";
                result.exitCode = kExitBadInput;
                return result;
            }
        }
        EmulateResult r = result;
        {
            RoceFabricHelper fabric;
            fabric.Install(TopologySpec::Star(opt.count, LinkParams{rate.Get(), delay.Get()}));
            for (unsigned i = 0; i < opt.count; ++i)
            {
                // RoCEv2 over IPv6 (GID 0) goes between the endpoints' link-local addresses.
                auto ll = directory[i].LinkLocal(); // Ipv6Address takes a non-const pointer
                fabric.AddHostRoute(i, Ipv6Address(ll.data()));
            }
            std::vector<std::unique_ptr<EdgePort>> edges;
            for (unsigned i = 0; i < opt.count; ++i)
            {
                edges.push_back(std::make_unique<EdgePort>(
                    "h" + std::to_string(i), fabric.GetNic(i)->GetDevice(),
                    std::make_unique<TapPort>(vms[i]->Spec().tap), 1500, 3, directory));
            }
            LagMonitor lag;
            Simulator::Schedule(MilliSeconds(1), &LagMonitor::Sample, &lag);
            for (auto& e : edges)
            {
                e->Start();
            }
            SimulatorThread sim;

            std::vector<std::pair<size_t, uint64_t>> started;
            for (const auto& s : servers)
            {
                started.emplace_back(s.host, vms[s.host]->Agent().Start(s.cmd, std::chrono::seconds(300)));
                r.commands.push_back({"h" + std::to_string(s.host), s.cmd, -1, ""});
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(servers.empty() ? 0 : 1500));
            bool ok = true;
            if (opt.parallel)
            {
                std::vector<std::pair<size_t, uint64_t>> running;
                for (const auto& t : runs)
                {
                    running.emplace_back(t.host, vms[t.host]->Agent().Start(t.cmd, std::chrono::seconds(300)));
                    r.commands.push_back({"h" + std::to_string(t.host), t.cmd, -1, ""});
                }
                for (size_t i = 0; i < running.size(); ++i)
                {
                    const auto c = Collect(vms[running[i].first]->Agent(), running[i].second,
                                           std::chrono::seconds(310));
                    auto& rec = r.commands[started.size() + i];
                    rec.exitCode = c.exitCode;
                    rec.out = c.out + c.err;
                    ok = ok && c.exitCode == 0;
                }
            }
            else
            {
                for (const auto& t : runs)
                {
                    auto& agent = vms[t.host]->Agent();
                    const auto c = Collect(agent, agent.Start(t.cmd, std::chrono::seconds(300)),
                                           std::chrono::seconds(305));
                    r.commands.push_back({"h" + std::to_string(t.host), t.cmd, c.exitCode, c.out + c.err});
                    ok = ok && c.exitCode == 0;
                }
            }
            for (size_t i = 0; i < started.size(); ++i)
            {
                // A server whose client failed may wait for ever: 60 s, then it is recorded failed.
                const auto c = Collect(vms[started[i].first]->Agent(), started[i].second,
                                       std::chrono::seconds(60));
                r.commands[i].exitCode = c.exitCode;
                r.commands[i].out = c.out + c.err;
                ok = ok && c.exitCode == 0;
            }
            if (signals.Signal())
            {
                throw AgentError("interrupted"); // unwind as on any other error
            }
            sim.Stop();
            for (auto& e : edges)
            {
                e->Stop();
                const auto c = e->GetCounters();
                r.framesFromEndpoints += c.fromTap;
                r.framesToEndpoints += c.toTap;
                r.arpReplies += c.arpReplies;
                r.neighbourAdverts += c.neighbourAdverts;
                for (const auto& [why, n] : c.drops)
                {
                    r.edgeDrops[why] += n;
                }
            }
            r.fabricDrops = fabric.TotalDrops();
            for (const auto& sw : fabric.GetSwitches())
            {
                r.congestionDrops += sw->GetDrops(SwitchDropReason::BufferFull) +
                                     sw->GetDrops(SwitchDropReason::HeadroomOverflow);
            }
            r.pfcFrames = fabric.TotalPfcFrames();
            r.ecnMarks = fabric.TotalEcnMarks();
            std::sort(lag.lagNs.begin(), lag.lagNs.end());
            if (!lag.lagNs.empty())
            {
                r.lagMaxMs = lag.lagNs.back() / 1e6;
                r.lagP99Ms = lag.lagNs[lag.lagNs.size() * 99 / 100] / 1e6;
            }
            r.timingFaithful = r.lagMaxMs * 1e6 <= lagLimit.Get().GetNanoSeconds();
            edges.clear();
            Simulator::Destroy();
            r.exitCode = ok ? kExitOk : kExitFailure;
        }
        for (const auto& c : r.commands)
        {
            out << fmt::format("--- {}: {} (exit {})\n{}", c.on, c.cmd, c.exitCode, c.out);
        }
        out << fmt::format("edge: {} neighbour solicitations answered\n", r.neighbourAdverts);
        out << fmt::format("fabric: {} frames from endpoints, {} to endpoints, {} ARP answered, "
                           "{} dropped in switches ({} for lack of buffer), {} PFC frames, "
                           "{} ECN marks\n",
                           r.framesFromEndpoints, r.framesToEndpoints, r.arpReplies, r.fabricDrops,
                           r.congestionDrops, r.pfcFrames, r.ecnMarks);
        for (const auto& [why, n] : r.edgeDrops)
        {
            out << fmt::format("edge drops: {} {}\n", n, why);
        }
        out << fmt::format("lag of simulated time behind the wall clock: max {:.3f} ms, p99 {:.3f} ms{}\n",
                           r.lagMaxMs, r.lagP99Ms,
                           r.timingFaithful ? "" : "  WARNING: above the threshold, timing not faithful");
        return r;
    }
    catch (const std::exception& e)
    {
        if (signals.Signal())
        {
            err << "fabemu emulate: interrupted by signal " << signals.Signal()
                << "; VMs stopped, taps and run folders removed\n";
            result.interruptedBy = signals.Signal();
        }
        else
        {
            err << "fabemu emulate: " << e.what() << "\n";
        }
        return result;
    }
}

} // namespace fabemu
