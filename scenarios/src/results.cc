#include "scenarios/src/results.h"

#include "scenarios/src/results-plots.h"

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
    md << fmt::format("Fabric **{}**, seed {}, {} simulated in {} of wall time.\n\n",
                      summary.value("fabric", std::string("?")), summary.value("seed", 0),
                      HumanDuration(summary.value("sim_time_s", 0.0)),
                      HumanDuration(summary.value("wall_time_s", 0.0)));
    if (summary.contains("totals"))
    {
        md << "| total | value |\n|---|---|\n";
        for (const auto& [k, v] : summary["totals"].items())
        {
            md << "| " << k << " | " << Human(v) << " |\n";
        }
        md << "\n";
    }
    if (summary.contains("flow_stats"))
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
    if (summary.contains("commands") && !summary["commands"].empty())
    {
        md << "## Commands\n\n";
        for (const auto& c : summary["commands"])
        {
            md << fmt::format("- `{}` on {}: exit {}", c.value("run", std::string()),
                              c.value("on", std::string()), c.value("exit_code", -1));
            if (c.contains("metrics") && c["metrics"].is_object() && !c["metrics"].empty())
            {
                std::string m;
                for (const auto& [k, v] : c["metrics"].items())
                {
                    m += (m.empty() ? "" : ", ") + k + " " + Human(v);
                }
                md << " — " << m;
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
               << " | " << Human(e["value"]) << " | " << (e["ok"].get<bool>() ? "yes" : "**NO**")
               << " |\n";
        }
        md << "\n";
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
