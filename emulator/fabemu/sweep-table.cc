// sweep.csv and the sweep's plots, from each run's summary.json and DIR/<name>.done.
#include "emulator/fabemu/sweep.h"
#include "scenarios/src/results-plots.h"
#include "scenarios/src/scenario.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>
#include <map>
#include <sstream>

namespace fabemu
{

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace
{

/// What a metric is, for a plot's axis.
const std::map<std::string, std::string>&
MetricLabels()
{
    static const std::map<std::string, std::string> labels{
        {"flows_completed", "flows completed"},
        {"flows_failed", "flows failed"},
        {"fct_slowdown_p50", "FCT slowdown, median"},
        {"fct_slowdown_p99", "FCT slowdown, p99"},
        {"drops", "drops"},
        {"congestion_drops", "congestion drops"},
        {"pfc_pause_frames", "PFC pause frames"},
        {"ecn_marks", "ECN marks"},
        {"cnps", "CNPs"},
        {"busbw_gbs", "collective busBw (GB/s)"},
        {"sim_time_s", "simulated time (s)"},
        {"wall_time_s", "wall time (s)"},
    };
    return labels;
}

std::optional<double>
Number(const json& j, const json::json_pointer& at)
{
    if (!j.contains(at) || !j.at(at).is_number())
    {
        return std::nullopt;
    }
    return j.at(at).get<double>();
}

/// The lowest busBw among the collective jobs, each at its largest size: a cluster is as
/// fast as its slowest job. None when no collective completed.
std::optional<double>
SlowestBusBw(const json& summary)
{
    if (!summary.contains("collectives"))
    {
        return std::nullopt;
    }
    std::map<std::string, std::pair<double, double>> largest; // job -> (bytes, busBw)
    for (const auto& c : summary["collectives"])
    {
        if (c.value("state", std::string()) != "completed" || !c["busbw_gbs"].is_number())
        {
            continue;
        }
        const std::string job = c.value("job", std::string());
        const double bytes = c.value("bytes", 0.0);
        auto [it, fresh] = largest.try_emplace(job, bytes, c["busbw_gbs"].get<double>());
        if (!fresh && bytes >= it->second.first)
        {
            // Iterations of one size: the lowest of them.
            it->second.second = bytes > it->second.first
                                    ? c["busbw_gbs"].get<double>()
                                    : std::min(it->second.second, c["busbw_gbs"].get<double>());
            it->second.first = bytes;
        }
    }
    if (largest.empty())
    {
        return std::nullopt;
    }
    double low = INFINITY;
    for (const auto& [job, bb] : largest)
    {
        low = std::min(low, bb.second);
    }
    return low;
}

/// The metrics of one finished run, by SweepMetrics' names.
std::map<std::string, double>
RunMetrics(const json& s)
{
    std::map<std::string, double> m;
    auto put = [&m](const std::string& name, std::optional<double> v) {
        if (v)
        {
            m[name] = *v;
        }
    };
    using P = json::json_pointer;
    put("flows_completed", Number(s, P("/flow_stats/completed")));
    put("flows_failed", Number(s, P("/flow_stats/failed")));
    if (s.value("flow_stats", json::object()).value("completed", 0) > 0)
    {
        put("fct_slowdown_p50", Number(s, P("/flow_stats/fct_slowdown/median")));
        put("fct_slowdown_p99", Number(s, P("/flow_stats/fct_slowdown/p99")));
    }
    for (const char* t : {"drops", "congestion_drops", "pfc_pause_frames", "ecn_marks", "cnps"})
    {
        put(t, Number(s, P(std::string("/totals/") + t)));
    }
    put("busbw_gbs", SlowestBusBw(s));
    put("sim_time_s", Number(s, P("/sim_time_s")));
    put("wall_time_s", Number(s, P("/wall_time_s")));
    return m;
}

std::string
CsvField(const std::string& s)
{
    if (s.find_first_of(",\"\n") == std::string::npos)
    {
        return s;
    }
    std::string q = "\"";
    for (char c : s)
    {
        q += c == '"' ? std::string("\"\"") : std::string(1, c);
    }
    return q + "\"";
}

struct PlotSpec
{
    std::string metric;
    size_t x{0};
    std::optional<size_t> lines;
};

/// Parses "METRIC[,XKEY[,LINEKEY]]" against \p plan; throws std::invalid_argument.
PlotSpec
ParsePlotSpec(const std::string& spec, const SweepPlan& plan)
{
    std::vector<std::string> parts;
    std::stringstream ss(spec);
    for (std::string p; std::getline(ss, p, ',');)
    {
        parts.push_back(p);
    }
    if (parts.empty() || parts.size() > 3)
    {
        throw std::invalid_argument(
            fmt::format("--plot '{}' must be METRIC[,XKEY[,LINEKEY]]", spec));
    }
    PlotSpec p;
    p.metric = parts[0];
    if (!MetricLabels().count(p.metric))
    {
        const std::string close = Closest(p.metric, SweepMetrics());
        throw std::invalid_argument(fmt::format(
            "--plot '{}': unknown metric '{}'{}", spec, p.metric,
            close.empty() ? fmt::format(" (metrics: {})", fmt::join(SweepMetrics(), ", "))
                          : fmt::format("; did you mean '{}'?", close)));
    }
    if (plan.grid.empty())
    {
        throw std::invalid_argument(
            fmt::format("--plot '{}': the sweep has no --grid key to plot against", spec));
    }
    std::vector<std::string> keys;
    for (const auto& a : plan.grid)
    {
        keys.push_back(a.key);
    }
    auto axis = [&](const std::string& key) -> size_t {
        const auto it = std::find(keys.begin(), keys.end(), key);
        if (it == keys.end())
        {
            throw std::invalid_argument(
                fmt::format("--plot '{}': '{}' is not a --grid key (grid keys: {})", spec, key,
                            fmt::join(keys, ", ")));
        }
        return static_cast<size_t>(it - keys.begin());
    };
    p.x = parts.size() > 1 ? axis(parts[1]) : 0;
    if (parts.size() > 2)
    {
        p.lines = axis(parts[2]);
        if (*p.lines == p.x)
        {
            throw std::invalid_argument(
                fmt::format("--plot '{}': the x key and the line key are the same", spec));
        }
    }
    else if (parts.size() == 1 && keys.size() > 1)
    {
        p.lines = 1;
    }
    return p;
}

bool
AllNumbers(const std::vector<std::string>& values)
{
    for (const auto& v : values)
    {
        char* end = nullptr;
        std::strtod(v.c_str(), &end);
        if (v.empty() || *end != '\0')
        {
            return false;
        }
    }
    return true;
}

} // namespace

std::optional<RunEnd>
ReadRunEnd(const fs::path& dir, const SweepRun& run)
{
    try
    {
        std::ifstream in(dir / (run.name + ".done"));
        if (in)
        {
            const json d = json::parse(in);
            return RunEnd{d.at("exit").get<int>(), d.at("wall_time_s").get<double>()};
        }
    }
    catch (const std::exception&)
    {
    }
    return std::nullopt;
}

std::vector<SweepRow>
ReadSweepRows(const fs::path& dir, const SweepPlan& plan)
{
    std::vector<SweepRow> rows;
    for (const auto& run : plan.runs)
    {
        SweepRow row;
        if (const auto end = ReadRunEnd(dir, run))
        {
            row.exit = end->exit;
            try
            {
                std::ifstream summary(dir / run.name / "summary.json");
                if (summary)
                {
                    row.metrics = RunMetrics(json::parse(summary));
                }
            }
            catch (const std::exception&)
            {
                row = SweepRow{}; // a half-written file: the run counts as not finished
            }
        }
        rows.push_back(std::move(row));
    }
    return rows;
}

const std::vector<std::string>&
SweepMetrics()
{
    static const std::vector<std::string> names{
        "flows_completed",  "flows_failed", "fct_slowdown_p50",
        "fct_slowdown_p99", "drops",        "congestion_drops",
        "pfc_pause_frames", "ecn_marks",    "cnps",
        "busbw_gbs",        "sim_time_s",   "wall_time_s"};
    return names;
}

void
WriteSweepCsv(const fs::path& dir, const SweepPlan& plan, const std::vector<SweepRow>& rows)
{
    std::ofstream csv(dir / "sweep.csv");
    csv << "run";
    for (const auto& a : plan.grid)
    {
        csv << "," << CsvField(a.key);
    }
    csv << ",seed,exit";
    for (const auto& m : SweepMetrics())
    {
        csv << "," << m;
    }
    csv << "\n";
    for (size_t r = 0; r < plan.runs.size(); ++r)
    {
        const SweepRun& run = plan.runs[r];
        const SweepRow& row = rows[r];
        csv << CsvField(run.name);
        for (const auto& v : run.values)
        {
            csv << "," << CsvField(v);
        }
        csv << "," << (run.seed ? std::to_string(*run.seed) : "");
        csv << "," << (row.exit ? std::to_string(*row.exit) : "");
        for (const auto& m : SweepMetrics())
        {
            const auto it = row.metrics.find(m);
            csv << "," << (it == row.metrics.end() ? "" : fmt::format("{:.9g}", it->second));
        }
        csv << "\n";
    }
}

void
WriteSweepReport(const fs::path& dir, const SweepPlan& plan, const std::vector<SweepRow>& rows,
                 const std::vector<std::string>& plots)
{
    const auto finished = std::count_if(rows.begin(), rows.end(),
                                        [](const SweepRow& r) { return r.exit.has_value(); });
    std::vector<std::string> metrics; // the ones some run has
    for (const auto& m : SweepMetrics())
    {
        if (std::any_of(rows.begin(), rows.end(),
                        [&m](const SweepRow& r) { return r.metrics.count(m); }))
        {
            metrics.push_back(m);
        }
    }
    std::ofstream md(dir / "report.md");
    md << fmt::format("# Sweep of {}\n\n", fs::path(plan.file).filename().string());
    md << fmt::format("{} of {} runs finished. Scenario: `{}`", finished, plan.runs.size(),
                      plan.file);
    for (const auto& a : plan.grid)
    {
        md << fmt::format("; `{}` over {}", a.key, fmt::join(a.values, ", "));
    }
    md << (plan.seeds > 0 ? fmt::format("; seeds 1..{}", plan.seeds) : "") << ".\n";
    md << "Each run's results folder is DIR/<run>/, its output DIR/<run>.log; sweep.csv holds "
          "this table for scripts.\n\n";
    for (const auto& p : plots)
    {
        md << fmt::format("![{}]({})\n\n", fs::path(p).stem().string(), p);
    }
    std::vector<std::string> head{"run"};
    for (const auto& a : plan.grid)
    {
        head.push_back(a.key);
    }
    if (plan.seeds > 0)
    {
        head.push_back("seed");
    }
    head.push_back("exit");
    head.insert(head.end(), metrics.begin(), metrics.end());
    md << "| " << fmt::format("{}", fmt::join(head, " | ")) << " |\n|";
    for (size_t i = 0; i < head.size(); ++i)
    {
        md << "---|";
    }
    md << "\n";
    for (size_t r = 0; r < plan.runs.size(); ++r)
    {
        const auto& run = plan.runs[r];
        std::vector<std::string> cells{run.name};
        cells.insert(cells.end(), run.values.begin(), run.values.end());
        if (plan.seeds > 0)
        {
            cells.push_back(std::to_string(*run.seed));
        }
        cells.push_back(rows[r].exit ? std::to_string(*rows[r].exit) : "not run");
        for (const auto& m : metrics)
        {
            const auto it = rows[r].metrics.find(m);
            cells.push_back(it == rows[r].metrics.end() ? "-" : HumanNumber(it->second));
        }
        md << "| " << fmt::format("{}", fmt::join(cells, " | ")) << " |\n";
    }
}

std::string
CheckPlotSpec(const std::string& spec, const SweepPlan& plan)
{
    try
    {
        ParsePlotSpec(spec, plan);
        return "";
    }
    catch (const std::invalid_argument& e)
    {
        return e.what();
    }
}

std::vector<std::string>
DrawSweepPlots(const fs::path& dir, const SweepPlan& plan, const std::vector<SweepRow>& rows,
               const std::vector<std::string>& specs, std::ostream& err)
{
    std::vector<std::string> chosen = specs;
    if (chosen.empty() && !plan.grid.empty())
    {
        const bool busbw = std::any_of(rows.begin(), rows.end(), [](const SweepRow& r) {
            return r.metrics.count("busbw_gbs");
        });
        chosen.push_back(busbw ? "busbw_gbs" : "fct_slowdown_p99");
    }
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir / "plots", ec))
    {
        fs::remove(e.path(), ec); // an earlier collection's, maybe of other --plot specs
    }
    std::vector<std::string> drawn;
    for (const auto& spec : chosen)
    {
        const PlotSpec p = ParsePlotSpec(spec, plan);
        const GridAxis& xAxis = plan.grid[p.x];
        const bool numeric = AllNumbers(xAxis.values);
        LinePlot plot;
        plot.name = fmt::format("{}-vs-{}", p.metric, xAxis.key);
        std::replace_if(
            plot.name.begin(), plot.name.end(),
            [](char c) {
                return !std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-';
            },
            '_');
        plot.xlabel = xAxis.key;
        plot.ylabel = MetricLabels().at(p.metric);
        std::vector<std::string> averaged; // what each point is the mean over
        for (size_t a = 0; a < plan.grid.size(); ++a)
        {
            if (a != p.x && (!p.lines || a != *p.lines) && plan.grid[a].values.size() > 1)
            {
                averaged.push_back(plan.grid[a].key);
            }
        }
        if (plan.seeds > 1)
        {
            averaged.push_back(fmt::format("seeds 1..{}", plan.seeds));
        }
        plot.title = fmt::format(
            "{} against {}{}{}", plot.ylabel, xAxis.key,
            p.lines ? ", one line per " + plan.grid[*p.lines].key : "",
            averaged.empty() ? "" : fmt::format(" (mean over {})", fmt::join(averaged, ", ")));
        if (!numeric)
        {
            plot.xLabels = xAxis.values;
        }
        const std::vector<std::string> lineValues =
            p.lines ? plan.grid[*p.lines].values : std::vector<std::string>{""};
        for (const auto& lv : lineValues)
        {
            std::vector<std::pair<double, double>> points;
            for (size_t xi = 0; xi < xAxis.values.size(); ++xi)
            {
                double sum = 0;
                size_t n = 0;
                for (size_t r = 0; r < plan.runs.size(); ++r)
                {
                    const auto& run = plan.runs[r];
                    const auto it = rows[r].metrics.find(p.metric);
                    if (run.values[p.x] == xAxis.values[xi] &&
                        (!p.lines || run.values[*p.lines] == lv) && it != rows[r].metrics.end())
                    {
                        sum += it->second;
                        ++n;
                    }
                }
                if (n > 0)
                {
                    points.emplace_back(numeric ? std::strtod(xAxis.values[xi].c_str(), nullptr)
                                                : static_cast<double>(xi),
                                        sum / static_cast<double>(n));
                }
            }
            std::sort(points.begin(), points.end());
            plot.lines.emplace_back(p.lines ? plan.grid[*p.lines].key + "=" + lv : p.metric,
                                    points);
        }
        const std::string why = DrawLinePlot(plot, dir, err);
        if (why.empty())
        {
            drawn.push_back("plots/" + plot.name + ".png");
        }
        else
        {
            err << fmt::format("fabemu sweep: plots/{}.png left out: {}\n", plot.name, why);
        }
    }
    return drawn;
}

} // namespace fabemu
