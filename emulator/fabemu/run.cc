#include "emulator/fabemu/run.h"

#include "emulator/fabemu/emulate.h"
#include "emulator/fabemu/exit-codes.h"
#include "emulator/fabemu/launch-prediction.h"
#include "emulator/fabemu/results-folder.h"
#include "emulator/fabemu/time-resolution.h"
#include "emulator/runner/collective-jobs.h"
#include "emulator/runner/deadlock-watch.h"
#include "emulator/runner/fabric.h"
#include "emulator/runner/fault-schedule.h"
#include "emulator/runner/node-fabric.h"
#include "emulator/runner/partitioned-run.h"
#include "emulator/runner/scenario-fabric.h"
#include "emulator/runner/summary.h"
#include "scenarios/src/results.h"
#include "scenarios/src/scenario.h"

#include "ns3/config.h"
#include "ns3/global-value.h"
#include "ns3/simulator.h"
#include "ns3/string.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <sys/wait.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <regex>
#include <sstream>
#include <unistd.h>

namespace fabemu
{

namespace fs = std::filesystem;
using nlohmann::json;
using namespace ns3;

namespace
{

/// Progress of a simulation: a live bar on a terminal, a line every few seconds otherwise.
/// A run ends at its horizon (the scenario's duration) or once its work is done, whichever
/// comes first: \p work gives the share of the work done (0 to 1), or a negative number
/// while there is none to measure. The bar shows the larger share, and the ETA the sooner
/// end: "ETA ~" from the work's pace, "ETA <=" from the horizon.
class SimProgress
{
  public:
    SimProgress(ProgressMode mode, std::ostream& out, Time horizon, std::function<double()> work)
        : m_mode(mode),
          m_out(out),
          m_horizon(horizon),
          m_work(std::move(work)),
          m_step(std::max(horizon / 1000, NanoSeconds(100))),
          m_wall0(std::chrono::steady_clock::now()),
          m_last(m_wall0)
    {
        if (m_mode != ProgressMode::Quiet)
        {
            Simulator::Schedule(m_step, &SimProgress::Tick, this);
        }
    }

    void Finish()
    {
        if (m_mode == ProgressMode::Bar && m_drawn)
        {
            Print();
            m_out << "\n" << std::flush;
        }
    }

  private:
    void Tick()
    {
        const auto now = std::chrono::steady_clock::now();
        const double since = std::chrono::duration<double>(now - m_last).count();
        if (since >= (m_mode == ProgressMode::Bar ? 0.2 : 5.0))
        {
            Print();
            m_last = now;
        }
        Simulator::Schedule(m_step, &SimProgress::Tick, this);
    }

    void Print()
    {
        const auto now = std::chrono::steady_clock::now();
        const double wall = std::chrono::duration<double>(now - m_wall0).count();
        const double simFrac =
            std::min(1.0, Simulator::Now().GetSeconds() / m_horizon.GetSeconds());
        const double work = m_work ? std::min(1.0, m_work()) : -1;
        const double frac = std::max(simFrac, work);
        const uint64_t events = Simulator::GetEventCount();
        const double rate = wall > 0 ? events / wall : 0;
        const auto remaining = [wall](double f) {
            return f > 0 ? wall * (1 - f) / f : std::numeric_limits<double>::infinity();
        };
        const bool byWork = work > 0 && remaining(work) < remaining(simFrac);
        const double eta = std::min(remaining(simFrac), remaining(work));
        const std::string stats = fmt::format(
            "sim {:.3f}/{:.3f} ms  {}wall {:.1f} s  ETA {}{}  {:.2f} M events/s",
            Simulator::Now().GetSeconds() * 1e3, m_horizon.GetSeconds() * 1e3,
            work >= 0 ? fmt::format("work {:.0f}%  ", work * 100) : "", wall,
            byWork ? "~" : "<= ", std::isfinite(eta) ? fmt::format("{:.0f} s", eta) : "?",
            rate / 1e6);
        if (m_mode == ProgressMode::Bar)
        {
            const int width = 30;
            const int full = static_cast<int>(frac * width);
            m_out << "\r[" << std::string(full, '#') << std::string(width - full, '.') << "] "
                  << fmt::format("{:3.0f}% ", frac * 100) << stats << "  " << std::flush;
            m_drawn = true;
        }
        else
        {
            m_out << fmt::format("progress: {:.0f}% {}\n", frac * 100, stats) << std::flush;
        }
    }

    ProgressMode m_mode;
    std::ostream& m_out;
    Time m_horizon;
    std::function<double()> m_work;
    Time m_step;
    std::chrono::steady_clock::time_point m_wall0;
    std::chrono::steady_clock::time_point m_last;
    bool m_drawn{false};
};

/// Where the throughput sampler reads a flow: when it starts, its bytes so far, whether it
/// has ended, and its size.
struct SampledFlow
{
    Time start;
    std::function<uint64_t()> delivered;
    std::function<bool()> ended;
    uint64_t bytes;
};

/// Throughput of each running flow, every interval: "time_ns flow gbps". A flow's last
/// row is the interval it ended in (completed or failed); a flow has no rows before it starts.
class ThroughputSampler
{
  public:
    ThroughputSampler(std::ostream& out, Time interval) : m_out(out), m_interval(interval)
    {
        Simulator::Schedule(m_interval, &ThroughputSampler::Sample, this);
    }

    /// The next flow id's.
    void Add(SampledFlow f)
    {
        m_flows.push_back(std::move(f));
        m_last.push_back(0);
        m_done.push_back(false);
    }

    /// The share of the sampled flows' bytes delivered so far (an ended flow's whole), or
    /// -1 where there are none. A flow sampled on another rank (start Time::Max()) is left out.
    double DeliveredShare() const
    {
        uint64_t total = 0;
        uint64_t got = 0;
        for (const SampledFlow& f : m_flows)
        {
            if (f.start == Time::Max())
            {
                continue;
            }
            total += f.bytes;
            got += f.ended() ? f.bytes : std::min(f.delivered(), f.bytes);
        }
        return total == 0 ? -1.0 : static_cast<double>(got) / total;
    }

  private:
    void Sample()
    {
        for (uint32_t id = 0; id < m_flows.size(); ++id)
        {
            const SampledFlow& f = m_flows[id];
            if (f.start > Simulator::Now() || m_done[id])
            {
                continue; // not started, or ended and reported
            }
            const bool ended = f.ended();
            // In-order bytes only grow; a smaller count would wrap into a spike.
            const uint64_t got = std::max(f.delivered(), m_last[id]);
            const double gbps = (got - m_last[id]) * 8.0 / m_interval.GetSeconds() / 1e9;
            m_out << Simulator::Now().GetNanoSeconds() << ' ' << id << ' '
                  << fmt::format("{:.6g}", gbps) << '\n';
            m_last[id] = got;
            m_done[id] = ended;
        }
        Simulator::Schedule(m_interval, &ThroughputSampler::Sample, this);
    }

    std::vector<SampledFlow> m_flows;
    std::ostream& m_out;
    Time m_interval;
    std::vector<uint64_t> m_last;
    std::vector<bool> m_done; ///< ended, and its last interval reported
};

/// "3 flows failed: retry count exceeded on h1→h4, h2→h4; 1 flow pending", naming a few
/// flows; "" when every flow completed.
std::string
FlowsVerdict(const json& summary)
{
    const size_t kNamed = 4;
    std::map<std::string, std::vector<std::string>> byReason;
    size_t failed = 0;
    size_t named = 0;
    for (const auto& f : summary["flows"])
    {
        if (f["state"] != "failed")
        {
            continue;
        }
        if (++failed <= kNamed)
        {
            ++named;
            byReason[f.value("reason", std::string("unknown"))].push_back(
                f["src"].get<std::string>() + "\u2192" + f["dst"].get<std::string>());
        }
    }
    const size_t pending = summary["flow_stats"]["pending"].get<size_t>();
    std::vector<std::string> parts;
    if (failed > 0)
    {
        std::vector<std::string> reasons;
        for (const auto& [why, flows] : byReason)
        {
            reasons.push_back(fmt::format("{} on {}", why, fmt::join(flows, ", ")));
        }
        parts.push_back(fmt::format(
            "{} flow{} failed: {}{}", failed, failed == 1 ? "" : "s", fmt::join(reasons, "; "),
            failed > named ? fmt::format(" and {} more", failed - named) : ""));
    }
    if (pending > 0)
    {
        parts.push_back(fmt::format("{} flow{} pending (not finished when the run ended)", pending,
                                    pending == 1 ? "" : "s"));
    }
    for (const auto& c : summary.value("collectives", json::array()))
    {
        if (c["state"] == "failed")
        {
            parts.push_back(fmt::format("collective {} iteration {} failed: {}",
                                        c["job"].get<std::string>(), c["iteration"].get<int>(),
                                        c["reason"].get<std::string>()));
        }
        else if (c["state"] == "pending")
        {
            parts.push_back(fmt::format("collective {} iteration {} pending (not finished when "
                                        "the run ended)",
                                        c["job"].get<std::string>(), c["iteration"].get<int>()));
        }
    }
    return fmt::format("{}", fmt::join(parts, "; "));
}

/// Stops the simulation once every group of flows that has any has ended.
class AllFlowsDone
{
  public:
    /// One more group of \p flows flows; none: it is never waited for.
    Callback<void> Add(size_t flows)
    {
        if (flows == 0)
        {
            return MakeNullCallback<void>();
        }
        ++m_open;
        return MakeCallback(&AllFlowsDone::Ended, this);
    }

  private:
    void Ended()
    {
        if (--m_open == 0)
        {
            Simulator::Stop();
        }
    }

    size_t m_open{0};
};

/// This rank's share of a partitioned run: which hosts it simulates.
struct RankContext
{
    PartitionedRun* run{nullptr};
    std::vector<uint32_t> rankOfHost;
    bool partitioned{false}; ///< split among ranks, or its one-rank reference (--ranks 1)

    bool Local(uint32_t host) const { return !run || rankOfHost.at(host) == run->Rank(); }
};

/// The flows of \p s until they are done or the duration ends: RDMA flows on \p fabric
/// (none when it is null: the node builder has no network), staged through the node
/// fabrics' NICs, and the node fabrics' own flows after them. FCTs and per-flow
/// throughput go into \p dir; every flow's outcome is returned. Fabric recorders are
/// the caller's.
std::vector<FlowRecord>
RunFlows(RdmaFabric* fabric, std::vector<std::unique_ptr<NodeFabric>>& nodes,
         CollectiveJobs* collectives, const Scenario& s, const FaultSchedule& faults,
         const fs::path& dir, ProgressMode mode, std::ostream& out, const RankContext& rank)
{
    std::ostringstream tputRows;
    std::optional<FlowRunner> runner;
    ThroughputSampler tput(tputRows, PicoSeconds(s.record.rateIntervalPs));
    uint32_t flows = 0;             // so far, RDMA then each node fabric's
    std::vector<size_t> workloadOf; // by flow id: fct.txt's HPCC dport
    AllFlowsDone done;
    if (fabric)
    {
        runner.emplace(*fabric);
        runner->Add(BuildFlows(s, &workloadOf));
        if (rank.partitioned)
        {
            runner->SetReleaseOnEnd(false); // as a partitioned run must (SetReleaseOnEnd)
        }
        if (rank.run)
        {
            runner->SetLocalHosts(
                Callback<bool, uint32_t>([&rank](uint32_t h) { return rank.Local(h); }));
        }
        FaultSchedule::AddStragglers(s, *runner);
        for (const auto& node : nodes)
        {
            node->AttachNics(*runner);
        }
        for (uint32_t id = 0; id < runner->Flows().size(); ++id, ++flows)
        {
            // A partitioned run samples a flow where its bytes arrive.
            const FlowSpec& f = runner->Flows()[id];
            const bool here = rank.Local(f.op == RdmaWorkRequest::Op::Read ? f.src : f.dst);
            tput.Add({here ? f.start : Time::Max(), [&runner, id] { return runner->Delivered(id); },
                      [&runner, id] { return runner->Ended(id); }, f.bytes});
        }
        // A rank sees only its own flows end: the ranks stop together (StopWhenAllDone).
        if (!rank.run)
        {
            runner->SetAllDoneCallback(done.Add(runner->Flows().size()));
        }
        runner->Start();
        if (rank.run && !runner->Flows().empty()) // none: to the duration, as one process
        {
            rank.run->StopWhenAllDone(
                [&runner, &rank] {
                    size_t pending = 0;
                    for (uint32_t id = 0; id < runner->Flows().size(); ++id)
                    {
                        pending += rank.Local(runner->Flows()[id].src) && !runner->Ended(id);
                    }
                    return pending;
                },
                MicroSeconds(10), PicoSeconds(s.durationPs));
        }
    }
    for (const auto& node : nodes)
    {
        const uint32_t first = flows;
        const size_t n = node->StartFlows(s, first);
        node->SetAllDoneCallback(done.Add(n));
        const auto own = node->Outcomes();
        NodeFabric* f = node.get();
        for (uint32_t id = first; id < first + n; ++id, ++flows)
        {
            tput.Add({own[id - first].spec.start, [f, id] { return f->Delivered(id); },
                      [f, id] { return f->Ended(id); }, own[id - first].spec.bytes});
        }
    }
    if (collectives)
    {
        collectives->Start(done.Add(collectives->Count()));
    }
    const Time horizon = PicoSeconds(s.durationPs);
    // The run waits for both its flows and its collectives: the work done is the lesser share.
    SimProgress progress(mode, out, horizon, [&tput, collectives] {
        const double bytes = tput.DeliveredShare();
        const double colls = collectives && collectives->Count() > 0 ? collectives->Progress() : -1;
        return bytes < 0 ? colls : colls < 0 ? bytes : std::min(bytes, colls);
    });
    Simulator::Stop(horizon);
    Simulator::Run();
    progress.Finish();

    std::vector<FlowRecord> outcomes = runner ? runner->Outcomes() : std::vector<FlowRecord>{};
    faults.ExplainFailures(outcomes); // the network's flows: hosts as the topology's
    std::ofstream fctTxt(dir / "fct.txt");
    std::ostringstream fctRows;
    if (runner)
    {
        std::function<uint16_t(const FlowRecord&)> dport; // empty: the real port
        if (s.record.fctDport == "hpcc")
        {
            // HPCC's fct_analysis.py keeps dport 200 (incast) and 100 (background).
            dport = [&](const FlowRecord& r) -> uint16_t {
                return s.workloads[workloadOf[r.id]].type == "incast" ? 200 : 100;
            };
        }
        runner->WriteFct(fctTxt, dport); // completed flows only
        for (const auto& r : runner->Records())
        {
            if (!r.Completed())
            {
                continue; // a failed flow has no FCT
            }
            fctRows << fmt::format(
                "{:08x} {:08x} {} {} {} {} {} {} {:.6g} {}\n", fabric->GetHostIpv4(r.spec.src),
                fabric->GetHostIpv4(r.spec.dst), r.srcPort, r.dstPort, r.spec.bytes,
                r.spec.start.GetNanoSeconds(), r.fct.GetNanoSeconds(), r.idealFct.GetNanoSeconds(),
                r.fct.GetSeconds() / r.idealFct.GetSeconds(), r.spec.tag);
        }
    }
    WriteCsv(dir / "fct.csv",
             "sip,dip,sport,dport,bytes,start_ns,fct_ns,ideal_fct_ns,slowdown,workload",
             fctRows.str());
    WriteCsv(dir / "throughput.csv", "time_ns,flow,gbps", tputRows.str());
    for (const auto& node : nodes)
    {
        const auto own = node->Outcomes();
        outcomes.insert(outcomes.end(), own.begin(), own.end());
    }
    return outcomes;
}

/// When the last of \p flows ended, on any rank; Time::Max() when one did not.
Time
LastFlowEnd(const std::vector<FlowRecord>& flows, const RankContext& rank)
{
    bool allHere = true;
    Time lastHere;
    for (const auto& r : flows)
    {
        if (rank.Local(r.spec.src)) // a rank knows its own flows' ends
        {
            allHere = allHere && r.state != FlowState::Pending;
            lastHere = std::max(lastHere, r.ended);
        }
    }
    if (rank.run)
    {
        return rank.run->LastEnd(allHere, lastHere);
    }
    return allHere ? lastHere : Time::Max();
}

/// A partitioned run's end: every rank's share to rank 0, which merges them into \p flows,
/// \p totals, \p simTime and the files of \p dir, the results one process would have
/// written. Whether this is rank 0.
bool
ShareResults(const Scenario& s, const RankContext& rank, const fs::path& dir,
             std::vector<FlowRecord>& flows, FabricTotals& totals, Time& simTime)
{
    const auto shares = rank.run->Gather(RankShare(
        flows, [&rank](uint32_t h) { return rank.Local(h); },
        [&flows](uint32_t id) { return flows.at(id).delivered; }, totals, dir));
    if (rank.run->Rank() != 0)
    {
        return false;
    }
    totals = MergeShares(shares, flows, dir, PicoSeconds(s.record.rateIntervalPs), simTime);
    return true;
}

/// A simulation-only scenario: everything written into \p dir; the summary's run part returned.
json
Simulate(const Scenario& s, const fs::path& dir, ProgressMode mode, std::ostream& out,
         const std::string& engine = "")
{
    Simulator::Destroy();
    Config::Reset();
    UsePicoseconds();
    // ns-3's one event order, with the least work (docs/performance.md); ranks bind theirs.
    GlobalValue::Bind("SchedulerType", StringValue("ns3::BucketScheduler"));
    // A partitioned run (engine gtw or null): MPI and the engine before anything is
    // built; `--ranks 1` (engine "alone"): this process, with the ranks' tie-breaking
    // and, as they do, without the deadlock watch (no rank sees the whole fabric).
    const DeterministicTies ties(engine == "alone");
    std::optional<PartitionedRun> part;
    PartitionPlan plan;
    RankContext rank;
    if (!engine.empty() && engine != "alone")
    {
        part.emplace(engine);
        plan = PlanPartition(s, part->Size());
        rank.run = &*part;
        rank.rankOfHost = plan.rankOfHost;
    }
    else if (engine == "alone" && HasNetwork(s) && PartitionProblem(s).empty())
    {
        // Every node on this rank, built as the ranks build their parts (contexts and all).
        plan.rankOfNode.assign(BuildTopology(s).Nodes().size(), 0);
    }
    rank.partitioned = !plan.rankOfNode.empty();
    ApplyFabricDefaults(s, RunMode::Simulation);
    std::unique_ptr<Fabric> fabric;
    FaultSchedule faults(s);
    if (HasNetwork(s))
    {
        fabric = FabricRegistry::Create(s.fabric.type);
        if (!plan.rankOfNode.empty() && !fabric->SetPartition(plan.rankOfNode))
        {
            throw ScenarioError(s.file, s.MarkOf("fabric.type"),
                                "fabric.type " + s.fabric.type + ": its links cannot cross ranks");
        }
        fabric->Build(s, RunMode::Simulation);
        if (s.fidelity == "packet") // analytical: nothing runs, nothing to record
        {
            fabric->AttachRecorders(
                s, {dir, PicoSeconds(s.record.queueIntervalPs), RunMode::Simulation});
        }
    }
    faults.Schedule(fabric.get()); // stragglers need no network
    std::vector<std::unique_ptr<NodeFabric>> nodes = NodeFabricsOf(s);
    for (const auto& node : nodes)
    {
        node->Build(s);
        node->AttachRecorders(s, dir);
    }
    if (!nodes.empty())
    {
        std::ofstream(dir / "topo.txt") << NodeTopologyMatrix(s.topology.node);
    }
    std::optional<CollectiveJobs> collectives;
    if (std::any_of(s.workloads.begin(), s.workloads.end(),
                    [](const WorkloadSpec& w) { return w.type == "collective"; }))
    {
        collectives.emplace(s, fabric ? &fabric->Rdma() : nullptr, nodes);
    }
    // Stops a run whose network can no longer move; not beside a server's own fabrics,
    // whose transfers it does not see.
    std::optional<DeadlockWatch> deadlocks;
    if (fabric && s.fidelity == "packet" && nodes.empty() && engine.empty())
    {
        deadlocks.emplace(*fabric);
    }
    std::vector<FlowRecord> flows;
    if (s.fidelity == "analytical")
    {
        if (collectives) // nothing is simulated: the validator let only collectives in
        {
            collectives->Estimate();
        }
    }
    else
    {
        flows = RunFlows(fabric ? &fabric->Rdma() : nullptr, nodes,
                         collectives ? &*collectives : nullptr, s, faults, dir, mode, out, rank);
    }
    FabricTotals totals;
    Time simTime = Simulator::Now();
    if (fabric)
    {
        if (rank.partitioned && !flows.empty())
        {
            fabric->CountUntil(LastFlowEnd(flows, rank)); // the ranks stop later, each its own time
        }
        fabric->WriteRecords();
        totals = fabric->Totals();
        if (deadlocks)
        {
            deadlocks->Annotate(totals.deadlock);
            deadlocks.reset();
        }
    }
    if (part && !ShareResults(s, rank, dir, flows, totals, simTime))
    {
        fabric.reset();
        Simulator::Destroy();
        return json{{"rank", part->Rank()}}; // rank 0 writes the results
    }
    if (!part && engine == "alone" && fabric && s.fidelity == "packet")
    {
        SortRecords(dir); // in the one order a partitioned run's merge gives
    }
    for (const auto& node : nodes)
    {
        node->WriteRecords(dir);
        node->AddTotals(totals.own);
    }
    json summary = RunSummaryJson(Sec(simTime), flows, totals);
    if (!faults.Empty())
    {
        faults.Write(dir);
        summary["faults"] = faults.Summary();
    }
    for (const auto& node : nodes)
    {
        node->AddSummary(summary);
    }
    if (collectives)
    {
        const auto results = collectives->Results();
        summary["fidelity"] = s.fidelity;
        summary["collectives"] = CollectivesJson(results);
        uint64_t delivered = 0;
        for (const auto& r : results)
        {
            delivered += r.delivered;
        }
        summary["totals"]["bytes_delivered"] =
            summary["totals"]["bytes_delivered"].get<uint64_t>() + delivered;
        WriteCollectivesCsv(dir / "collectives.csv", results);
        if (const auto steps = collectives->TrainingSteps(); !steps.empty())
        {
            summary["training"] = TrainingJson(steps);
            WriteTrainingCsv(dir / "training.csv", steps);
        }
        if (s.fidelity == "packet")
        {
            collectives->WriteSteps(dir);
        }
        collectives.reset();
    }

    nodes.clear();
    fabric.reset();
    Simulator::Destroy();
    return summary;
}

/// Real against model: each launch of fabemu-allreduce that succeeded, beside the
/// same collective simulated on the same fabric (launch-prediction.h), each group of
/// launches that ran together in prediction-K/ (K: the launch it is for). A
/// prediction that cannot be built or run says why in its rows; the real run's
/// results stand either way.
json
PredictLaunches(const Scenario& s, const json& commands, const std::vector<CommandOutcome>& ran,
                const fs::path& dir, std::ostream& err)
{
    std::vector<std::string> outputs; // whole, where the summary keeps only their tails
    for (const auto& c : ran)
    {
        outputs.push_back(c.out);
    }
    const auto plans = PlanLaunchPredictions(s, commands, outputs);
    std::map<std::string, json> simulated; // by job: wK
    for (const auto& group : PredictionGroups(s, plans))
    {
        const fs::path sub = dir / fmt::format("prediction-{}", group.back().workload);
        try
        {
            fs::create_directories(sub);
            std::ostringstream quiet;
            const json sim =
                Simulate(PredictionScenario(s, group), sub, ProgressMode::Quiet, quiet);
            for (const auto& c : sim.value("collectives", json::array()))
            {
                simulated.emplace(c["job"].get<std::string>(), c); // its first group's figure
            }
            std::ofstream(sub / "summary.json") << sim.dump(2) << "\n";
        }
        catch (const std::exception& e)
        {
            Simulator::Destroy();
            err << fmt::format("{}: no prediction for workload {}: {}\n", s.name,
                               group.back().workload, e.what());
        }
    }
    json rows = json::array();
    for (const auto& p : plans)
    {
        const auto it = simulated.find("w" + std::to_string(p.workload));
        rows.push_back(PredictionJson(p, it == simulated.end() ? json() : it->second));
    }
    return rows;
}

/// summary.json's collectives as the runner had them.
std::vector<CollectiveResult>
CollectiveResultsOf(const json& summary)
{
    std::vector<CollectiveResult> results;
    for (const auto& c : summary.value("collectives", json::array()))
    {
        CollectiveResult r;
        r.job = c["job"];
        r.iteration = c["iteration"];
        r.op = c["op"];
        r.algorithm = c["algorithm"];
        r.autoPicked = c["auto"];
        r.ranks = c["ranks"].get<std::vector<std::string>>();
        r.bytes = c["bytes"];
        r.state = c["state"];
        r.analyticalS = c["analytical_time_s"];
        if (r.state == "completed")
        {
            r.timeS = c["time_s"];
            r.algBwGbs = c["algbw_gbs"];
            r.busBwGbs = c["busbw_gbs"];
        }
        results.push_back(std::move(r));
    }
    return results;
}

/// The run's totals, flows and expectations on the terminal.
void
PrintRunSummary(const Scenario& s, const json& summary, const fs::path& target, std::ostream& out)
{
    const auto& t = summary["totals"];
    std::vector<std::string> lines;
    if (s.fidelity == "analytical")
    {
        out << "analytical: every collective timed by its alpha-beta cost on this topology; "
               "nothing simulated\n";
    }
    else if (HasNetwork(s))
    {
        lines.push_back(fmt::format("drops {}", t["drops"].get<uint64_t>()));
        lines.push_back(FabricRegistry::Create(s.fabric.type)->TotalsLine(t));
    }
    for (const auto& node : NodeFabricsOf(s))
    {
        lines.push_back(node->TotalsLine(t));
    }
    if (s.fidelity == "packet")
    {
        out << fmt::format("simulated {:.3f} ms in {:.1f} s: {}, bytes delivered {}\n",
                           summary["sim_time_s"].get<double>() * 1e3,
                           summary["wall_time_s"].get<double>(), fmt::join(lines, ", "),
                           t["bytes_delivered"].get<uint64_t>());
    }
    if (summary.contains("deadlock") && summary["deadlock"].contains("stopped_at_s"))
    {
        const auto& d = summary["deadlock"];
        out << fmt::format("deadlock ({}) from {:.3f} ms; the run stopped at {:.3f} ms: {}\n",
                           d["kind"].get<std::string>(), d["detected_at_s"].get<double>() * 1e3,
                           d["stopped_at_s"].get<double>() * 1e3, d["cycle"].dump());
    }
    const auto& f = summary["flow_stats"];
    if (f["count"].get<size_t>() > 0)
    {
        out << fmt::format("flows: {} completed, {} failed, {} pending\n",
                           f["completed"].get<size_t>(), f["failed"].get<size_t>(),
                           f["pending"].get<size_t>());
    }
    if (summary.contains("collectives"))
    {
        out << fmt::format("collectives ({}; * picked by auto):\n", s.fidelity)
            << CollectivesTable(CollectiveResultsOf(summary));
    }
    if (summary.contains("training"))
    {
        out << TrainingTable(summary["training"]);
    }
    if (summary.contains("memory"))
    {
        out << "memory (latency against achieved bandwidth):\n" << MemoryTable(summary["memory"]);
    }
    for (const auto& e : summary["expect"])
    {
        out << fmt::format("expect {} {}: {} {}\n", e["metric"].get<std::string>(),
                           e["want"].get<std::string>(), e["value"].dump(),
                           e["ok"].get<bool>() ? "ok" : "NOT MET");
    }
    out << "results: " << target.string() << "/ (report.md, summary.json, plots/)\n";
}

/// Failed flows fail the run (1) unless its expect block has a word on flow_stats.failed;
/// then, as pending flows always, the expectations decide (0 met, 3 missed).
int
FlowsExitCode(const Scenario& s, const json& summary, bool met)
{
    const bool failuresExpected = std::any_of(s.expect.begin(), s.expect.end(), [](const auto& e) {
        return e.metric == "flow_stats.failed";
    });
    if (summary["flow_stats"]["failed"].get<size_t>() > 0 && !failuresExpected)
    {
        return kExitFailure;
    }
    for (const auto& c : summary.value("collectives", json::array()))
    {
        if (c["state"] == "failed")
        {
            return kExitFailure; // never reported as done
        }
    }
    return met ? kExitOk : kExitExpectation;
}

/// "a RoCEv2 fabric", "a RoCEv2 fabric with PCIe in every server", "PCIe inside one server",
/// "NVLink and PCIe inside one server", "CXL inside one server".
std::string
RunPhrase(const Scenario& s)
{
    std::vector<std::string> inside;
    for (const auto& [has, name] :
         {std::pair{s.topology.node.hasNvlink, "NVLink"},
          std::pair{s.topology.node.hasPcie, "PCIe"}, std::pair{s.topology.node.hasCxl, "CXL"}})
    {
        if (has)
        {
            inside.push_back(name);
        }
    }
    const std::string parts = fmt::format("{}", fmt::join(inside, " and "));
    if (!HasNetwork(s))
    {
        return parts + " inside one server";
    }
    return FabricPhrase(s.fabric.type) +
           (inside.empty() ? "" : " with " + parts + " in every server");
}

/// Removes the temporary folders of this host's runs that were killed (their process is
/// gone). Another host's (a shared folder, sweep tasks on several nodes) are left alone.
void
SweepStaleRuns(const fs::path& parent)
{
    static const std::regex re(R"(^\..+\.tmp-(.+)-([0-9]+)$)");
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(parent, ec))
    {
        std::smatch m;
        const std::string name = entry.path().filename().string();
        if (entry.is_directory() && std::regex_match(name, m, re) && m[1] == ThisHost())
        {
            const pid_t pid = static_cast<pid_t>(std::stol(m[2]));
            if (kill(pid, 0) != 0 && errno == ESRCH)
            {
                fs::remove_all(entry.path(), ec);
            }
        }
    }
}

} // namespace

int
ValidateScenarioFile(const std::string& file, const std::vector<std::string>& set,
                     std::ostream& out, std::ostream& err)
{
    try
    {
        const Scenario s = LoadScenario(file, set);
        PreflightScenario(s); // every check run makes before it simulates
        out << fmt::format("{}: ok: '{}', {}, {} builder with {} host(s), {} VM endpoint(s), "
                           "{} workload(s), {} expectation(s)\n",
                           file, s.name, RunPhrase(s), s.topology.builder, s.topology.HostCount(),
                           s.endpoints.size(), s.workloads.size(), s.expect.size());
        return kExitOk;
    }
    catch (const ScenarioError& e)
    {
        err << e.what() << "\n";
        return kExitBadInput;
    }
}

int
PrintNodeTopology(const std::string& file, const std::vector<std::string>& set, std::ostream& out,
                  std::ostream& err)
{
    try
    {
        const Scenario s = LoadScenario(file, set);
        if (!s.topology.node.hasPcie && !s.topology.node.hasNvlink && !s.topology.node.hasCxl)
        {
            err << fmt::format("{}: topology.node is not given: its servers are plain hosts, one "
                               "NIC each\n",
                               file);
            return kExitBadInput;
        }
        out << fmt::format("{}: every server's inside ({})\n\n", file,
                           s.topology.node.preset.empty() ? "as the file describes it"
                                                          : s.topology.node.preset);
        out << NodeTopologyMatrix(s.topology.node);
        return kExitOk;
    }
    catch (const ScenarioError& e)
    {
        err << e.what() << "\n";
        return kExitBadInput;
    }
}

int
ReportResults(const std::string& dir, std::ostream& out, std::ostream& err)
{
    if (!fs::exists(fs::path(dir) / "summary.json"))
    {
        err << "fabemu report: " << dir << " is not a results folder (no summary.json)\n";
        return kExitBadInput;
    }
    const auto plots = RenderReport(dir, err);
    out << fmt::format("{}/report.md rewritten with {} plot(s)\n", dir, plots.size());
    return kExitOk;
}

namespace
{

/// Where a run writes its results: --out, else results/<name>.
fs::path
ResultsTarget(const Scenario& s, const RunOptions& opt)
{
    return opt.out.empty() ? fs::path("results") / s.name : ResultsPath(opt.out);
}

/// What stops a partitioned run before MPI starts, on `--ranks` and on every rank alike
/// ("" when nothing): a build without the mpi module, an unknown engine, a results
/// folder it may not replace.
std::string
RanksProblem(const Scenario& s, const RunOptions& opt)
{
    if (!HavePartitionedRuns())
    {
        return "this build has no ns-3 mpi module (scripts/install-deps installs Open MPI and "
               "ns-3's mpi source; then rebuild)";
    }
    if (opt.engine != "gtw" && opt.engine != "null")
    {
        return "--engine must be gtw (granted time window) or null (null messages), not '" +
               opt.engine + "'";
    }
    return ResultsTargetProblem(ResultsTarget(s, opt), opt.force);
}

/// A folder removed with everything in it when this goes out of scope.
struct RemovedOnExit
{
    fs::path p;
    ~RemovedOnExit()
    {
        std::error_code e;
        fs::remove_all(p, e);
    }
};

/// A rank other than 0 of a partitioned run: its share of the simulation, written into a
/// folder of its own and handed to rank 0 (which prints what goes wrong: every rank reads
/// the same file).
int
RunRankShare(const Scenario& s, const RunOptions& opt, std::ostream& err)
{
    const char* tmpdir = std::getenv("TMPDIR");
    std::string name = std::string(tmpdir && *tmpdir ? tmpdir : "/tmp") + "/fabemu-rank-XXXXXX";
    if (!mkdtemp(name.data()))
    {
        err << fmt::format("fabemu run: rank {}: cannot make a folder {}: {}\n", RankFromLauncher(),
                           name, strerror(errno));
        return kExitFailure;
    }
    const RemovedOnExit cleanup{name};
    std::ostringstream quiet;
    try
    {
        Simulate(s, name, ProgressMode::Quiet, quiet, opt.engine);
    }
    catch (const ScenarioError&)
    {
        return kExitBadInput;
    }
    catch (const std::invalid_argument&)
    {
        return kExitBadInput;
    }
    return kExitOk;
}

/// `fabemu run FILE --ranks N`: checks that the scenario splits into N, then runs
/// `mpirun -np N` of this same command; its exit code.
int
LaunchRanks(const Scenario& s, const RunOptions& opt, std::ostream& out, std::ostream& err)
{
    const std::string what = fmt::format("fabemu run: --ranks {}", opt.ranks);
    if (const std::string why = RanksProblem(s, opt); !why.empty())
    {
        err << what << ": " << why << "\n";
        return kExitBadInput;
    }
    if (opt.file.empty())
    {
        err << what << ": a scenario loaded without its file cannot be launched on ranks\n";
        return kExitBadInput;
    }
    if (std::system("command -v mpirun >/dev/null 2>&1") != 0)
    {
        err << what
            << ": no mpirun here (Debian's openmpi-bin; scripts/install-deps installs it)\n";
        return kExitBadInput;
    }
    try
    {
        PreflightScenario(s);
        if (const std::string why = PartitionProblem(s); !why.empty())
        {
            throw ScenarioError(s.file, {}, "cannot split this run among ranks: " + why);
        }
        const PartitionPlan plan = PlanPartition(s, opt.ranks);
        if (opt.progress != ProgressMode::Quiet)
        {
            out << fmt::format("{}: {} ranks ({} engine), {} links between them, lookahead {} ns\n",
                               s.name, opt.ranks, opt.engine, plan.crossingLinks,
                               plan.lookahead.GetNanoSeconds())
                << std::flush;
        }
    }
    catch (const ScenarioError& e)
    {
        err << e.what() << "\n";
        return kExitBadInput;
    }
    std::vector<std::string> args{"mpirun"};
    if (geteuid() == 0)
    {
        args.push_back("--allow-run-as-root");
    }
    // Shared memory between the ranks of this machine, without kernel help (containers).
    for (const char* a : {"--oversubscribe", "--mca", "btl", "self,vader", "--mca",
                          "btl_vader_single_copy_mechanism", "none"})
    {
        args.push_back(a);
    }
    // mpirun (its session folder) and the ranks other than 0 work in a folder of this
    // launch, removed when mpirun is done, so that a rank MPI killed (a fatal MPI error
    // ends every rank at once) leaves nothing behind.
    const char* tmpdir = std::getenv("TMPDIR");
    std::string ranksDir =
        std::string(tmpdir && *tmpdir ? tmpdir : "/tmp") + "/fabemu-ranks-XXXXXX";
    if (!mkdtemp(ranksDir.data()))
    {
        err << fmt::format("{}: cannot make a folder {}: {}\n", what, ranksDir, strerror(errno));
        return kExitFailure;
    }
    const RemovedOnExit cleanup{ranksDir};
    args.insert(args.end(), {"-x", "TMPDIR"});
    args.insert(args.end(),
                {"-np", std::to_string(opt.ranks), fs::read_symlink("/proc/self/exe").string(),
                 "run", opt.file, "--engine", opt.engine});
    if (!opt.out.empty())
    {
        args.insert(args.end(), {"--out", opt.out});
    }
    if (opt.force)
    {
        args.push_back("--force");
    }
    for (const auto& kv : opt.set)
    {
        args.insert(args.end(), {"--set", kv});
    }
    if (opt.seed)
    {
        args.insert(args.end(), {"--seed", std::to_string(*opt.seed)});
    }
    if (opt.progress == ProgressMode::Quiet)
    {
        args.push_back("--quiet");
    }
    out << std::flush;
    std::vector<char*> argv;
    for (auto& a : args)
    {
        argv.push_back(a.data());
    }
    argv.push_back(nullptr);
    const pid_t pid = fork();
    if (pid == 0)
    {
        setenv("TMPDIR", ranksDir.c_str(), 1);
        execvp("mpirun", argv.data());
        _exit(127);
    }
    int status = 0;
    while (pid > 0 && waitpid(pid, &status, 0) < 0 && errno == EINTR)
    {
    }
    if (pid < 0 || !WIFEXITED(status))
    {
        err << what << ": mpirun did not finish (" << (pid < 0 ? "fork failed" : "killed") << ")\n";
        return kExitFailure;
    }
    return WEXITSTATUS(status);
}

/// Before a run: the preflight, and for a partitioned one the launch (--ranks) or, on a
/// rank other than 0, its share of the run. An exit code when that is all; none when
/// this process goes on to write the results.
std::optional<int>
PreflightAndRanks(const Scenario& s, const RunOptions& opt, std::ostream& out, std::ostream& err)
{
    // A partitioned run: launched here (--ranks), or this is one of its ranks.
    const uint32_t launched = RanksFromLauncher();
    if (opt.ranks > 1 && launched == 1)
    {
        return LaunchRanks(s, opt, out, err);
    }
    const bool first = RankFromLauncher() == 0; // the rank that says what is wrong
    if (launched > 1)
    {
        // Every rank finds the same, so all stop before MPI starts.
        const std::string why =
            opt.ranks != 0 && opt.ranks != launched
                ? fmt::format("--ranks {} under an MPI launch of {} ranks", opt.ranks, launched)
                : RanksProblem(s, opt);
        if (!why.empty())
        {
            if (first)
            {
                err << "fabemu run: " << why << "\n";
            }
            return kExitBadInput;
        }
    }
    try
    {
        PreflightScenario(s);
        if (const std::string why = launched > 1 ? PartitionProblem(s) : ""; !why.empty())
        {
            throw ScenarioError(s.file, {}, "cannot split this run among ranks: " + why);
        }
        if (launched > 1)
        {
            PlanPartition(s, launched);
        }
    }
    catch (const ScenarioError& e)
    {
        if (first)
        {
            err << e.what() << "\n";
        }
        return kExitBadInput;
    }
    if (launched > 1 && !first)
    {
        return RunRankShare(s, opt, err);
    }
    return std::nullopt;
}

} // namespace

int
RunScenarioFile(const RunOptions& opt, std::ostream& out, std::ostream& err)
{
    Scenario s;
    try
    {
        std::vector<std::string> set = opt.set;
        if (opt.seed)
        {
            set.push_back("seed=" + std::to_string(*opt.seed));
        }
        s = LoadScenario(opt.file, set);
    }
    catch (const ScenarioError& e)
    {
        err << e.what() << "\n";
        return kExitBadInput;
    }
    return RunScenario(s, opt, out, err);
}

int
RunScenario(const Scenario& s, const RunOptions& opt, std::ostream& out, std::ostream& err)
{
    if (const auto done = PreflightAndRanks(s, opt, out, err))
    {
        return *done;
    }
    const uint32_t launched = RanksFromLauncher();

    // Written into a temporary folder beside the target, marked, renamed when complete.
    const fs::path target = ResultsTarget(s, opt);
    if (const std::string why = ResultsTargetProblem(target, opt.force); !why.empty())
    {
        err << "fabemu run: " << why << "\n";
        return kExitBadInput;
    }
    const fs::path parent = target.parent_path().empty() ? fs::path(".") : target.parent_path();
    const fs::path tmp = parent / TemporaryResultsName(target.filename().string(), getpid());
    std::error_code ec;
    SweepStaleRuns(parent);
    fs::create_directories(tmp, ec);
    if (ec)
    {
        err << "fabemu run: cannot create " << tmp.string() << ": " << ec.message() << "\n";
        return kExitFailure;
    }
    const RemovedOnExit cleanup{tmp};
    MarkResults(tmp);
    std::ofstream(tmp / "scenario.resolved.yaml") << ResolvedYaml(s);

    const auto wall0 = std::chrono::steady_clock::now();
    json summary;
    int exitCode = kExitOk;
    if (opt.progress != ProgressMode::Quiet)
    {
        out << fmt::format("{}: {} on {} ({} builder, {} host(s){})\n", s.name,
                           s.description.empty() ? "running" : s.description, RunPhrase(s),
                           s.topology.builder, s.topology.HostCount(),
                           s.HasVms() ? fmt::format(", {} real endpoints", s.endpoints.size()) : "")
            << std::flush;
    }
    const std::string pcapNote = FabricRegistry::Create(s.fabric.type)->PcapNote(s);
    if (!pcapNote.empty() && opt.progress != ProgressMode::Quiet)
    {
        out << pcapNote << "\n";
    }
    if (s.HasVms())
    {
        EmulateSetup setup;
        setup.cache = opt.cache;
        setup.resultsDir = tmp.string();
        setup.printOutputs = false; // they are in commands/ and summary.json
        const EmulateResult r =
            EmulateScenario(s, setup, opt.progress == ProgressMode::Quiet ? err : out, err);
        if (r.interruptedBy || (r.commands.empty() && r.exitCode != kExitOk))
        {
            return r.exitCode == kExitOk ? kExitFailure : r.exitCode; // nothing worth keeping
        }
        summary = EmulationSummaryJson(r);
        exitCode = r.exitCode;
        if (const json rows = PredictLaunches(s, summary["commands"], r.commands, tmp, err);
            !rows.empty())
        {
            summary["launch_predictions"] = rows;
        }
        fs::create_directories(tmp / "commands");
        for (size_t i = 0; i < r.commands.size(); ++i)
        {
            std::ofstream(tmp / "commands" / fmt::format("{:02}-{}.txt", i, r.commands[i].on))
                << "$ " << r.commands[i].cmd << "\n"
                << r.commands[i].out << "\n[exit " << r.commands[i].exitCode << "]\n";
        }
    }
    else
    {
        try
        {
            summary = Simulate(s, tmp, opt.progress, out,
                               launched > 1     ? opt.engine
                               : opt.ranks == 1 ? "alone"
                                                : std::string());
            if (launched > 1)
            {
                summary["partition"] = {{"ranks", launched}, {"engine", opt.engine}};
            }
        }
        catch (const ScenarioError& e)
        {
            err << e.what() << "\n";
            return kExitBadInput;
        }
        catch (const std::invalid_argument& e)
        {
            Simulator::Destroy();
            err << s.file << ": the fabric cannot be built as configured: " << e.what() << "\n";
            return kExitBadInput;
        }
    }
    summary["scenario"] = s.name;
    summary["description"] = s.description;
    // The node builder: no network, one server's inside (its PCIe tree, or only NVLink/CXL).
    summary["fabric"] = HasNetwork(s) ? s.fabric.type : s.topology.node.hasPcie ? "pcie" : "node";
    summary["seed"] = s.seed;
    if (!pcapNote.empty())
    {
        summary["pcap_note"] = pcapNote;
    }
    summary["wall_time_s"] =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
    bool met = true;
    summary["expect"] = CheckExpectations(s.expect, summary, met);
    std::ofstream(tmp / "summary.json") << summary.dump(2) << "\n";
    RenderReport(tmp, err);

    PublishResults(tmp, target, ec);
    if (ec)
    {
        err << "fabemu run: cannot move results to " << target.string() << ": " << ec.message()
            << "\n";
        return kExitFailure;
    }
    if (opt.progress != ProgressMode::Quiet)
    {
        PrintRunSummary(s, summary, target, out);
    }
    // Said even with --quiet: a packet run far from its own alpha-beta time had something
    // the model does not see (congestion, other jobs), and flows that did not all complete
    // are not a clean result.
    if (s.fidelity == "packet")
    {
        for (const auto& line : CollectiveDisagreements(CollectiveResultsOf(summary)))
        {
            err << line << "\n";
        }
    }
    if (const std::string verdict = FlowsVerdict(summary); !verdict.empty())
    {
        err << fmt::format("{}: {} (duration {})\n", s.name, verdict, s.duration);
    }
    if (exitCode != kExitOk)
    {
        return exitCode;
    }
    return FlowsExitCode(s, summary, met);
}

} // namespace fabemu
