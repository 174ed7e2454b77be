#include "run.h"

#include "emulate.h"
#include "exit-codes.h"
#include "results-folder.h"
#include "results.h"
#include "scenario-fabric.h"
#include "scenario.h"
#include "time-resolution.h"

#include "ib-fabric-helper.h"
#include "ib-recorders.h"
#include "iwarp-fabric-helper.h"
#include "iwarp-recorders.h"
#include "roce-fabric-helper.h"
#include "roce-recorders.h"

#include "ns3/config.h"
#include "ns3/global-value.h"
#include "ns3/simulator.h"
#include "ns3/string.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <csignal>
#include <cerrno>
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
class SimProgress
{
  public:
    SimProgress(ProgressMode mode, std::ostream& out, Time horizon)
        : m_mode(mode),
          m_out(out),
          m_horizon(horizon),
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
        const double frac = std::min(1.0, Simulator::Now().GetSeconds() / m_horizon.GetSeconds());
        const uint64_t events = Simulator::GetEventCount();
        const double rate = wall > 0 ? events / wall : 0;
        const double eta = frac > 0 ? wall * (1 - frac) / frac : 0;
        const std::string stats =
            fmt::format("sim {:.3f}/{:.3f} ms  wall {:.1f} s  ETA <= {:.0f} s  {:.2f} M events/s",
                        Simulator::Now().GetSeconds() * 1e3, m_horizon.GetSeconds() * 1e3, wall,
                        eta, rate / 1e6);
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
    Time m_step;
    std::chrono::steady_clock::time_point m_wall0;
    std::chrono::steady_clock::time_point m_last;
    bool m_drawn{false};
};

/// Throughput of each running flow, every interval: "time_ns flow gbps". A flow's last
/// row is the interval it ended in (completed or failed); a flow has no rows before it starts.
class ThroughputSampler
{
  public:
    ThroughputSampler(const FlowRunner& runner, std::ostream& out, Time interval)
        : m_runner(runner),
          m_out(out),
          m_interval(interval),
          m_last(runner.Flows().size(), 0),
          m_ended(runner.Flows().size(), false),
          m_done(runner.Flows().size(), false)
    {
        Simulator::Schedule(m_interval, &ThroughputSampler::Sample, this);
    }

  private:
    void Sample()
    {
        for (; m_recordsSeen < m_runner.Records().size(); ++m_recordsSeen)
        {
            m_ended[m_runner.Records()[m_recordsSeen].id] = true;
        }
        const auto& flows = m_runner.Flows();
        for (uint32_t id = 0; id < flows.size(); ++id)
        {
            if (flows[id].start > Simulator::Now() || m_done[id])
            {
                continue; // not started, or ended and reported
            }
            // In-order bytes only grow; a smaller count would wrap into a spike.
            const uint64_t got = std::max(m_runner.Delivered(id), m_last[id]);
            const double gbps = (got - m_last[id]) * 8.0 / m_interval.GetSeconds() / 1e9;
            m_out << Simulator::Now().GetNanoSeconds() << ' ' << id << ' '
                  << fmt::format("{:.6g}", gbps) << '\n';
            m_last[id] = got;
            m_done[id] = m_ended[id];
        }
        Simulator::Schedule(m_interval, &ThroughputSampler::Sample, this);
    }

    const FlowRunner& m_runner;
    std::ostream& m_out;
    Time m_interval;
    std::vector<uint64_t> m_last;
    std::vector<bool> m_ended; ///< completed or failed
    std::vector<bool> m_done;  ///< ended, and its last interval reported
    size_t m_recordsSeen{0};
};

/// One flow of summary.json: FCT, throughput and slowdown for a completed flow only.
json
FlowJson(const FlowRecord& r)
{
    json f = {{"id", r.id},
              {"src", "h" + std::to_string(r.spec.src)},
              {"dst", "h" + std::to_string(r.spec.dst)},
              {"op", RdmaOpName(r.spec.op)},
              {"bytes", r.spec.bytes},
              {"start_s", r.spec.start.GetSeconds()},
              {"state", FlowStateName(r.state)},
              {"delivered_bytes", r.delivered},
              {"ideal_fct_s", r.idealFct.GetSeconds()},
              {"ok", r.Completed()}};
    if (r.state == FlowState::Failed)
    {
        f["reason"] = r.reason;
    }
    if (r.Completed())
    {
        const double fct = r.fct.GetSeconds();
        f["fct_s"] = fct;
        f["throughput_gbps"] = fct > 0 ? r.spec.bytes * 8.0 / fct / 1e9 : 0;
        f["slowdown"] = r.idealFct.IsStrictlyPositive() ? fct / r.idealFct.GetSeconds() : 0;
    }
    return f;
}

/// summary.json's flows (every flow, by id) and flow_stats; \p delivered counts the bytes
/// delivered in order: all of a completed flow's, what a failed or pending one got through.
json
FlowsJson(const std::vector<FlowRecord>& outcomes, json& stats, uint64_t& delivered)
{
    json flows = json::array();
    std::vector<double> slowdowns;
    std::vector<double> rates;
    size_t failed = 0;
    delivered = 0;
    std::vector<FlowRecord> sorted = outcomes;
    std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.id < b.id; });
    for (const auto& r : sorted)
    {
        flows.push_back(FlowJson(r));
        delivered += r.Completed() ? r.spec.bytes : r.delivered;
        failed += r.state == FlowState::Failed;
        if (r.Completed())
        {
            slowdowns.push_back(flows.back()["slowdown"].get<double>());
            rates.push_back(flows.back()["throughput_gbps"].get<double>());
        }
    }
    std::sort(slowdowns.begin(), slowdowns.end());
    auto pct = [&slowdowns](double q) {
        return slowdowns.empty() ? 0.0 : slowdowns[std::min(slowdowns.size() - 1, size_t(q * slowdowns.size()))];
    };
    double sum = 0;
    double sq = 0;
    for (double x : rates)
    {
        sum += x;
        sq += x * x;
    }
    stats["count"] = sorted.size();
    stats["completed"] = slowdowns.size();
    stats["failed"] = failed;
    stats["pending"] = sorted.size() - slowdowns.size() - failed;
    stats["jain_throughput"] = rates.empty() ? 0.0 : sum * sum / (rates.size() * sq);
    stats["min_throughput_gbps"] = rates.empty() ? 0.0 : *std::min_element(rates.begin(), rates.end());
    stats["max_throughput_gbps"] = rates.empty() ? 0.0 : *std::max_element(rates.begin(), rates.end());
    stats["fct_slowdown"] = {{"median", pct(0.5)}, {"p99", pct(0.99)},
                             {"max", slowdowns.empty() ? 0.0 : slowdowns.back()}};
    return flows;
}

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
        parts.push_back(fmt::format("{} flow{} failed: {}{}", failed, failed == 1 ? "" : "s",
                                    fmt::join(reasons, "; "),
                                    failed > named ? fmt::format(" and {} more", failed - named) : ""));
    }
    if (pending > 0)
    {
        parts.push_back(fmt::format("{} flow{} pending (not finished when the run ended)", pending,
                                    pending == 1 ? "" : "s"));
    }
    return fmt::format("{}", fmt::join(parts, "; "));
}

/// The flows of \p s on \p fabric until they are done or the duration ends: FCTs,
/// per-flow throughput and the flows part of the summary. Fabric recorders are the caller's.
void
RunFlows(RdmaFabric& fabric, const Scenario& s, const fs::path& dir, ProgressMode mode, std::ostream& out, json& summary)
{
    std::ostringstream tputRows;
    FlowRunner runner(fabric);
    runner.Add(BuildFlows(s));
    ThroughputSampler tput(runner, tputRows, PicoSeconds(s.record.rateIntervalPs));
    if (!runner.Flows().empty())
    {
        runner.SetAllDoneCallback(MakeCallback(static_cast<void (*)()>(&Simulator::Stop)));
    }
    runner.Start();
    const Time horizon = PicoSeconds(s.durationPs);
    SimProgress progress(mode, out, horizon);
    Simulator::Stop(horizon);
    Simulator::Run();
    progress.Finish();

    summary["sim_time_s"] = Simulator::Now().GetSeconds();
    std::ofstream fctTxt(dir / "fct.txt");
    runner.WriteFct(fctTxt); // completed flows only
    std::ostringstream fctRows;
    for (const auto& r : runner.Records())
    {
        if (!r.Completed())
        {
            continue; // a failed flow has no FCT
        }
        fctRows << fmt::format("{:08x} {:08x} {} {} {} {} {} {} {:.6g}\n",
                               fabric.GetHostIpv4(r.spec.src), fabric.GetHostIpv4(r.spec.dst),
                               r.srcPort, r.dstPort, r.spec.bytes, r.spec.start.GetNanoSeconds(),
                               r.fct.GetNanoSeconds(), r.idealFct.GetNanoSeconds(),
                               r.fct.GetSeconds() / r.idealFct.GetSeconds());
    }
    WriteCsv(dir / "fct.csv", "sip,dip,sport,dport,bytes,start_ns,fct_ns,ideal_fct_ns,slowdown",
             fctRows.str());
    WriteCsv(dir / "throughput.csv", "time_ns,flow,gbps", tputRows.str());
    uint64_t delivered = 0;
    json stats;
    summary["flows"] = FlowsJson(runner.Outcomes(), stats, delivered);
    summary["flow_stats"] = stats;
    summary["fct_slowdown"] = stats["fct_slowdown"];
    summary["totals"]["bytes_delivered"] = delivered;
}

/// A RoCEv2 simulation: PFC, queue, DCQCN-rate recorders and pcaps around RunFlows.
json
SimulateRoce(const Scenario& s, const fs::path& dir, ProgressMode mode, std::ostream& out)
{
    json summary;
    RoceFabricHelper fabric;
    fabric.Install(BuildTopology(s));
    std::ostringstream pfcRows;
    std::ostringstream queueRows;
    std::ostringstream rateRows;
    PfcLog pfcLog(fabric, pfcRows);
    QueueSampler queues(fabric, queueRows, PicoSeconds(s.record.queueIntervalPs));
    std::unique_ptr<RateLog> rateLog;
    if (s.fabric.cc == "dcqcn")
    {
        rateLog = std::make_unique<RateLog>(fabric, rateRows);
    }
    std::vector<Ptr<PcapWriter>> pcaps;
    for (uint32_t h : s.record.pcap)
    {
        pcaps.push_back(Create<PcapWriter>(fabric.GetNic(h)->GetDevice(),
                                           (dir / fmt::format("h{}.pcap", h)).string()));
    }
    RunFlows(fabric, s, dir, mode, out, summary);
    WriteCsv(dir / "pfc.csv", "time_ns,node,port,prio,event", pfcRows.str());
    WriteCsv(dir / "queue.csv", "time_ns,node,port,prio,bytes", queueRows.str());
    if (rateLog)
    {
        WriteCsv(dir / "rate.csv", "time_ns,host,qpn,rate_bps", rateRows.str());
    }
    summary["switch_drops"] = fabric.DropsByReason();
    summary["totals"].update({{"drops", fabric.TotalDrops()},
                              {"congestion_drops", fabric.CongestionDrops()},
                              {"pfc_pause_frames", fabric.TotalPfcFrames()},
                              {"ecn_marks", fabric.TotalEcnMarks()},
                              {"cnps", fabric.TotalCnps()},
                              {"credit_stalls", 0}});
    summary["peak_queue_bytes"] = queues.Peak();
    pcaps.clear();
    return summary;
}

/// An InfiniBand simulation: credit stalls (per port and VL) around RunFlows. Lossless by
/// construction: its only drops are packets with no route.
json
SimulateInfiniband(const Scenario& s, const fs::path& dir, ProgressMode mode, std::ostream& out)
{
    json summary;
    IbFabricHelper fabric;
    fabric.SetLmc(s.fabric.lmc);
    fabric.SetRouting(s.fabric.routing == "updown" ? IbFabricHelper::Routing::UpDown
                                                   : IbFabricHelper::Routing::MinHop);
    fabric.Install(BuildTopology(s));
    std::ostringstream stallRows;
    for (size_t i = 0; i < fabric.GetPorts().size(); ++i)
    {
        fabric.GetPorts()[i]->TraceConnectWithoutContext(
            "CreditStall",
            MakeCallback(+[](std::ostringstream* rows, size_t port, uint8_t vl, Time how) {
                rows->operator<<(Simulator::Now().GetNanoSeconds())
                    << ' ' << port << ' ' << +vl << ' ' << how.GetNanoSeconds() << '\n';
            }).Bind(&stallRows, i));
    }
    std::vector<Ptr<IbPcapWriter>> pcaps;
    for (uint32_t h : s.record.pcap)
    {
        pcaps.push_back(Create<IbPcapWriter>(fabric.GetHca(h)->GetPort(),
                                             (dir / fmt::format("h{}.pcap", h)).string()));
    }
    std::ostringstream queueRows;
    IbQueueSampler queues(fabric, queueRows, PicoSeconds(s.record.queueIntervalPs));
    RunFlows(fabric, s, dir, mode, out, summary);
    pcaps.clear();
    WriteCsv(dir / "credit-stalls.csv", "time_ns,port,vl,stall_ns", stallRows.str());
    WriteCsv(dir / "queue.csv", "time_ns,node,port,prio,bytes", queueRows.str());
    uint64_t peak = 0;
    for (const auto& p : fabric.GetPorts())
    {
        for (uint8_t vl = 0; vl < p->GetNumDataVls(); ++vl)
        {
            peak = std::max<uint64_t>(peak, uint64_t(p->GetPeakBlocks(vl)) * kIbCreditBytes);
        }
    }
    summary["switch_drops"] = json::object();
    if (fabric.TotalNoRouteDrops() > 0)
    {
        summary["switch_drops"]["no_route"] = fabric.TotalNoRouteDrops();
    }
    summary["totals"].update({{"drops", fabric.TotalNoRouteDrops()},
                              {"congestion_drops", 0},
                              {"pfc_pause_frames", 0},
                              {"ecn_marks", fabric.TotalFecnMarks()}, // FECN: IB's ECN
                              {"cnps", fabric.TotalBecns()},          // BECNs returned
                              {"credit_stalls", fabric.TotalCreditStalls()},
                              {"buffer_overflows", fabric.TotalOverflows()},
                              {"fcps", fabric.TotalFcps()}});
    summary["peak_queue_bytes"] = peak; // most of one VL's input buffer ever in use
    return summary;
}

/// The IP MTU an iWARP fabric runs at for a scenario's RDMA path MTU: what a RoCE fabric
/// with that path MTU would need on its Ethernet links (standard frames up to 1024, then jumbo).
uint32_t
IwarpIpMtu(uint32_t pathMtu)
{
    return pathMtu <= 1024 ? 1500 : pathMtu == 2048 ? 4200 : 9000;
}

/// An iWARP simulation: TCP under every connection, drop-tail or RED/ECN switch queues.
json
SimulateIwarp(const Scenario& s, const fs::path& dir, ProgressMode mode, std::ostream& out)
{
    json summary;
    const TopologySpec spec = BuildTopology(s);
    // The shared buffer split evenly among each switch's ports: the busiest switch sets it.
    std::vector<uint32_t> ports(spec.Nodes().size(), 0);
    for (const auto& l : spec.Links())
    {
        ++ports[l.a];
        ++ports[l.b];
    }
    uint32_t radix = 1;
    for (uint32_t n = 0; n < spec.Nodes().size(); ++n)
    {
        if (spec.Nodes()[n].isSwitch)
        {
            radix = std::max(radix, ports[n]);
        }
    }
    IwarpFabricOptions o;
    o.congestionControl = s.fabric.cc == "dctcp" ? "ns3::TcpDctcp" : s.fabric.cc == "cubic" ? "ns3::TcpCubic"
                                                                                             : "ns3::TcpNewReno";
    o.red = s.fabric.ecn;
    o.markBytes = s.fabric.kmin;
    o.queueBytes = s.fabric.bufferBytes / radix;
    o.mtu = IwarpIpMtu(s.fabric.mtu);
    IwarpFabricHelper fabric;
    fabric.Install(spec, o);
    for (uint32_t h : s.record.pcap)
    {
        fabric.EnablePcap((dir / fmt::format("h{}.pcap", h)).string(), h);
    }
    std::ostringstream queueRows;
    IwarpQueueSampler queues(fabric, queueRows, PicoSeconds(s.record.queueIntervalPs));
    RunFlows(fabric, s, dir, mode, out, summary);
    WriteCsv(dir / "queue.csv", "time_ns,node,port,prio,bytes", queueRows.str());
    summary["switch_drops"] = json::object();
    if (fabric.SwitchDrops() > 0)
    {
        summary["switch_drops"]["queue_full"] = fabric.SwitchDrops();
    }
    summary["totals"].update({{"drops", fabric.SwitchDrops()},
                              {"congestion_drops", fabric.SwitchDrops()},
                              {"pfc_pause_frames", 0},
                              {"ecn_marks", fabric.SwitchEcnMarks()},
                              {"cnps", 0},
                              {"credit_stalls", 0},
                              {"tcp_retransmissions", fabric.TotalTcpRetransmissions()},
                              {"ecn_echoes", fabric.TotalEcnEchoes()},
                              {"terminates", fabric.TotalTerminates()}});
    summary["peak_queue_bytes"] = fabric.PeakSwitchQueueBytes();
    return summary;
}

/// A simulation-only scenario: everything written into \p dir; the summary's run part returned.
json
Simulate(const Scenario& s, const fs::path& dir, ProgressMode mode, std::ostream& out)
{
    Simulator::Destroy();
    Config::Reset();
    UsePicoseconds();
    ApplyFabricDefaults(s);
    json summary = s.fabric.type == "infiniband" ? SimulateInfiniband(s, dir, mode, out)
                   : s.fabric.type == "iwarp"    ? SimulateIwarp(s, dir, mode, out)
                                                 : SimulateRoce(s, dir, mode, out);
    Simulator::Destroy();
    return summary;
}

json
EmulationJson(const EmulateResult& r)
{
    json summary;
    summary["sim_time_s"] = r.simTimeS;
    uint64_t delivered = 0;
    json stats;
    summary["flows"] = FlowsJson(r.flows, stats, delivered);
    summary["flow_stats"] = stats;
    summary["fct_slowdown"] = stats["fct_slowdown"];
    summary["totals"] = {{"drops", r.fabricDrops},
                         {"congestion_drops", r.congestionDrops},
                         {"pfc_pause_frames", r.pfcFrames},
                         {"ecn_marks", r.ecnMarks},
                         {"cnps", r.cnps + r.edgeCnpsSent},
                         {"credit_stalls", r.creditStalls},
                         {"buffer_overflows", r.bufferOverflows},
                         {"bytes_delivered", r.bytesToEndpoints + delivered}};
    summary["edge"] = {{"frames_from_endpoints", r.framesFromEndpoints},
                       {"frames_to_endpoints", r.framesToEndpoints},
                       {"arp_replies", r.arpReplies},
                       {"neighbour_adverts", r.neighbourAdverts},
                       {"drops", r.edgeDrops},
                       {"dcqcn_cnps_sent", r.edgeCnpsSent},
                       {"dcqcn_cnps_acted_on", r.edgeCnpsConsumed},
                       {"dcqcn_frames_paced", r.framesPaced},
                       {"dcqcn_lowest_rate_bps", r.lowestRateBps},
                       {"frames_held", r.framesHeld},
                       {"peak_held_bytes", r.peakHeldBytes},
                       {"pauses_sent", r.edgePauses}};
    summary["switch_drops"] = r.switchDrops;
    summary["lag"] = {{"max_ms", r.lagMaxMs}, {"p99_ms", r.lagP99Ms}, {"reads_deferred", r.readsDeferred}};
    summary["timing_faithful"] = r.timingFaithful;
    summary["scheduling"] = r.scheduling; // what the simulation thread got
    summary["peak_queue_bytes"] = r.peakQueueBytes;
    json commands = json::array();
    for (const auto& c : r.commands)
    {
        commands.push_back({{"on", c.on},
                            {"run", c.cmd},
                            {"exit_code", c.exitCode},
                            {"stdout_tail", Tail(c.out, 12)},
                            {"metrics", PerftestMetrics(c.out)}});
    }
    summary["commands"] = commands;
    return summary;
}

/// The run's totals, flows and expectations on the terminal.
void
PrintRunSummary(const Scenario& s, const json& summary, const fs::path& target, std::ostream& out)
{
    const auto& t = summary["totals"];
    out << fmt::format("simulated {:.3f} ms in {:.1f} s: drops {}, {}, bytes delivered {}\n",
                       summary["sim_time_s"].get<double>() * 1e3, summary["wall_time_s"].get<double>(),
                       t["drops"].get<uint64_t>(),
                       s.fabric.type == "infiniband"
                           ? fmt::format("credit stalls {}", t["credit_stalls"].get<uint64_t>())
                           : fmt::format("PFC pause frames {}, ECN marks {}, CNPs {}",
                                         t["pfc_pause_frames"].get<uint64_t>(),
                                         t["ecn_marks"].get<uint64_t>(), t["cnps"].get<uint64_t>()),
                       t["bytes_delivered"].get<uint64_t>());
    const auto& f = summary["flow_stats"];
    if (f["count"].get<size_t>() > 0)
    {
        out << fmt::format("flows: {} completed, {} failed, {} pending\n", f["completed"].get<size_t>(),
                           f["failed"].get<size_t>(), f["pending"].get<size_t>());
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
    return met ? kExitOk : kExitExpectation;
}

/// Removes the temporary folders of runs that were killed (their process is gone).
void
SweepStaleRuns(const fs::path& parent)
{
    static const std::regex re(R"(^\..+\.tmp-([0-9]+)$)");
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(parent, ec))
    {
        std::smatch m;
        const std::string name = entry.path().filename().string();
        if (entry.is_directory() && std::regex_match(name, m, re))
        {
            const pid_t pid = static_cast<pid_t>(std::stol(m[1]));
            if (kill(pid, 0) != 0 && errno == ESRCH)
            {
                fs::remove_all(entry.path(), ec);
            }
        }
    }
}

} // namespace

int
ValidateScenarioFile(const std::string& file,
                     const std::vector<std::string>& set,
                     std::ostream& out,
                     std::ostream& err)
{
    try
    {
        const Scenario s = LoadScenario(file, set);
        PreflightScenario(s); // every check run makes before it simulates
        out << fmt::format("{}: ok: '{}', {} fabric, {} builder with {} hosts, {} VM endpoint(s), "
                           "{} workload(s), {} expectation(s)\n",
                           file, s.name, s.fabric.type, s.topology.builder, s.topology.HostCount(),
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
        PreflightScenario(s);
    }
    catch (const ScenarioError& e)
    {
        err << e.what() << "\n";
        return kExitBadInput;
    }

    // Written into a temporary folder beside the target, marked, renamed when complete.
    const fs::path target = opt.out.empty() ? fs::path("results") / s.name : ResultsPath(opt.out);
    if (const std::string why = ResultsTargetProblem(target, opt.force); !why.empty())
    {
        err << "fabemu run: " << why << "\n";
        return kExitBadInput;
    }
    const fs::path parent = target.parent_path().empty() ? fs::path(".") : target.parent_path();
    const fs::path tmp = parent / fmt::format(".{}.tmp-{}", target.filename().string(), getpid());
    std::error_code ec;
    SweepStaleRuns(parent);
    fs::create_directories(tmp, ec);
    if (ec)
    {
        err << "fabemu run: cannot create " << tmp.string() << ": " << ec.message() << "\n";
        return kExitFailure;
    }
    struct RemoveOnExit
    {
        fs::path p;
        ~RemoveOnExit()
        {
            std::error_code e;
            fs::remove_all(p, e);
        }
    } cleanup{tmp};
    MarkResults(tmp);
    std::ofstream(tmp / "scenario.resolved.yaml") << ResolvedYaml(s);

    const auto wall0 = std::chrono::steady_clock::now();
    json summary;
    int exitCode = kExitOk;
    if (opt.progress != ProgressMode::Quiet)
    {
        out << fmt::format("{}: {} on a {} fabric ({} builder, {} hosts{})\n", s.name,
                           s.description.empty() ? "running" : s.description, s.fabric.type,
                           s.topology.builder, s.topology.HostCount(),
                           s.HasVms() ? fmt::format(", {} real endpoints", s.endpoints.size()) : "")
            << std::flush;
    }
    if (s.HasVms())
    {
        EmulateSetup setup;
        setup.cache = opt.cache;
        setup.resultsDir = tmp.string();
        setup.printOutputs = false; // they are in commands/ and summary.json
        const EmulateResult r = EmulateScenario(s, setup, opt.progress == ProgressMode::Quiet ? err : out, err);
        if (r.interruptedBy || (r.commands.empty() && r.exitCode != kExitOk))
        {
            return r.exitCode == kExitOk ? kExitFailure : r.exitCode; // nothing worth keeping
        }
        summary = EmulationJson(r);
        exitCode = r.exitCode;
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
            summary = Simulate(s, tmp, opt.progress, out);
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
        summary["commands"] = json::array();
    }
    summary["scenario"] = s.name;
    summary["description"] = s.description;
    summary["fabric"] = s.fabric.type;
    summary["seed"] = s.seed;
    summary["wall_time_s"] =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
    bool met = true;
    summary["expect"] = CheckExpectations(s.expect, summary, met);
    std::ofstream(tmp / "summary.json") << summary.dump(2) << "\n";
    RenderReport(tmp, err);

    PublishResults(tmp, target, ec);
    if (ec)
    {
        err << "fabemu run: cannot move results to " << target.string() << ": " << ec.message() << "\n";
        return kExitFailure;
    }
    if (opt.progress != ProgressMode::Quiet)
    {
        PrintRunSummary(s, summary, target, out);
    }
    // Said even with --quiet: a run whose flows did not all complete is not a clean result.
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
