#include "scenarios/src/results.h"

#include "scenarios/src/results-plots.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

namespace fabemu
{

namespace fs = std::filesystem;
using nlohmann::json;

namespace
{

/// Every value at \p path below \p node ('*' fans out over arrays and objects).
void
Collect(const json& node, const std::vector<std::string>& path, size_t i,
        std::vector<const json*>& out)
{
    if (i == path.size())
    {
        out.push_back(&node);
        return;
    }
    const std::string& part = path[i];
    if (part == "*")
    {
        if (node.is_array() || node.is_object())
        {
            for (const auto& child : node)
            {
                Collect(child, path, i + 1, out);
            }
        }
        return;
    }
    if (node.is_array() && std::all_of(part.begin(), part.end(), ::isdigit))
    {
        const size_t k = std::stoul(part);
        if (k < node.size())
        {
            Collect(node[k], path, i + 1, out);
        }
        return;
    }
    if (node.is_object() && node.contains(part))
    {
        Collect(node[part], path, i + 1, out);
    }
}

bool
AsNumber(const json& v, double& x)
{
    if (v.is_number())
    {
        x = v.get<double>();
        return true;
    }
    if (v.is_boolean())
    {
        x = v.get<bool>() ? 1 : 0;
        return true;
    }
    return false;
}

} // namespace

json
CheckExpectations(const std::vector<Expectation>& expect, const json& summary, bool& allOk)
{
    allOk = true;
    json out = json::array();
    for (const auto& e : expect)
    {
        std::vector<std::string> path;
        std::stringstream ss(e.metric);
        for (std::string p; std::getline(ss, p, '.');)
        {
            path.push_back(p);
        }
        std::vector<const json*> values;
        Collect(summary, path, 0, values);
        bool ok = !values.empty();
        json shown = nullptr;
        for (const json* v : values)
        {
            double x = 0;
            const bool holds = AsNumber(*v, x) && e.Holds(x);
            if (!holds || shown.is_null())
            {
                shown = *v; // the first failing value, else the first
            }
            if (!holds)
            {
                ok = false;
                break;
            }
        }
        allOk = allOk && ok;
        out.push_back({{"metric", e.metric}, {"want", e.want}, {"value", shown}, {"ok", ok}});
    }
    return out;
}

namespace
{

/// Real against model: each launch's slowest rank beside the simulated collective;
/// nothing when there are none.
std::string
LaunchPredictionsMd(const json& rows)
{
    if (rows.empty())
    {
        return "";
    }
    std::string md = "## Real against model\n\n"
                     "Each launch of fabemu-allreduce at its largest size (the slowest rank) "
                     "beside the same collective simulated on this fabric and topology without "
                     "the VMs (prediction-K/).\n\n"
                     "| workload | op | ranks | bytes | Gloo | measured s | busBw GB/s | model | "
                     "model s | busBw GB/s | measured / model |\n"
                     "|---|---|---|---|---|---|---|---|---|---|---|\n";
    std::string notes;
    for (const auto& r : rows)
    {
        const bool modelled = r.contains("model_time_s");
        md += fmt::format(
            "| {} | {} | {} | {} | {} | {:.4g} | {:.3g} | {} | {} | {} | {} |\n",
            r.value("workload", 0), r.value("op", std::string()),
            fmt::join(r.value("ranks", std::vector<std::string>{}), " "), r.value("bytes", 0),
            r.value("gloo_algorithm", std::string()), r.value("measured_time_s", 0.0),
            r.value("measured_busbw_gbs", 0.0), r.value("model_algorithm", std::string("-")),
            modelled ? fmt::format("{:.4g}", r["model_time_s"].get<double>()) : "-",
            modelled ? fmt::format("{:.3g}", r["model_busbw_gbs"].get<double>()) : "-",
            modelled ? fmt::format("{:.2f}", r["measured_over_model"].get<double>()) : "-");
        if (r.contains("why_no_model"))
        {
            notes += fmt::format("- workload {}: no model figure: {}.\n", r.value("workload", 0),
                                 r["why_no_model"].get<std::string>());
        }
    }
    return md + "\n" + notes + (notes.empty() ? "" : "\n");
}

} // namespace

json
CollectiveTableMetrics(const std::string& output)
{
    std::istringstream in(output);
    std::vector<std::string> names; // the header's columns, '#' dropped
    json metrics = json::object();
    uint64_t wrong = 0;
    bool checked = false;
    double largest = -1;
    double busSum = 0;
    size_t rows = 0;
    auto column = [&names](const std::string& name) {
        return static_cast<size_t>(std::find(names.begin(), names.end(), name) - names.begin());
    };
    for (std::string line; std::getline(in, line);)
    {
        std::istringstream words(line);
        std::vector<std::string> tokens;
        for (std::string t; words >> t;)
        {
            tokens.push_back(t);
        }
        if (tokens.empty())
        {
            continue;
        }
        if (tokens[0] == "#")
        {
            tokens.erase(tokens.begin());
            // "#  size  count  type  redop  ...  time  algbw  busbw  #wrong": the header.
            if (!tokens.empty() && tokens[0] == "size" &&
                std::find(tokens.begin(), tokens.end(), "busbw") != tokens.end())
            {
                names = tokens;
            }
            continue;
        }
        if (names.empty() || tokens.size() < names.size())
        {
            continue;
        }
        // A result row: its size, then the columns as the header names them. nccl-tests'
        // in-place columns repeat the names: the first (out-of-place) ones are taken.
        const size_t iTime = column("time");
        const size_t iAlg = column("algbw");
        const size_t iBus = column("busbw");
        const size_t iWrong = column("#wrong");
        if (iTime >= names.size() || iAlg >= names.size() || iBus >= names.size())
        {
            continue;
        }
        char* end = nullptr;
        const double size = std::strtod(tokens[0].c_str(), &end);
        if (*end != '\0')
        {
            continue;
        }
        const double t = std::strtod(tokens[iTime].c_str(), nullptr);
        const double alg = std::strtod(tokens[iAlg].c_str(), nullptr);
        const double bus = std::strtod(tokens[iBus].c_str(), nullptr);
        if (iWrong < names.size() && tokens[iWrong] != "N/A")
        {
            wrong += std::strtoull(tokens[iWrong].c_str(), nullptr, 10);
            checked = true;
        }
        busSum += bus;
        ++rows;
        if (size >= largest)
        {
            largest = size;
            metrics["size_bytes"] = size;
            metrics["time_s"] = t / 1e6; // the table's time is in us
            metrics["algbw_gbs"] = alg;
            metrics["busbw_gbs"] = bus;
        }
    }
    if (rows == 0)
    {
        return json::object();
    }
    metrics["avg_busbw_gbs"] = busSum / static_cast<double>(rows);
    metrics["sizes"] = rows;
    if (checked)
    {
        metrics["wrong"] = wrong;
        metrics["correct"] = wrong == 0;
    }
    return metrics;
}

json
UcxPerftestMetrics(const std::string& output)
{
    const auto final = output.rfind("\nFinal:");
    if (final == std::string::npos)
    {
        return json::object();
    }
    std::istringstream row(output.substr(final + 7, output.find('\n', final + 1) - final - 7));
    // strtod, not >>: the average columns read "-nan" when the last interval had no
    // iteration of its own, and the overall ones still hold.
    std::vector<double> v;
    for (std::string tok; row >> tok;)
    {
        char* end = nullptr;
        const double x = std::strtod(tok.c_str(), &end);
        if (end == tok.c_str() || *end != '\0')
        {
            return json::object();
        }
        v.push_back(x);
    }
    if (v.size() != 8)
    {
        return json::object();
    }
    // The header above says which the first three are: latency (latency tests) or
    // overhead (bandwidth tests), in usec.
    const std::string head = output.substr(0, final);
    const std::string kind =
        head.rfind("latency (usec)") != std::string::npos ? "latency" : "overhead";
    const std::pair<std::string, size_t> columns[] = {
        {"iterations", 0},         {kind + "_p50_us", 1},    {kind + "_average_us", 2},
        {kind + "_overall_us", 3}, {"bw_average_mb_sec", 4}, {"bw_overall_mb_sec", 5},
        {"msg_rate_overall", 7}};
    json metrics = json::object();
    for (const auto& [name, i] : columns)
    {
        if (!std::isnan(v[i]))
        {
            metrics[name] = v[i]; // a nan is no figure: left out
        }
    }
    return metrics;
}

json
CommandMetrics(const std::string& output)
{
    json m = PerftestMetrics(output);
    if (m.empty())
    {
        m = CollectiveTableMetrics(output);
    }
    return m.empty() ? UcxPerftestMetrics(output) : m;
}

json
PerftestMetrics(const std::string& output)
{
    if (output.find("Correlation coefficient r^2") != std::string::npos)
    {
        // perftest's CPU-frequency sampling failed (a busy VM): it prints 0.00 for
        // every rate, which is no measurement.
        return {{"untimed", "perftest could not sample the CPU frequency (correlation r^2 < 0.9); "
                            "its figures are not measurements"}};
    }
    std::istringstream in(output);
    std::vector<std::string> lines;
    for (std::string l; std::getline(in, l);)
    {
        lines.push_back(l);
    }
    json metrics = json::object();
    for (size_t i = 0; i + 1 < lines.size(); ++i)
    {
        std::istringstream hdr(lines[i]);
        std::string first;
        if (!(hdr >> first) || first != "#bytes")
        {
            continue;
        }
        // Names are single words ("#iterations", "t_min[usec]") or a word and a
        // bracketed word ("BW average[MB/sec]", "99% percentile[usec]").
        std::vector<std::string> names{first};
        std::string pending;
        for (std::string tok; hdr >> tok;)
        {
            if (tok.find('[') == std::string::npos && tok[0] != '#')
            {
                pending += pending.empty() ? tok : " " + tok;
                continue;
            }
            names.push_back(pending.empty() ? tok : pending + " " + tok);
            pending.clear();
        }
        if (!pending.empty())
        {
            names.push_back(pending);
        }
        // The result rows follow until a line that is not all numbers.
        for (size_t j = i + 1; j < lines.size(); ++j)
        {
            std::istringstream row(lines[j]);
            std::vector<double> values;
            std::string tok;
            bool numeric = true;
            while (row >> tok)
            {
                char* end = nullptr;
                const double v = std::strtod(tok.c_str(), &end);
                if (*end != '\0')
                {
                    numeric = false;
                    break;
                }
                values.push_back(v);
            }
            if (!numeric || values.size() != names.size())
            {
                break;
            }
            for (size_t k = 0; k < names.size(); ++k)
            {
                std::string key;
                for (char c : names[k])
                {
                    if (std::isalnum(static_cast<unsigned char>(c)))
                    {
                        key += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
                    }
                    else if (c == '%')
                    {
                        key += "pct";
                    }
                    else if (!key.empty() && key.back() != '_')
                    {
                        key += '_';
                    }
                }
                while (!key.empty() && key.back() == '_')
                {
                    key.pop_back();
                }
                metrics[key] = values[k]; // the last row wins (the largest size in -a runs)
            }
        }
    }
    return metrics;
}

std::string
Tail(const std::string& text, size_t lines)
{
    size_t pos = text.size();
    if (pos > 0 && text[pos - 1] == '\n')
    {
        --pos;
    }
    for (size_t n = 0; pos > 0; --pos)
    {
        if (text[pos - 1] == '\n' && ++n == lines)
        {
            break;
        }
    }
    return text.substr(pos);
}

void
WriteCsv(const fs::path& path, const std::string& header, const std::string& rows)
{
    std::ofstream out(path);
    out << header << '\n';
    std::string line;
    std::istringstream in(rows);
    while (std::getline(in, line))
    {
        std::replace(line.begin(), line.end(), ' ', ',');
        out << line << '\n';
    }
}

std::vector<std::vector<std::string>>
ReadCsv(const fs::path& path)
{
    std::vector<std::vector<std::string>> rows;
    std::ifstream in(path);
    std::string line;
    std::getline(in, line); // header
    while (std::getline(in, line))
    {
        std::vector<std::string> f;
        std::stringstream ss(line);
        for (std::string x; std::getline(ss, x, ',');)
        {
            f.push_back(x);
        }
        rows.push_back(f);
    }
    return rows;
}

// ---------------------------------------------------------------- report

namespace
{

/// A summary value for people: numbers rounded (HumanNumber), strings bare.
std::string
Human(const json& v)
{
    if (v.is_number())
    {
        return HumanNumber(v.get<double>());
    }
    if (v.is_string())
    {
        return v.get<std::string>();
    }
    return v.dump();
}

} // namespace

std::string
FabricPhrase(const std::string& type)
{
    if (type == "roce")
    {
        return "a RoCEv2 fabric";
    }
    if (type == "infiniband")
    {
        return "an InfiniBand fabric";
    }
    if (type == "iwarp")
    {
        return "an iWARP fabric";
    }
    if (type == "pcie")
    {
        return "PCIe inside one server";
    }
    if (type == "node")
    {
        return "one server's inside (NVLink or CXL)";
    }
    return "a " + type + " fabric";
}

bool
TotalMeansSomething(const std::string& type, const std::string& key)
{
    static const std::map<std::string, std::set<std::string>> kMeaningless{
        {"roce", {"credit_stalls"}},
        {"infiniband", {"pfc_pause_frames", "congestion_drops"}},
        {"iwarp", {"pfc_pause_frames", "cnps", "credit_stalls"}},
        {"pcie",
         {"drops", "congestion_drops", "pfc_pause_frames", "ecn_marks", "cnps", "credit_stalls"}},
        {"node",
         {"drops", "congestion_drops", "pfc_pause_frames", "ecn_marks", "cnps", "credit_stalls"}},
    };
    const auto it = kMeaningless.find(type);
    return it == kMeaningless.end() || it->second.count(key) == 0;
}

namespace
{

/// The flow-size buckets of the FCT table: decades from 10 KB, as the DCQCN and HPCC
/// papers split their FCT plots.
std::string
SizeBucket(uint64_t bytes)
{
    static const std::vector<std::pair<uint64_t, const char*>> kBuckets{
        {10'000, "<= 10 KB"},
        {100'000, "10-100 KB"},
        {1'000'000, "100 KB-1 MB"},
        {10'000'000, "1-10 MB"},
    };
    for (const auto& [limit, name] : kBuckets)
    {
        if (bytes <= limit)
        {
            return name;
        }
    }
    return "> 10 MB";
}

} // namespace

std::string
FctTable(const json& summary)
{
    struct Cell
    {
        uint64_t lowest{UINT64_MAX};
        std::vector<double> slowdowns;
        size_t failed{0};
    };
    std::map<std::pair<std::string, std::string>, Cell> cells; // (workload, bucket)
    if (!summary.contains("flows"))
    {
        return "";
    }
    size_t completed = 0;
    for (const auto& f : summary["flows"])
    {
        const uint64_t bytes = f.value("bytes", uint64_t{0});
        Cell& c = cells[{f.value("workload", std::string("flows")), SizeBucket(bytes)}];
        c.lowest = std::min(c.lowest, bytes);
        if (f.value("state", std::string()) == "completed" && f.contains("slowdown"))
        {
            c.slowdowns.push_back(f["slowdown"].get<double>());
            ++completed;
        }
        else if (f.value("state", std::string()) == "failed")
        {
            ++c.failed;
        }
    }
    if (completed == 0)
    {
        return "";
    }
    std::vector<std::pair<std::pair<std::string, uint64_t>, std::string>> order;
    for (const auto& [key, c] : cells)
    {
        order.push_back({{key.first, c.lowest}, key.second});
    }
    std::sort(order.begin(), order.end());
    std::string md = "| workload | flow size | flows | failed | p50 | p95 | p99 |\n"
                     "|---|---|---|---|---|---|---|\n";
    for (const auto& [wk, bucket] : order)
    {
        const Cell& c = cells.at({wk.first, bucket});
        if (c.slowdowns.empty())
        {
            md += fmt::format("| {} | {} | 0 | {} | | | |\n", wk.first, bucket, c.failed);
            continue;
        }
        md += fmt::format("| {} | {} | {} | {} | {:.3g} | {:.3g} | {:.3g} |\n", wk.first, bucket,
                          c.slowdowns.size(), c.failed, Percentile(c.slowdowns, 0.5),
                          Percentile(c.slowdowns, 0.95), Percentile(c.slowdowns, 0.99));
    }
    return md;
}

namespace
{

/// report.md's table of collectives: one row per iteration of every job.
std::string
CollectivesTableMd(const json& collectives)
{
    std::ostringstream md;
    md << "## Collectives\n\nTime from the first transfer posted to the last arrived; algBw = "
          "size / time, busBw = algBw times nccl-tests' factor (2(n-1)/n for all-reduce; "
          "(n-1)/n for reduce-scatter, all-gather, all-to-all; 1 for broadcast, reduce, "
          "send-recv), GB/s = 10^9 bytes/s. The alpha-beta column is the "
          "analytical mode's time of the same operation on the same topology.\n\n"
          "| job | iteration | op | algorithm | ranks | bytes | state | time | algBw GB/s | busBw "
          "GB/s | alpha-beta |\n|---|---|---|---|---|---|---|---|---|---|---|\n";
    std::set<std::string> bucketed; // training jobs: their rows say iteration.bucket
    for (const auto& c : collectives)
    {
        if (c.value("bucket", 0) > 0)
        {
            bucketed.insert(c.value("job", std::string()));
        }
    }
    for (const auto& c : collectives)
    {
        const bool done = c.value("state", std::string()) == "completed";
        const std::string job = c.value("job", std::string());
        md << fmt::format("| {} | {} | {} | {}{} | {} | {} | {} | {} | {} | {} | {} |\n", job,
                          bucketed.count(job)
                              ? fmt::format("{}.{}", c.value("iteration", 0), c.value("bucket", 0))
                              : std::to_string(c.value("iteration", 0)),
                          c.value("op", std::string()), c.value("algorithm", std::string()),
                          c.value("auto", false) ? " (auto)" : "", c["ranks"].size(),
                          c.value("bytes", uint64_t{0}), c.value("state", std::string()),
                          done ? HumanDuration(c["time_s"].get<double>()) : "-",
                          done ? fmt::format("{:.2f}", c["algbw_gbs"].get<double>()) : "-",
                          done ? fmt::format("{:.2f}", c["busbw_gbs"].get<double>()) : "-",
                          HumanDuration(c.value("analytical_time_s", 0.0)));
    }
    md << "\n";
    return md.str();
}

/// report.md's table of training steps: one row per iteration of every training job.
std::string
TrainingTableMd(const json& training)
{
    std::ostringstream md;
    md << "## Training steps\n\nEach step computes for its compute time while its collective's "
          "buckets become ready; a bucket's collective starts once it is ready and the one "
          "before it has ended. Exposed is what communication added to the compute.\n\n"
          "| job | iteration | state | compute | step | exposed | exposed share |\n"
          "|---|---|---|---|---|---|---|\n";
    for (const auto& st : training)
    {
        const bool done = st.value("state", std::string()) == "completed";
        const double step = done ? st["step_s"].get<double>() : 0;
        const double exposed = done ? st["exposed_s"].get<double>() : 0;
        md << fmt::format("| {} | {} | {} | {} | {} | {} | {} |\n", st.value("job", std::string()),
                          st.value("iteration", 0), st.value("state", std::string()),
                          HumanDuration(st.value("compute_s", 0.0)),
                          done ? HumanDuration(step) : "-", done ? HumanDuration(exposed) : "-",
                          done && step > 0 ? fmt::format("{:.0f} %", exposed / step * 100) : "-");
    }
    md << "\n";
    return md.str();
}

/// report.md's table of expectations: each metric, what was wanted, the value (a time for
/// a metric in seconds), met or not.
std::string
ExpectationsTableMd(const json& expect)
{
    std::ostringstream md;
    md << "## Expectations\n\n| metric | want | value | ok |\n|---|---|---|---|\n";
    for (const auto& e : expect)
    {
        const std::string metric = e["metric"].get<std::string>();
        const bool seconds =
            metric.size() > 2 && metric.substr(metric.size() - 2) == "_s" && e["value"].is_number();
        md << "| " << metric << " | " << e["want"].get<std::string>() << " | "
           << (seconds ? HumanDuration(e["value"].get<double>()) : Human(e["value"])) << " | "
           << (e["ok"].get<bool>() ? "yes" : "**NO**") << " |\n";
    }
    md << "\n";
    return md.str();
}

} // namespace

std::string
MemoryTable(const json& memory)
{
    std::ostringstream t;
    t << fmt::format("  {:<12} {:<10} {:<10} {:>5} {:>9} {:>9} {:>9} {:>9} {:>9}\n", "workload",
                     "cpu", "target", "read", "GB/s", "idle ns", "p50 ns", "p99 ns", "p99.9 ns");
    for (const auto& m : memory)
    {
        t << fmt::format("  {:<12} {:<10} {:<10} {:>5.2f} {:>9.2f} {:>9.1f} {:>9.1f} {:>9.1f} "
                         "{:>9.1f}\n",
                         m.value("workload", std::string()), m.value("cpu", std::string()),
                         m.value("target", std::string()), m.value("read_ratio", 0.0),
                         m.value("gbs", 0.0), m.value("idle_ns", 0.0), m.value("p50_ns", 0.0),
                         m.value("p99_ns", 0.0), m.value("p999_ns", 0.0));
    }
    return t.str();
}

std::string
MemoryTableMd(const json& memory)
{
    std::ostringstream md;
    md << "## Memory\n\nLoads and stores of each CPU in 64-byte lines: the bandwidth achieved "
          "and the latency of its requests, core to core, beside a lone read's idle latency "
          "on the same path (docs/cxl.md).\n\n"
          "| workload | cpu | target | reads | pattern | outstanding | offered GB/s | GB/s | "
          "idle ns | p50 ns | p99 ns | p99.9 ns |\n"
          "|---|---|---|---|---|---|---|---|---|---|---|---|\n";
    for (const auto& m : memory)
    {
        const double offered = m.value("offered_gbs", 0.0);
        md << fmt::format("| {} | {} | {} | {:.2f} | {} | {} | {} | {:.2f} | {:.1f} | {:.1f} | "
                          "{:.1f} | {:.1f} |\n",
                          m.value("workload", std::string()), m.value("cpu", std::string()),
                          m.value("target", std::string()), m.value("read_ratio", 0.0),
                          m.value("pattern", std::string()), m.value("outstanding", 0),
                          offered > 0 ? fmt::format("{:.2f}", offered) : "max", m.value("gbs", 0.0),
                          m.value("idle_ns", 0.0), m.value("p50_ns", 0.0), m.value("p99_ns", 0.0),
                          m.value("p999_ns", 0.0));
    }
    md << "\n";
    return md.str();
}

std::string
FaultsTableMd(const json& faults)
{
    std::ostringstream md;
    md << "## Faults\n\nWhat the scenario broke on purpose (faults:, docs/faults.md).\n\n"
          "| at (s) | link or host | kind | value | applied |\n|---|---|---|---|---|\n";
    for (const auto& f : faults)
    {
        md << fmt::format("| {:.6f} | {} | {} | {} | {} |\n", f.value("at_s", 0.0),
                          f.value("link", f.value("host", std::string())),
                          f.value("kind", std::string()), f.value("value", std::string()),
                          f.value("applied", false) ? "yes" : "no");
    }
    md << "\n";
    return md.str();
}

namespace
{

/// The deepest switch queue of \p dir's queue.csv (time_ns,node,port,prio,bytes); 0 without.
double
PeakQueueBytes(const fs::path& dir)
{
    double peak = 0;
    if (fs::exists(dir / "queue.csv"))
    {
        for (const auto& r : ReadCsv(dir / "queue.csv"))
        {
            if (r.size() == 5)
            {
                peak = std::max(peak, std::strtod(r[4].c_str(), nullptr));
            }
        }
    }
    return peak;
}

/// report.md's commands: each with its host, exit status and metrics.
std::string
CommandsMd(const json& commands)
{
    std::string md = "## Commands\n\n";
    for (const auto& c : commands)
    {
        md += fmt::format("- `{}` on {}: exit {}", c.value("run", std::string()),
                          c.value("on", std::string()), c.value("exit_code", -1));
        if (c.contains("metrics") && c["metrics"].is_object() && !c["metrics"].empty())
        {
            std::string m;
            for (const auto& [k, v] : c["metrics"].items())
            {
                m += (m.empty() ? "" : ", ") + k + " " + Human(v);
            }
            md += " — " + m;
        }
        md += "\n";
    }
    return md + "\n";
}

} // namespace

std::vector<std::string>
RenderReport(const fs::path& dir, std::ostream& err)
{
    json summary;
    {
        std::ifstream in(dir / "summary.json");
        summary = json::parse(in, nullptr, false);
    }
    if (summary.is_discarded())
    {
        err << "fabemu report: " << (dir / "summary.json").string() << " is missing or not JSON\n";
        return {};
    }
    const PlotOutcome plots = RenderPlots(dir, summary, err);
    const std::vector<std::string>& made = plots.made;

    // report.md: what ran, what came out, whether it met its expectations.
    std::ofstream md(dir / "report.md");
    md << "# " << summary.value("scenario", std::string("run")) << "\n\n";
    if (summary.contains("description") && !summary["description"].get<std::string>().empty())
    {
        md << summary["description"].get<std::string>() << "\n\n";
    }
    const std::string fabric = summary.value("fabric", std::string("?"));
    if (summary.value("fidelity", std::string("packet")) == "analytical")
    {
        md << fmt::format("On {}, analytical: every collective timed by its alpha-beta cost on "
                          "this topology, nothing simulated ({} of wall time).\n\n",
                          FabricPhrase(fabric), HumanDuration(summary.value("wall_time_s", 0.0)));
    }
    else
    {
        md << fmt::format("On {}, seed {}, {} simulated in {} of wall time.\n\n",
                          FabricPhrase(fabric), summary.value("seed", 0),
                          HumanDuration(summary.value("sim_time_s", 0.0)),
                          HumanDuration(summary.value("wall_time_s", 0.0)));
    }
    md << WhatHappenedMd(summary, PeakQueueBytes(dir));
    if (summary.contains("pcap_note"))
    {
        md << summary["pcap_note"].get<std::string>() << "\n\n";
    }
    if (summary.contains("totals"))
    {
        md << "| total | value |\n|---|---|\n";
        for (const auto& [k, v] : summary["totals"].items())
        {
            if (TotalMeansSomething(fabric, k)) // summary.json keeps every key, for scripts
            {
                // A time in seconds (credit_starved_s) reads as one: "127.4 us".
                const bool seconds =
                    k.size() > 2 && k.compare(k.size() - 2, 2, "_s") == 0 && v.is_number();
                md << "| " << k << " | " << (seconds ? HumanDuration(v.get<double>()) : Human(v))
                   << " |\n";
            }
        }
        md << "\n";
    }
    if (summary.contains("flow_stats") && summary["flow_stats"].value("count", 0) > 0)
    {
        const auto& f = summary["flow_stats"];
        // Only completed flows have an FCT: the throughputs and fct.csv's plot are theirs alone.
        md << fmt::format("Flows: {} completed, {} failed, {} pending (of {})",
                          f.value("completed", 0), f.value("failed", 0), f.value("pending", 0),
                          f.value("count", 0));
        if (f.value("completed", 0) > 0)
        {
            md << fmt::format("; completed flows' throughput {}..{} Gb/s, Jain fairness {:.3f}",
                              HumanNumber(f.value("min_throughput_gbps", 0.0)),
                              HumanNumber(f.value("max_throughput_gbps", 0.0)),
                              f.value("jain_throughput", 0.0));
            if (f.contains("fct_slowdown") && f["fct_slowdown"].is_object())
            {
                const auto& sd = f["fct_slowdown"];
                md << fmt::format("; FCT slowdown median {:.3g}, p99 {:.3g}, max {:.3g}",
                                  sd.value("median", 0.0), sd.value("p99", 0.0),
                                  sd.value("max", 0.0));
            }
        }
        md << ".\n\n";
        if (const std::string table = FctTable(summary); !table.empty())
        {
            md << "FCT slowdown (FCT over the ideal FCT of an empty fabric) by workload and flow "
                  "size, completed flows; failed flows have no FCT and are counted apart.\n\n"
               << table << "\n";
        }
    }
    if (summary.contains("collectives") && !summary["collectives"].empty())
    {
        md << CollectivesTableMd(summary["collectives"]);
    }
    if (summary.contains("training") && !summary["training"].empty())
    {
        md << TrainingTableMd(summary["training"]);
    }
    if (summary.contains("memory") && !summary["memory"].empty())
    {
        md << MemoryTableMd(summary["memory"]);
    }
    if (summary.contains("faults") && !summary["faults"].empty())
    {
        md << FaultsTableMd(summary["faults"]);
    }
    if (summary.contains("lag"))
    {
        md << fmt::format(
            "Lag of simulated time behind the wall clock: max {:.3g} ms, p99 {:.3g} ms; "
            "timing {} (simulation thread: {}).\n\n",
            summary["lag"].value("max_ms", 0.0), summary["lag"].value("p99_ms", 0.0),
            summary.value("timing_faithful", true) ? "faithful" : "NOT faithful",
            summary.value("scheduling", std::string("?")));
    }
    md << LaunchPredictionsMd(summary.value("launch_predictions", json::array()));
    if (summary.contains("commands") && !summary["commands"].empty())
    {
        md << CommandsMd(summary["commands"]);
    }
    if (summary.contains("expect") && !summary["expect"].empty())
    {
        md << ExpectationsTableMd(summary["expect"]);
    }
    if (!made.empty() || !plots.omitted.empty())
    {
        md << "## Plots\n\n";
        for (size_t i = 0; i < made.size(); ++i)
        {
            md << plots.captions[i] << "\n\n![" << made[i] << "](" << made[i] << ")\n\n";
        }
        for (const auto& o : plots.omitted)
        {
            md << "- " << o << "\n";
        }
        if (!plots.omitted.empty())
        {
            md << "\n";
        }
    }
    return made;
}

} // namespace fabemu
