#include "results.h"

#include <fmt/format.h>

#include <algorithm>
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
Collect(const json& node, const std::vector<std::string>& path, size_t i, std::vector<const json*>& out)
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

// ---------------------------------------------------------------- plots and report

namespace
{

/// A gnuplot script drawing one line per series; data inline so the script stands alone.
struct Plot
{
    Plot(std::string n, std::string t, std::string x, std::string y)
        : name(std::move(n)),
          title(std::move(t)),
          xlabel(std::move(x)),
          ylabel(std::move(y))
    {
    }
    std::string name;
    std::string title;
    std::string xlabel;
    std::string ylabel;
    std::string style{"lines"};
    std::string extra;
    std::map<std::string, std::vector<std::pair<double, double>>> series;
};

bool
Render(const Plot& p, const fs::path& dir, bool haveGnuplot, std::ostream& err)
{
    if (p.series.empty())
    {
        return false;
    }
    const fs::path gp = dir / "plots" / (p.name + ".gp");
    {
        std::ofstream s(gp);
        s << "# Re-render with: gnuplot " << p.name << ".gp (in this folder)\n";
        s << "set terminal pngcairo size 1000,560 noenhanced\n";
        s << "set output '" << p.name << ".png'\n";
        s << "set title '" << p.title << "'\nset xlabel '" << p.xlabel << "'\nset ylabel '"
          << p.ylabel << "'\nset grid\nset key outside right\n" << p.extra;
        size_t k = 0;
        for (const auto& [label, points] : p.series)
        {
            s << "$d" << k++ << " << EOD\n";
            for (const auto& [x, y] : points)
            {
                s << fmt::format("{:.9g} {:.9g}\n", x, y);
            }
            s << "EOD\n";
        }
        s << "plot ";
        k = 0;
        for (const auto& kv : p.series)
        {
            s << (k ? ", \\\n     " : "") << "$d" << k << " with " << p.style << " title '"
              << kv.first << "'";
            ++k;
        }
        s << "\n";
    }
    if (!haveGnuplot)
    {
        return false;
    }
    const std::string cmd = fmt::format("cd '{}' && gnuplot '{}.gp' 2>&1", (dir / "plots").string(), p.name);
    FILE* pipe = popen(cmd.c_str(), "r");
    std::string out;
    char buf[256];
    while (pipe && fgets(buf, sizeof buf, pipe))
    {
        out += buf;
    }
    const int rc = pipe ? pclose(pipe) : -1;
    if (rc != 0 || !fs::exists(dir / "plots" / (p.name + ".png")))
    {
        err << "fabemu: gnuplot failed on plots/" << p.name << ".gp: " << out << "\n";
        return false;
    }
    return true;
}

bool
GnuplotAvailable()
{
    return std::system("command -v gnuplot >/dev/null 2>&1") == 0;
}

} // namespace

std::vector<std::string>
RenderReport(const fs::path& dir, std::ostream& err)
{
    std::vector<std::string> made;
    json summary;
    {
        std::ifstream in(dir / "summary.json");
        summary = json::parse(in, nullptr, false);
    }
    if (summary.is_discarded())
    {
        err << "fabemu report: " << (dir / "summary.json").string() << " is missing or not JSON\n";
        return made;
    }
    fs::create_directories(dir / "plots");
    const bool gnuplot = GnuplotAvailable();
    if (!gnuplot)
    {
        err << "fabemu report: gnuplot is not installed; plot scripts are written, no PNGs\n";
    }
    std::vector<Plot> plots;

    if (fs::exists(dir / "throughput.csv"))
    {
        Plot p{"throughput", "Throughput per flow", "time (ms)", "Gb/s"};
        for (const auto& r : ReadCsv(dir / "throughput.csv"))
        {
            if (r.size() >= 3)
            {
                p.series["flow " + r[1]].emplace_back(std::stod(r[0]) / 1e6, std::stod(r[2]));
            }
        }
        if (p.series.size() > 16)
        {
            p.extra += "set key off\n";
        }
        plots.push_back(p);
    }
    if (fs::exists(dir / "queue.csv"))
    {
        Plot p{"queue", "Switch egress queue depth (busiest ports)", "time (ms)", "KB"};
        std::map<std::string, double> peak;
        auto rows = ReadCsv(dir / "queue.csv");
        for (const auto& r : rows)
        {
            if (r.size() >= 5)
            {
                const std::string key = fmt::format("node {} port {} prio {}", r[1], r[2], r[3]);
                peak[key] = std::max(peak[key], std::stod(r[4]));
            }
        }
        std::vector<std::pair<double, std::string>> order;
        for (const auto& [k, v] : peak)
        {
            order.emplace_back(-v, k);
        }
        std::sort(order.begin(), order.end());
        std::set<std::string> keep;
        for (size_t i = 0; i < order.size() && i < 8; ++i)
        {
            keep.insert(order[i].second);
        }
        for (const auto& r : rows)
        {
            if (r.size() >= 5)
            {
                const std::string key = fmt::format("node {} port {} prio {}", r[1], r[2], r[3]);
                if (keep.count(key))
                {
                    p.series[key].emplace_back(std::stod(r[0]) / 1e6, std::stod(r[4]) / 1024);
                }
            }
        }
        plots.push_back(p);
    }
    if (fs::exists(dir / "pfc.csv"))
    {
        // One row per (node, port, prio): a step that is high while paused.
        Plot p{"pause", "PFC pause timeline (high = paused)", "time (ms)", "port"};
        p.style = "steps";
        std::map<std::string, std::vector<std::pair<double, bool>>> events;
        for (const auto& r : ReadCsv(dir / "pfc.csv"))
        {
            if (r.size() >= 5)
            {
                events[fmt::format("node {} port {} prio {}", r[1], r[2], r[3])].emplace_back(
                    std::stod(r[0]) / 1e6, r[4] == "pause");
            }
        }
        double lane = 0;
        for (const auto& [key, ev] : events)
        {
            auto& s = p.series[key];
            s.emplace_back(0, lane);
            for (const auto& [t, paused] : ev)
            {
                s.emplace_back(t, lane + (paused ? 0.8 : 0));
            }
            s.emplace_back(summary.value("sim_time_s", 0.0) * 1e3, lane);
            lane += 1;
        }
        p.extra += "set ytics 1\n";
        plots.push_back(p);
    }
    if (fs::exists(dir / "fct.csv"))
    {
        Plot p{"fct-slowdown", "FCT slowdown against flow size", "flow size (bytes)",
               "slowdown (FCT / ideal FCT)"};
        p.style = "points pt 7 ps 0.6";
        p.extra += "set logscale x\nset logscale y\n";
        for (const auto& r : ReadCsv(dir / "fct.csv"))
        {
            if (r.size() >= 9)
            {
                p.series["flows"].emplace_back(std::stod(r[4]), std::stod(r[8]));
            }
        }
        if (!p.series.empty()) // completed flows only: a run may have none
        {
            plots.push_back(p);
        }
    }
    if (fs::exists(dir / "rate.csv"))
    {
        // A log scale: a flow starts at line rate and DCQCN cuts it by orders of magnitude.
        // Mb/s on links below 10 Gb/s (the emulator's), else Gb/s.
        const auto rows = ReadCsv(dir / "rate.csv");
        double peak = 0;
        for (const auto& r : rows)
        {
            peak = r.size() >= 4 ? std::max(peak, std::stod(r[3])) : peak;
        }
        const bool mbps = peak < 10e9;
        Plot p{"dcqcn-rate", "DCQCN sending rate per QP", "time (ms)", mbps ? "Mb/s" : "Gb/s"};
        p.style = "steps";
        p.extra += "set logscale y\n";
        for (const auto& r : rows)
        {
            if (r.size() >= 4)
            {
                // A real endpoint's flow is named by its destination (peer) and that host's QP.
                const std::string name = r.size() >= 5 && !r[4].empty()
                                             ? fmt::format("h{} to h{} qp {}", r[1], r[4], r[2])
                                             : fmt::format("h{} qp {}", r[1], r[2]);
                p.series[name].emplace_back(std::stod(r[0]) / 1e6, std::stod(r[3]) / (mbps ? 1e6 : 1e9));
            }
        }
        if (p.series.size() > 16)
        {
            p.extra += "set key off\n";
        }
        plots.push_back(p);
    }
    for (const auto& p : plots)
    {
        if (Render(p, dir, gnuplot, err))
        {
            made.push_back("plots/" + p.name + ".png");
        }
    }

    // report.md: what ran, what came out, whether it met its expectations.
    std::ofstream md(dir / "report.md");
    md << "# " << summary.value("scenario", std::string("run")) << "\n\n";
    if (summary.contains("description") && !summary["description"].get<std::string>().empty())
    {
        md << summary["description"].get<std::string>() << "\n\n";
    }
    md << fmt::format("Fabric **{}**, seed {}, {:.6g} s simulated in {:.3g} s of wall time.\n\n",
                      summary.value("fabric", std::string("?")), summary.value("seed", 0),
                      summary.value("sim_time_s", 0.0), summary.value("wall_time_s", 0.0));
    if (summary.contains("totals"))
    {
        md << "| total | value |\n|---|---|\n";
        for (const auto& [k, v] : summary["totals"].items())
        {
            md << "| " << k << " | " << v.dump() << " |\n";
        }
        md << "\n";
    }
    if (summary.contains("flow_stats"))
    {
        const auto& f = summary["flow_stats"];
        // Only completed flows have an FCT: the throughputs and fct.csv's plot are theirs alone.
        md << fmt::format("Flows: {} completed, {} failed, {} pending (of {}); Jain fairness of "
                          "completed flows' throughputs {:.3f}.\n\n",
                          f.value("completed", 0), f.value("failed", 0), f.value("pending", 0),
                          f.value("count", 0), f.value("jain_throughput", 0.0));
    }
    if (summary.contains("lag"))
    {
        md << fmt::format("Lag of simulated time behind the wall clock: max {:.3f} ms, p99 {:.3f} ms; "
                          "timing {} (simulation thread: {}).\n\n",
                          summary["lag"].value("max_ms", 0.0), summary["lag"].value("p99_ms", 0.0),
                          summary.value("timing_faithful", true) ? "faithful" : "NOT faithful",
                          summary.value("scheduling", std::string("?")));
    }
    if (summary.contains("commands") && !summary["commands"].empty())
    {
        md << "## Commands\n\n";
        for (const auto& c : summary["commands"])
        {
            md << fmt::format("- `{}` on {}: exit {}", c.value("run", std::string()),
                              c.value("on", std::string()), c.value("exit_code", -1));
            if (c.contains("metrics") && !c["metrics"].empty())
            {
                md << " — " << c["metrics"].dump();
            }
            md << "\n";
        }
        md << "\n";
    }
    if (summary.contains("expect") && !summary["expect"].empty())
    {
        md << "## Expectations\n\n| metric | want | value | ok |\n|---|---|---|---|\n";
        for (const auto& e : summary["expect"])
        {
            md << "| " << e["metric"].get<std::string>() << " | " << e["want"].get<std::string>()
               << " | " << e["value"].dump() << " | " << (e["ok"].get<bool>() ? "yes" : "**NO**")
               << " |\n";
        }
        md << "\n";
    }
    if (!made.empty())
    {
        md << "## Plots\n\n";
        for (const auto& m : made)
        {
            md << "![" << m << "](" << m << ")\n\n";
        }
    }
    return made;
}

} // namespace fabemu
