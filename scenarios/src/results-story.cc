// report.md's opening section, "What happened": a few lines in words from summary.json,
// before the tables. Each line says something only when the run gives it something to
// say; the numbers are the summary's own, rounded for people.
#include "scenarios/src/results-plots.h"
#include "scenarios/src/results.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <regex>
#include <set>
#include <vector>

namespace fabemu
{

using nlohmann::json;

namespace
{

/// \p x in the largest of \p units it reaches, three digits (999.7 K rounds to 1 M,
/// not "1e+03 K"); below them all, whole, with \p base.
std::string
Scaled(double x, const std::vector<std::pair<double, const char*>>& units, const char* base)
{
    for (const auto& [scale, unit] : units)
    {
        if (x >= scale * 0.9995)
        {
            return fmt::format("{:.3g} {}", x / scale, unit);
        }
    }
    return fmt::format("{:.0f} {}", x, base);
}

/// A byte count for people: "48.9 KB", "8 MB" (decimal units, as perftest's MB/s).
std::string
Bytes(double b)
{
    return Scaled(b, {{1e9, "GB"}, {1e6, "MB"}, {1e3, "KB"}}, "bytes");
}

/// A rate in bit/s for people: "4 Mb/s".
std::string
Rate(double bps)
{
    return Scaled(bps, {{1e9, "Gb/s"}, {1e6, "Mb/s"}, {1e3, "kb/s"}}, "b/s");
}

/// A time in seconds for people: "1.2 ms", "300 us".
std::string
Duration(double s)
{
    return Scaled(s * 1e9, {{1e9, "s"}, {1e6, "ms"}, {1e3, "us"}}, "ns");
}

/// "a", "a and b", "a, b and c".
std::string
Join(const std::vector<std::string>& parts)
{
    std::string s;
    for (size_t i = 0; i < parts.size(); ++i)
    {
        s += (i == 0 ? "" : i + 1 == parts.size() ? " and " : ", ") + parts[i];
    }
    return s;
}

/// Clauses that have their own "and"s: "a; b; c".
std::string
JoinClauses(const std::vector<std::string>& parts)
{
    std::string s;
    for (const auto& p : parts)
    {
        s += (s.empty() ? "" : "; ") + p;
    }
    return s;
}

/// The program a command line runs: its first word after any `export X=..;` prefix
/// and `VAR=value` assignments, without its directory.
std::string
Program(const std::string& run)
{
    static const std::regex kWord(R"(^\s*(?:export\s+[^;]*;\s*)*(?:\w+=\S*\s+)*([^\s;|&]+))");
    std::smatch m;
    if (!std::regex_search(run, m, kWord))
    {
        return run;
    }
    const std::string w = m[1].str();
    const auto slash = w.rfind('/');
    return slash == std::string::npos ? w : w.substr(slash + 1);
}

double
Num(const json& o, const char* key, double otherwise = 0)
{
    return o.contains(key) && o[key].is_number() ? o[key].get<double>() : otherwise;
}

/// The commands' line: how many ran where, and which failed.
std::string
CommandsLine(const json& commands)
{
    std::set<std::string> hosts;
    std::vector<std::string> failed;
    size_t notStarted = 0;
    for (const auto& c : commands)
    {
        hosts.insert(c.value("on", std::string("?")));
        if (!c.value("started", true))
        {
            ++notStarted; // its VM was gone, or on_failure: stop came first
        }
        else if (c.value("exit_code", -1) != 0)
        {
            failed.push_back(fmt::format("{} on {} (exit {})", Program(c.value("run", "")),
                                         c.value("on", std::string("?")),
                                         c.value("exit_code", -1)));
        }
    }
    const std::vector<std::string> on(hosts.begin(), hosts.end());
    std::string line = fmt::format("- **Real software:** {} command{} on {}", commands.size(),
                                   commands.size() == 1 ? "" : "s", Join(on));
    const std::string skipped = notStarted == 0 ? "" : fmt::format("; {} NOT STARTED", notStarted);
    if (failed.empty())
    {
        return line + (notStarted > 0         ? skipped + ".\n"
                       : commands.size() == 1 ? "; it exited 0.\n"
                                              : "; every one exited 0.\n");
    }
    const size_t nFailed = failed.size();
    if (failed.size() > 3)
    {
        const size_t more = failed.size() - 3;
        failed.resize(3);
        failed.push_back(fmt::format("{} more", more));
    }
    return line + fmt::format("; {} FAILED: {}{}.\n", nFailed, Join(failed), skipped);
}

/// The measurements' line: perftest's bandwidth and latency as the clients saw them
/// (a client's command line names its server's address), ucx_perftest's, and each
/// collective program's busBw and check over its ranks.
std::string
MeasuredLine(const json& commands)
{
    static const std::regex kAddress(R"(\b\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}\b)");
    bool anyClient = false;
    for (const auto& c : commands)
    {
        // A launch's MASTER_ADDR is no server address: its ranks are not clients.
        const std::string run = c.value("run", std::string());
        anyClient =
            anyClient || (run.rfind("export RANK=", 0) != 0 && std::regex_search(run, kAddress));
    }
    std::vector<std::string> parts;
    struct Collective
    {
        int ranks = 0;
        int wrong = 0;
        int unchecked = 0;
        double busbw = 0; // the slowest rank's
        double time = 0;
        double bytes = 0;
        std::string program;
        std::vector<std::string> hosts;
    };
    std::map<std::string, Collective> collectives;
    std::vector<std::string> order;
    for (const auto& c : commands)
    {
        const json& m =
            c.contains("metrics") && c["metrics"].is_object() ? c["metrics"] : json::object();
        const std::string run = c.value("run", std::string());
        const std::string program = Program(run);
        const std::string on = c.value("on", std::string("?"));
        if (m.contains("busbw_gbs"))
        {
            // One launch's ranks differ only in their rank numbers.
            static const std::regex kRank(R"(\b(LOCAL_)?RANK=\d+)");
            const std::string job = std::regex_replace(run, kRank, "");
            auto [it, isNew] = collectives.try_emplace(job);
            if (isNew)
            {
                order.push_back(job);
            }
            Collective& k = it->second;
            k.program = program;
            k.hosts.push_back(on);
            ++k.ranks;
            k.wrong += m.contains("correct") ? !m["correct"].get<bool>() : 0;
            k.unchecked += m.contains("correct") ? 0 : 1;
            if (Num(m, "time_s") >= k.time)
            {
                k.time = Num(m, "time_s");
                k.busbw = Num(m, "busbw_gbs");
                k.bytes = Num(m, "size_bytes");
            }
            continue;
        }
        if (anyClient && !std::regex_search(run, kAddress))
        {
            continue; // a server: its figures are its client's
        }
        if (m.contains("bw_average_mb_sec"))
        {
            parts.push_back(fmt::format("{} {} MB/s on {}", program,
                                        HumanNumber(Num(m, "bw_average_mb_sec")), on));
        }
        else if (m.contains("t_typical_usec"))
        {
            parts.push_back(fmt::format("{} typical {} us on {}", program,
                                        HumanNumber(Num(m, "t_typical_usec")), on));
        }
        else if (m.contains("latency_average_us"))
        {
            parts.push_back(fmt::format("{} {} us on {}", program,
                                        HumanNumber(Num(m, "latency_average_us")), on));
        }
    }
    for (const auto& name : order)
    {
        const Collective& k = collectives[name];
        const std::string check = k.wrong > 0
                                      ? fmt::format("WRONG on {} of {} ranks", k.wrong, k.ranks)
                                  : k.unchecked > 0 ? std::string("not checked")
                                  : k.ranks == 2    ? std::string("correct on both ranks")
                                                 : fmt::format("correct on all {} ranks", k.ranks);
        parts.push_back(fmt::format("{} on {} at {}: {} s and busBw {} GB/s (slowest rank), {}",
                                    k.program, Join(k.hosts), Bytes(k.bytes), HumanNumber(k.time),
                                    HumanNumber(k.busbw), check));
    }
    if (parts.empty())
    {
        return "";
    }
    return "- **Measured:** " + JoinClauses(parts) + ".\n";
}

/// The congestion line: the queue, what the switches and NICs did about it, and drops.
std::string
CongestionLine(const json& summary, const std::string& fabric, double peakQueueBytes)
{
    const json& t = summary.contains("totals") ? summary["totals"] : json::object();
    const json& edge = summary.contains("edge") ? summary["edge"] : json::object();
    auto total = [&](const char* key) {
        return TotalMeansSomething(fabric, key) ? Num(t, key) : 0.0;
    };
    std::vector<std::string> did;
    if (total("ecn_marks") > 0)
    {
        did.push_back(
            fmt::format("switches marked CE on {} packets", HumanNumber(total("ecn_marks"))));
    }
    if (total("pfc_pause_frames") > 0)
    {
        did.push_back(fmt::format("switches sent {} PFC pause frames",
                                  HumanNumber(total("pfc_pause_frames"))));
    }
    if (Num(edge, "pauses_sent") > 0)
    {
        did.push_back(fmt::format("the edges paused the switches {} times",
                                  HumanNumber(Num(edge, "pauses_sent"))));
    }
    if (total("cnps") > 0)
    {
        std::string cnp = fmt::format("{} CNPs were sent", HumanNumber(total("cnps")));
        if (Num(edge, "dcqcn_cnps_acted_on") > 0 && Num(edge, "dcqcn_lowest_rate_bps") > 0)
        {
            cnp += fmt::format(" and DCQCN cut a real sender to as low as {}",
                               Rate(Num(edge, "dcqcn_lowest_rate_bps")));
        }
        did.push_back(cnp);
    }
    if (total("credit_stalls") > 0)
    {
        did.push_back(fmt::format("senders waited for credits {} times",
                                  HumanNumber(total("credit_stalls"))));
    }
    if (Num(t, "tcp_retransmissions") > 0)
    {
        did.push_back(fmt::format("TCP retransmitted {} segments",
                                  HumanNumber(Num(t, "tcp_retransmissions"))));
    }
    const bool lossy = TotalMeansSomething(fabric, "congestion_drops");
    const double congestionDrops = lossy ? Num(t, "congestion_drops") : 0;
    if (congestionDrops > 0)
    {
        did.push_back(
            fmt::format("{} packets were DROPPED for congestion", HumanNumber(congestionDrops)));
    }
    std::string line = "- **Congestion:** ";
    if (peakQueueBytes > 0)
    {
        line += fmt::format("the deepest switch queue held {}; ", Bytes(peakQueueBytes));
    }
    if (did.empty())
    {
        line += "no sign of it: no mark, no pause, no congestion drop";
    }
    else
    {
        line += JoinClauses(did);
        if (lossy && congestionDrops == 0)
        {
            line += "; no packet was dropped for congestion";
        }
    }
    // Drops for other reasons, by reason, so a "6 drops" total is not a mystery.
    if (summary.contains("switch_drops") && summary["switch_drops"].is_object())
    {
        std::vector<std::string> other;
        for (const auto& [reason, n] : summary["switch_drops"].items())
        {
            if (n.is_number() && n.get<double>() > 0 &&
                reason.find("congestion") == std::string::npos)
            {
                std::string why = reason;
                std::replace(why.begin(), why.end(), '_', ' ');
                other.push_back(fmt::format("{} for {}", HumanNumber(n.get<double>()), why));
            }
        }
        if (!other.empty())
        {
            line += "; other drops: " + Join(other);
        }
    }
    return line + ".\n";
}

/// The faults' line: how many were applied, and what links going down cost.
std::string
FaultsLine(const json& summary)
{
    std::string md;
    size_t happened = 0;
    for (const auto& f : summary["faults"])
    {
        happened += f.value("applied", false) ? 1 : 0;
    }
    md += fmt::format("- **Faults:** {} of {} applied (table below)", happened,
                      summary["faults"].size());
    // What links going down cost, so a flow that took longer is not a mystery.
    const json& t = summary.contains("totals") && summary["totals"].is_object() ? summary["totals"]
                                                                                : json::object();
    if (Num(t, "link_down_drops") > 0)
    {
        md += fmt::format("; {} packet{} lost on links while they were down",
                          HumanNumber(Num(t, "link_down_drops")),
                          Num(t, "link_down_drops") == 1 ? " was" : "s were");
    }
    if (Num(t, "reroutes") > 0)
    {
        md += fmt::format("; switches rerouted {} time{}", HumanNumber(Num(t, "reroutes")),
                          Num(t, "reroutes") == 1 ? "" : "s");
    }
    if (Num(t, "sm_sweeps") > 0)
    {
        md += fmt::format("; the subnet manager swept {} time{}", HumanNumber(Num(t, "sm_sweeps")),
                          Num(t, "sm_sweeps") == 1 ? "" : "s");
    }
    md += ".\n";
    return md;
}

} // namespace

std::string
WhatHappenedMd(const json& summary, double peakQueueBytes)
{
    std::string md;
    const std::string fabric = summary.value("fabric", std::string("?"));
    if (summary.contains("commands") && !summary["commands"].empty())
    {
        md += CommandsLine(summary["commands"]);
        md += MeasuredLine(summary["commands"]);
    }
    if (summary.contains("flow_stats") && Num(summary["flow_stats"], "count") > 0)
    {
        const auto& f = summary["flow_stats"];
        const double count = Num(f, "count");
        const double done = Num(f, "completed");
        md += fmt::format("- **Simulated flows:** {} of {} completed", HumanNumber(done),
                          HumanNumber(count));
        if (Num(f, "failed") > 0)
        {
            md += fmt::format("; {} FAILED", HumanNumber(Num(f, "failed")));
        }
        if (Num(f, "pending") > 0)
        {
            md += fmt::format("; {} still pending when the run ended",
                              HumanNumber(Num(f, "pending")));
        }
        md += ".\n";
    }
    if (summary.contains("collectives") && summary["collectives"].is_array() &&
        !summary["collectives"].empty())
    {
        md += fmt::format("- **Simulated collectives:** {} iteration{} (table below).\n",
                          summary["collectives"].size(),
                          summary["collectives"].size() == 1 ? "" : "s");
    }
    if (summary.contains("training") && summary["training"].is_array() &&
        !summary["training"].empty())
    {
        md += fmt::format("- **Training:** {} step{} (table below).\n", summary["training"].size(),
                          summary["training"].size() == 1 ? "" : "s");
    }
    if (summary.contains("memory") && summary["memory"].is_array() && !summary["memory"].empty())
    {
        md += fmt::format("- **Memory:** {} workload{} of loads and stores (table below).\n",
                          summary["memory"].size(), summary["memory"].size() == 1 ? "" : "s");
    }
    if (summary.contains("faults") && summary["faults"].is_array() && !summary["faults"].empty())
    {
        md += FaultsLine(summary);
    }
    if (summary.contains("totals") &&
        summary.value("fidelity", std::string("packet")) != "analytical" && fabric != "pcie" &&
        fabric != "node")
    {
        md += CongestionLine(summary, fabric, peakQueueBytes);
    }
    if (summary.contains("deadlock") && summary["deadlock"].is_object())
    {
        std::vector<std::string> cycle;
        for (const auto& c : summary["deadlock"].value("cycle", json::array()))
        {
            cycle.push_back(c.is_string() ? c.get<std::string>() : c.dump());
        }
        const json& d = summary["deadlock"];
        const std::string kind = d.value("kind", std::string());
        std::string when = "at the end of the run";
        if (d.contains("detected_at_s") && d["detected_at_s"].is_number())
        {
            when = fmt::format("seen from {}", Duration(d["detected_at_s"].get<double>()));
        }
        if (d.contains("stopped_at_s") && d["stopped_at_s"].is_number())
        {
            when +=
                fmt::format(" (the run stopped at {})", Duration(d["stopped_at_s"].get<double>()));
        }
        md += fmt::format("- **DEADLOCK:** {} {}: {}, each waiting for the next's buffer; "
                          "nothing on it can move.\n",
                          kind == "credit_loop"    ? "a credit loop"
                          : kind == "pfc_deadlock" ? "a PFC deadlock"
                                                   : kind,
                          when, Join(cycle));
    }
    if (summary.contains("launch_predictions"))
    {
        std::vector<std::string> ratios;
        for (const auto& r : summary["launch_predictions"])
        {
            if (r.contains("measured_over_model"))
            {
                ratios.push_back(fmt::format("{:.2f} (workload {})",
                                             r["measured_over_model"].get<double>(),
                                             r.value("workload", 0)));
            }
        }
        if (!ratios.empty())
        {
            md += "- **Real against model:** measured time over simulated time " + Join(ratios) +
                  ".\n";
        }
    }
    if (summary.contains("timing_faithful") && !summary.value("timing_faithful", true))
    {
        md += fmt::format("- **Timing NOT faithful:** the simulation fell up to {} ms behind the "
                          "wall clock, so the real endpoints saw a slower fabric at times.\n",
                          HumanNumber(summary.contains("lag") ? Num(summary["lag"], "max_ms") : 0));
    }
    if (summary.contains("expect") && summary["expect"].is_array() && !summary["expect"].empty())
    {
        std::vector<std::string> missed;
        for (const auto& e : summary["expect"])
        {
            if (!e.value("ok", false))
            {
                missed.push_back(fmt::format(
                    "`{}` wanted {}, got {}", e.value("metric", ""),
                    e["want"].is_string() ? e["want"].get<std::string>() : e["want"].dump(),
                    e["value"].is_number() ? HumanNumber(e["value"].get<double>())
                                           : e["value"].dump()));
            }
        }
        const size_t n = summary["expect"].size();
        md += missed.empty() ? fmt::format("- **Expectations:** all {} held.\n", n)
                             : fmt::format("- **Expectations:** {} of {} FAILED: {}.\n",
                                           missed.size(), n, Join(missed));
    }
    return md.empty() ? "" : "## What happened\n\n" + md + "\n";
}

} // namespace fabemu
