#include "emulate.h"

#include "edge-port.h"
#include "endpoints.h"
#include "exit-codes.h"
#include "host-rdma-probe.h"
#include "netns-endpoint.h"
#include "lag-monitor.h"
#include "realtime-simulator.h"
#include "realtime-thread.h"
#include "status-server.h"
#include "tap-relay.h"
#include "time-resolution.h"
#include "vm-launcher.h"

#include "results.h"
#include "scenario-fabric.h"

#include "ib-fabric-helper.h"
#include "ib-gateway.h"
#include "ib-recorders.h"
#include "roce-fabric-helper.h"
#include "roce-recorders.h"

#include "ns3/abort.h"
#include "ns3/config.h"
#include "ns3/double.h"
#include "ns3/uinteger.h"
#include "ns3/global-value.h"
#include "ns3/simulator.h"
#include "ns3/string.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <future>
#include <map>
#include <mutex>
#include <sstream>
#include <pthread.h>
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
              Simulator::Run();
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
    std::thread m_thread; // last: it starts at once and uses the members above
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
    virtual std::chrono::milliseconds ReadyTime() const = 0;
};

class VmEndpoint : public Endpoint
{
  public:
    explicit VmEndpoint(std::unique_ptr<Vm> vm)
        : m_vm(std::move(vm))
    {
    }
    const std::string& Interface() const override { return m_vm->Spec().tap; }
    uint64_t Start(const std::string& cmd, std::chrono::seconds timeout) override
    {
        return m_vm->Agent().Start(cmd, timeout);
    }
    CommandResult Wait(uint64_t id, std::chrono::seconds timeout) override
    {
        return Collect(m_vm->Agent(), id, timeout);
    }
    std::chrono::milliseconds ReadyTime() const override { return m_vm->ReadyTime(); }
    pid_t Pid() const { return m_vm->Pid(); }

  private:
    std::unique_ptr<Vm> m_vm;
};

class NamespaceEndpoint : public Endpoint
{
  public:
    explicit NamespaceEndpoint(const NetnsSpec& spec)
        : m_ns(spec)
    {
    }
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
                        {"state", c.exitCode == -1 ? "running" : "exited"},
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
        }
    }
}

/// Runs the scenario's commands through the guest agents: each after its 'after'
/// delay, waited for unless it is in the background; the background ones are
/// collected at the end. Returns whether every one exited 0.
bool
RunCommands(const Scenario& s,
            std::map<uint32_t, std::unique_ptr<Endpoint>>& vms,
            const SignalGuard& signals,
            LiveStatus& live,
            std::vector<CommandOutcome>& commands)
{
    // Commands in order: wait 'after', start; wait for it unless it is in the background.
    struct Background
    {
        size_t record;
        uint32_t host;
        uint64_t id;
        std::chrono::steady_clock::time_point deadline;
    };
    std::vector<Background> background;
    bool ok = true;
    for (const auto& w : s.workloads)
    {
        if (w.type != "command" || signals.Signal())
        {
            continue;
        }
        // Wait 'after', but not past a signal: a command started after SIGINT would
        // escape the clean-up that already ran.
        const auto start = std::chrono::steady_clock::now() + std::chrono::milliseconds(w.afterPs / 1'000'000'000);
        while (std::chrono::steady_clock::now() < start && !signals.Signal())
        {
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
        if (signals.Signal())
        {
            break;
        }
        const auto timeout = std::chrono::seconds(std::max<int64_t>(1, w.timeoutPs / 1'000'000'000'000));
        auto& endpoint = *vms[w.on];
        const uint64_t id = endpoint.Start(w.run, timeout);
        commands.push_back({"h" + std::to_string(w.on), w.run, -1, ""});
        live.Set("commands", CommandsJson(commands));
        if (w.background)
        {
            background.push_back({commands.size() - 1, w.on, id,
                                  std::chrono::steady_clock::now() + timeout});
            continue;
        }
        const auto c = endpoint.Wait(id, timeout + std::chrono::seconds(5));
        commands.back().exitCode = c.exitCode;
        commands.back().out = c.out + c.err;
        ok = ok && c.exitCode == 0;
        live.Set("commands", CommandsJson(commands));
    }
    for (const auto& b : background)
    {
        // A server whose client failed may wait for ever: then it gets 10 s more.
        const auto left = std::chrono::duration_cast<std::chrono::seconds>(
            b.deadline - std::chrono::steady_clock::now());
        const auto wait = ok ? std::max(left, std::chrono::seconds(10))
                             : std::min(std::max(left, std::chrono::seconds(1)),
                                        std::chrono::seconds(10));
        const auto c = vms[b.host]->Wait(b.id, wait);
        commands[b.record].exitCode = c.exitCode;
        commands[b.record].out = c.out + c.err;
        ok = ok && c.exitCode == 0;
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
            cmd.replace(pos, key.size(), Scenario::HostAddress(h));
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
        err << "fabemu emulate: --scheduling must be shared or realtime, not '" << opt.scheduling << "'\n";
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
    for (auto [specs, background] : {std::pair{&opt.servers, true}, std::pair{&opt.run, opt.parallel}})
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

EmulateResult
EmulateScenario(const Scenario& s, const EmulateSetup& setup, std::ostream& out, std::ostream& err)
{
    EmulateResult result;
    result.exitCode = kExitBadInput;
    if (setup.bridge && setup.relay)
    {
        err << "fabemu emulate: --bridge and --relay are two baselines; choose one\n";
        return result;
    }
    try
    {
        CheckAttributes(s);
    }
    catch (const ScenarioError& e)
    {
        err << e.what() << "\n";
        return result;
    }
    result.exitCode = kExitFailure;
    if (geteuid() != 0)
    {
        err << s.file << ": real endpoints need root (a VM's tap, a namespace's veth); run as "
                         "root, or drop the endpoints to simulate only\n";
        return result;
    }
    const auto isNamespace = [](const EndpointSpec& e) { return e.kind == "netns"; };
    const bool anyVm = !std::all_of(s.endpoints.begin(), s.endpoints.end(), isNamespace);
    const bool anyNamespace = std::any_of(s.endpoints.begin(), s.endpoints.end(), isNamespace);
    const auto rdmaNamespace = std::find_if(s.endpoints.begin(), s.endpoints.end(), [&](const auto& e) {
        return isNamespace(e) && e.device != "none";
    });
    if (rdmaNamespace != s.endpoints.end())
    {
        const auto host = ProbeHostRdma();
        if (!host.available)
        {
            err << s.file << ": " << rdmaNamespace->host << " is a namespace with "
                << rdmaNamespace->device << ", which needs Soft-RoCE/Soft-iWARP in namespaces: "
                << host.reason
                << " (VM endpoints, the default, work here; device none gives a plain IP namespace)\n";
            return result;
        }
    }
    const std::string image =
        anyVm ? BuildImage(setup.cache.empty() ? DefaultCacheDir() : setup.cache, "", err) : "";
    if (anyVm && image.empty())
    {
        return result;
    }
    // rxe takes its path MTU from eth0: IB MTU 2048/4096 need a jumbo eth0.
    const uint32_t ethMtu = s.fabric.mtu > 1024 ? 4200 : 1500;

    SignalGuard signals;
    try
    {
        // The endpoints first: their taps (or veths) must exist before the edge opens them.
        std::unique_ptr<VmLauncher> launcher;
        if (anyNamespace)
        {
            NetnsEndpoint::SweepStale();
        }
        if (anyVm)
        {
            launcher = std::make_unique<VmLauncher>(VmImage::In(image));
        }
        std::map<uint32_t, std::unique_ptr<Endpoint>> vms;
        std::vector<EndpointAddress> directory;
        for (const auto& e : s.endpoints)
        {
            const uint32_t mac = e.index + 1;
            const std::string macText = fmt::format("52:54:00:00:{:02x}:{:02x}", mac >> 8, mac & 0xff);
            const std::string iface = fmt::format("fe{}t{}", getpid(), e.index);
            std::string device = e.device + "0";
            if (isNamespace(e))
            {
                NetnsSpec spec;
                spec.name = e.host;
                spec.netns = fmt::format("fe{}n{}", getpid(), e.index);
                spec.hostIf = iface;
                spec.ipv4 = Scenario::HostAddress(e.index) + "/16";
                spec.mac = macText;
                spec.mtu = ethMtu;
                spec.device = e.device;
                device = e.device == "none" ? "namespace, no RDMA device," : "namespace with " + device;
                auto ns = std::make_unique<NamespaceEndpoint>(spec);
                NamespaceEndpoint* raw = ns.get();
                vms[e.index] = std::move(ns);
                signals.Watch([raw] { raw->KillAll(); });
            }
            else
            {
                VmSpec spec;
                spec.name = e.host;
                spec.ipv4 = Scenario::HostAddress(e.index) + "/16";
                spec.mac = macText;
                spec.device = e.device;
                spec.mtu = ethMtu;
                spec.tap = iface;
                // On iWARP the switches' ECN marks reach siw through the guest's own TCP.
                spec.tcpEcn = s.fabric.type == "iwarp" && s.fabric.ecn;
                auto vm = std::make_unique<VmEndpoint>(launcher->Start(spec));
                const pid_t pid = vm->Pid();
                vms[e.index] = std::move(vm);
                signals.Watch([pid] { kill(pid, SIGKILL); });
            }
            EndpointAddress a;
            a.ipv4 = 0x0a000001 + e.index;
            a.mac = {0x52, 0x54, 0, 0, static_cast<uint8_t>(mac >> 8), static_cast<uint8_t>(mac)};
            directory.push_back(a);
            // Progress goes out at once, also into a pipe (block-buffered otherwise).
            out << fmt::format("{}: {} ready ({} ms)\n", e.host, device, vms[e.index]->ReadyTime().count())
                << std::flush;
        }

        // The two baselines: the same endpoints and commands with no model between them.
        const auto runWithoutModel = [&](EmulateResult& r) {
            LiveStatus live;
            const bool ok = RunCommands(s, vms, signals, live, r.commands);
            if (signals.Signal())
            {
                throw AgentError("interrupted");
            }
            PrintCommands(r.commands, setup.printOutputs, out);
            r.exitCode = ok ? kExitOk : kExitFailure;
        };
        if (setup.bridge)
        {
            // A plain Linux bridge.
            LinuxBridge bridge;
            for (const auto& [index, vm] : vms)
            {
                bridge.Join(vm->Interface());
            }
            EmulateResult r = result;
            runWithoutModel(r);
            out << "baseline: the VMs were on a plain Linux bridge (no fabric model, no lag)\n";
            return r;
        }
        if (setup.relay)
        {
            // The emulator's own tap I/O and thread.
            std::vector<TapRelay::Member> members;
            for (size_t i = 0; i < s.endpoints.size(); ++i)
            {
                members.push_back({std::make_unique<TapPort>(vms[s.endpoints[i].index]->Interface()),
                                   directory[i].mac});
            }
            TapRelay relay(std::move(members));
            relay.Start();
            EmulateResult r = result;
            runWithoutModel(r);
            relay.Stop();
            r.framesFromEndpoints = relay.FramesRead();
            r.framesToEndpoints = relay.FramesWritten();
            r.scheduling = relay.Scheduling();
            out << fmt::format("baseline: the endpoints were joined by a bare user-space relay (no fabric model, "
                               "its thread {}): {} frames read, {} written, {} refused by a full tap\n",
                               r.scheduling, r.framesFromEndpoints, r.framesToEndpoints,
                               relay.FramesRefused());
            return r;
        }
        // Config::Reset also resets globals, so it comes first; the binding takes effect
        // when a simulator is created, so any made already is dropped.
        Config::Reset();
        Simulator::Destroy();
        GlobalValue::Bind("SimulatorImplementationType",
                          StringValue("ns3::FabemuRealtimeSimulatorImpl"));
        UsePicoseconds();
        if (s.fabric.type == "infiniband")
        {
            // In real time the periodic flow-control packet (every 2 us: IBA's longest gap)
            // would be millions of events a second. It only repairs lost FCPs, which the
            // model never loses; the credit loop runs on the FCPs sent on every change.
            // A scenario's fabric.set may still set it (applied after this).
            Config::SetDefault("ns3::IbPort::FcpInterval", TimeValue(MilliSeconds(1)));
        }
        ApplyFabricDefaults(s);
        if (s.fabric.type == "iwarp")
        {
            // Real siw endpoints cross the Ethernet switch model as plain TCP/IP: no PFC
            // (set by the loader), and ECN as DCTCP wants it, every packet above K marked.
            Config::SetDefault("ns3::SwitchMmu::Kmax", UintegerValue(s.fabric.kmin));
            Config::SetDefault("ns3::SwitchMmu::Pmax", DoubleValue(1.0));
        }
        EmulateResult r = result;
        {
            // RoCEv2 and iWARP endpoints cross the Ethernet switch model; InfiniBand
            // endpoints cross the IB model through a gateway at each edge.
            const bool infiniband = s.fabric.type == "infiniband";
            std::unique_ptr<RoceFabricHelper> roce;
            std::unique_ptr<IbFabricHelper> ib;
            std::vector<std::unique_ptr<EdgePort>> edges;
            const Time queueInterval = PicoSeconds(std::max<int64_t>(s.record.queueIntervalPs, 1'000'000'000));
            std::ostringstream pfcRows;
            std::ostringstream queueRows;
            std::ostringstream rateRows; // DCQCN: "time_ns host qpn rate_bps", edges and simulated NICs
            std::unique_ptr<RateLog> rateLog;
            std::unique_ptr<PfcLog> pfcLog;
            std::unique_ptr<QueueSampler> roceQueues;
            std::unique_ptr<IbQueueSampler> ibQueues;
            std::vector<Ptr<PcapWriter>> pcaps;
            std::vector<Ptr<IbPcapWriter>> ibPcaps;
            if (infiniband)
            {
                ib = std::make_unique<IbFabricHelper>();
                ib->SetLmc(s.fabric.lmc);
                ib->SetRouting(s.fabric.routing == "updown" ? IbFabricHelper::Routing::UpDown
                                                            : IbFabricHelper::Routing::MinHop);
                ib->Install(BuildTopology(s));
                auto tunnel = std::make_shared<IbTunnel>();
                std::vector<uint16_t> lids;
                for (const auto& e : s.endpoints)
                {
                    lids.push_back(ib->GetHca(e.index)->GetLid());
                }
                for (const auto& e : s.endpoints)
                {
                    auto gateway = std::make_unique<IbGateway>(ib->GetHca(e.index)->GetPort(), e.index,
                                                               ib->GetHca(e.index)->GetLid(), tunnel,
                                                               directory, lids);
                    edges.push_back(std::make_unique<EdgePort>(
                        e.host, std::move(gateway), std::make_unique<TapPort>(vms[e.index]->Interface()),
                        ethMtu, 3, directory));
                }
                ibQueues = std::make_unique<IbQueueSampler>(*ib, queueRows, queueInterval);
                for (uint32_t h : s.record.pcap)
                {
                    if (!setup.resultsDir.empty())
                    {
                        ibPcaps.push_back(Create<IbPcapWriter>(
                            ib->GetHca(h)->GetPort(), setup.resultsDir + "/" + fmt::format("h{}.pcap", h)));
                    }
                }
            }
            else
            {
                roce = std::make_unique<RoceFabricHelper>();
                roce->Install(BuildTopology(s));
                for (size_t i = 0; i < s.endpoints.size(); ++i)
                {
                    // RoCEv2 over IPv6 (GID 0) goes between the endpoints' link-local addresses.
                    auto ll = directory[i].LinkLocal(); // Ipv6Address takes a non-const pointer
                    roce->AddHostRoute(s.endpoints[i].index, Ipv6Address(ll.data()));
                }
                for (const auto& e : s.endpoints)
                {
                    edges.push_back(std::make_unique<EdgePort>(
                        e.host, roce->GetNic(e.index)->GetDevice(),
                        std::make_unique<TapPort>(vms[e.index]->Interface()), ethMtu, 3, directory));
                }
                if (s.fabric.cc == "dcqcn")
                {
                    for (size_t i = 0; i < edges.size(); ++i)
                    {
                        edges[i]->EnableDcqcn(DataRate(s.topology.link.bitsPerSecond));
                        // An edge's flow is (destination, destination QP): the BTH names no
                        // source QP, and rxe numbers QPs alike on every VM, so the row names
                        // the destination host too (peer; the fabric numbers its hosts'
                        // addresses up from host 0's).
                        edges[i]->SetRateObserver([&rateRows, host = s.endpoints[i].index,
                                                   first = roce->GetHostIpv4(0)](uint32_t ip, uint32_t qpn,
                                                                                 uint64_t bps) {
                            rateRows << Simulator::Now().GetNanoSeconds() << ' ' << host << ' ' << qpn << ' '
                                     << bps << ' ' << ip - first << '\n';
                        });
                    }
                    rateLog = std::make_unique<RateLog>(*roce, rateRows); // simulated flows beside them
                }
                // Recorders run on the simulation thread and are read once it has stopped.
                pfcLog = std::make_unique<PfcLog>(*roce, pfcRows);
                roceQueues = std::make_unique<QueueSampler>(*roce, queueRows, queueInterval);
                for (uint32_t h : s.record.pcap)
                {
                    if (!setup.resultsDir.empty())
                    {
                        pcaps.push_back(Create<PcapWriter>(roce->GetNic(h)->GetDevice(),
                                                           setup.resultsDir + "/" + fmt::format("h{}.pcap", h)));
                    }
                }
            }
            RdmaFabric& fabric = infiniband ? static_cast<RdmaFabric&>(*ib) : *roce;
            FlowRunner runner(fabric); // simulated background traffic, if any
            runner.Add(BuildFlows(s));
            runner.Start();
            LagMonitor lag;
            lag.Start();
            for (auto& e : edges)
            {
                e->Start();
            }
            // Live counters for `fabemu status` while the run goes on.
            auto live = std::make_shared<LiveStatus>();
            live->Set("scenario", s.name);
            live->Set("fabric_type", s.fabric.type);
            live->Set("pid", static_cast<long>(getpid()));
            live->Set("commands", nlohmann::json::array());
            const auto simImpl = DynamicCast<FabemuRealtimeSimulatorImpl>(Simulator::GetImplementation());
            StatusPublisher publisher;
            publisher.live = live;
            publisher.gather = [&]() {
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
                                        {"drops", c.drops}});
                }
                nlohmann::json fab;
                if (roce)
                {
                    fab = {{"drops", roce->TotalDrops()},
                           {"pfc_pause_frames", roce->TotalPfcFrames()},
                           {"ecn_marks", roce->TotalEcnMarks()},
                           {"cnps", roce->TotalCnps()},
                           {"peak_queue_bytes", roceQueues->Peak()}};
                }
                else
                {
                    fab = {{"credit_stalls", ib->TotalCreditStalls()},
                           {"buffer_overflows", ib->TotalOverflows()},
                           {"fecn_marks", ib->TotalFecnMarks()},
                           {"peak_queue_bytes", ibQueues->Peak()}};
                }
                const double lagNow = lag.LastNs() / 1e6;
                return nlohmann::json{
                    {"simulation",
                     {{"time_s", simImpl->SimulatedNow().GetSeconds()},
                      {"lag_ms", lagNow},
                      {"lag_max_ms", lag.MaxNs() / 1e6},
                      {"scheduling", CurrentThreadScheduling()}, // this runs on the simulation thread
                      {"timing_faithful_so_far", lag.MaxNs() * 1000 <= s.lagThresholdPs}}},
                    {"edges", edgeList},
                    {"fabric", fab}};
            };
            simImpl->AddIdleHook([&publisher] { publisher.MaybePublish(); });
            std::unique_ptr<StatusServer> status;
            try
            {
                status = std::make_unique<StatusServer>(StatusSocketPath(getpid()), live);
                out << "live status: fabemu status " << status->Path() << "\n" << std::flush;
            }
            catch (const StatusError& e)
            {
                err << "warning: " << e.what() << "; the run goes on without live status\n";
            }
            SimulatorThread sim(s.scheduling == "realtime" ? ThreadScheduling::Realtime
                                                           : ThreadScheduling::Shared);
            r.scheduling = sim.Scheduling();
            if (s.scheduling == "realtime" && r.scheduling != "SCHED_FIFO")
            {
                err << "warning: scheduling realtime: SCHED_FIFO was not permitted; the simulation "
                       "thread runs at "
                    << r.scheduling << "\n";
            }

            const bool ok = RunCommands(s, vms, signals, *live, r.commands);
            if (signals.Signal())
            {
                throw AgentError("interrupted"); // unwind as on any other error
            }
            sim.Stop();
            r.simTimeS = Simulator::Now().GetSeconds();
            for (auto& e : edges)
            {
                e->Stop();
                const auto c = e->GetCounters();
                r.framesFromEndpoints += c.fromTap;
                r.framesToEndpoints += c.toTap;
                r.bytesToEndpoints += c.bytesToTap;
                r.arpReplies += c.arpReplies;
                r.neighbourAdverts += c.neighbourAdverts;
                r.edgeCnpsSent += c.cnpsSent;
                r.edgeCnpsConsumed += c.cnpsConsumed;
                r.framesPaced += c.framesPaced;
                r.framesHeld += c.framesHeld;
                r.peakHeldBytes = std::max(r.peakHeldBytes, c.peakHeldBytes);
                r.edgePauses += c.pausesToFabric;
                if (c.heldAtStop > 0)
                {
                    r.edgeDrops["held_at_stop"] += c.heldAtStop;
                }
                if (c.lowestRateBps && (!r.lowestRateBps || c.lowestRateBps < r.lowestRateBps))
                {
                    r.lowestRateBps = c.lowestRateBps;
                }
                for (const auto& [why, n] : c.drops)
                {
                    r.edgeDrops[why] += n;
                }
            }
            if (roce)
            {
                r.fabricDrops = roce->TotalDrops();
                r.congestionDrops = roce->CongestionDrops();
                r.switchDrops = roce->DropsByReason();
                r.pfcFrames = roce->TotalPfcFrames();
                r.ecnMarks = roce->TotalEcnMarks();
                r.cnps = roce->TotalCnps();
                r.peakQueueBytes = roceQueues->Peak();
            }
            else
            {
                r.fabricDrops = ib->TotalNoRouteDrops();
                if (r.fabricDrops > 0)
                {
                    r.switchDrops["no_route"] = r.fabricDrops;
                }
                r.ecnMarks = ib->TotalFecnMarks();
                r.cnps = ib->TotalBecns();
                r.creditStalls = ib->TotalCreditStalls();
                r.bufferOverflows = ib->TotalOverflows();
                r.peakQueueBytes = ibQueues->Peak();
            }
            r.flows = runner.Outcomes(); // every flow: completed, failed or pending
            r.flowCount = runner.Flows().size();
            const LagMonitor::Summary lagSummary = lag.Summarize();
            r.lagMaxMs = lagSummary.maxMs;
            r.lagP99Ms = lagSummary.p99Ms;
            r.readsDeferred = simImpl->GetDeferredReads();
            r.maxBacklogMs = simImpl->GetMaxBacklog().GetSeconds() * 1e3;
            r.timingFaithful = r.lagMaxMs * 1e9 <= s.lagThresholdPs;
            if (!setup.resultsDir.empty())
            {
                if (roce)
                {
                    WriteCsv(setup.resultsDir + "/pfc.csv", "time_ns,node,port,prio,event", pfcRows.str());
                }
                if (rateLog)
                {
                    WriteCsv(setup.resultsDir + "/rate.csv", "time_ns,host,qpn,rate_bps,peer", rateRows.str());
                }
                WriteCsv(setup.resultsDir + "/queue.csv", "time_ns,node,port,prio,bytes",
                         queueRows.str());
                std::ostringstream lagRows;
                for (const auto& [boundNs, events] : lagSummary.distribution)
                {
                    lagRows << boundNs << ' ' << events << '\n';
                }
                WriteCsv(setup.resultsDir + "/lag.csv", "lag_ns_at_most,events", lagRows.str());
            }
            pcaps.clear();
            ibPcaps.clear();
            edges.clear();
            Simulator::Destroy();
            r.exitCode = ok ? kExitOk : kExitFailure;
        }
        PrintCommands(r.commands, setup.printOutputs, out);
        out << fmt::format("edge: {} neighbour solicitations answered; {} frames held for VMs that "
                           "were not reading (peak {} bytes, {} pauses sent to the fabric)\n",
                           r.neighbourAdverts, r.framesHeld, r.peakHeldBytes, r.edgePauses);
        if (s.fabric.type == "infiniband")
        {
            out << fmt::format("InfiniBand: {} credit stalls, {} buffer overflows (must be 0)\n",
                               r.creditStalls, r.bufferOverflows);
        }
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
        out << fmt::format("lag of simulated time behind the wall clock ({}): max {:.3f} ms, p99 {:.3f} ms{}\n",
                           r.scheduling, r.lagMaxMs, r.lagP99Ms,
                           r.timingFaithful ? "" : "  WARNING: above the threshold, timing not faithful");
        if (r.readsDeferred > 0)
        {
            out << fmt::format("overload: the simulation fell more than {:g} ms behind the wall clock and left "
                               "the endpoints' frames in the kernel {} times until it caught up (what did not "
                               "fit there is in the edge drops as socket_overflow)\n",
                               r.maxBacklogMs, r.readsDeferred);
        }
        return r;
    }
    catch (const ScenarioError& e)
    {
        err << e.what() << "\n";
        result.exitCode = kExitBadInput;
        return result;
    }
    catch (const std::invalid_argument& e)
    {
        err << s.file << ": the fabric cannot be built as configured: " << e.what() << "\n";
        result.exitCode = kExitBadInput;
        return result;
    }
    catch (const std::exception& e)
    {
        if (signals.Signal())
        {
            err << s.file << ": interrupted by signal " << signals.Signal()
                << "; VMs stopped, taps and run folders removed\n";
            result.interruptedBy = signals.Signal();
        }
        else
        {
            err << s.file << ": " << e.what() << "\n";
        }
        return result;
    }
}


} // namespace fabemu
