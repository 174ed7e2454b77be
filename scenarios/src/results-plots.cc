#include "scenarios/src/results-plots.h"

#include "scenarios/src/results.h"

#include <fmt/format.h>
#include <sys/wait.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fcntl.h>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

namespace fabemu
{

namespace fs = std::filesystem;
using nlohmann::json;

std::string
HumanDuration(double s)
{
    const double a = std::fabs(s);
    if (a == 0)
    {
        return "0 s";
    }
    if (a < 1e-6)
    {
        return fmt::format("{:.3g} ns", s * 1e9);
    }
    if (a < 1e-3)
    {
        return fmt::format("{:.3g} us", s * 1e6);
    }
    if (a < 1)
    {
        return fmt::format("{:.3g} ms", s * 1e3);
    }
    return fmt::format("{:.3g} s", s);
}

double
Percentile(std::vector<double> v, double p)
{
    if (v.empty())
    {
        return std::numeric_limits<double>::quiet_NaN();
    }
    std::sort(v.begin(), v.end());
    const double pos = p * static_cast<double>(v.size() - 1);
    const size_t lo = static_cast<size_t>(std::floor(pos));
    const size_t hi = std::min(lo + 1, v.size() - 1);
    return v[lo] + (v[hi] - v[lo]) * (pos - static_cast<double>(lo));
}

std::string
HumanNumber(double x)
{
    if (std::isfinite(x) && x == std::round(x) && std::fabs(x) < 1e15)
    {
        return fmt::format("{}", static_cast<long long>(x));
    }
    std::string s = fmt::format("{:.4g}", x);
    const double back = std::strtod(s.c_str(), nullptr);
    if (back == std::round(back) && back != x)
    {
        s = fmt::format("{:.6g}", x); // 0.999983, not "1"
    }
    return s;
}

namespace
{

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

/// Eight colours that stay apart (Okabe-Ito, with black).
const char* const kColours[] = {"#0072B2", "#D55E00", "#009E73", "#CC79A7",
                                "#E69F00", "#56B4E9", "#000000", "#F0E442"};

struct Series
{
    std::string label;
    std::vector<std::pair<double, double>> points; ///< a NaN y ends a segment (a gap)
    std::string style;                             ///< "with ..." clause, without "with"
};

struct Figure
{
    std::string name;
    std::string title;
    std::string xlabel;
    std::string ylabel;
    bool logx = false;
    bool logy = false;
    bool key = true;
    std::string extra;          ///< more gnuplot settings (ytics, ...)
    std::vector<Series> series; ///< in legend order
    std::vector<Series> bands;  ///< filledcurves: points (x, low) and hi in hi[]
    std::vector<std::vector<double>> bandHigh;
    std::string caption;
    std::string emptyWhy;            ///< what an empty plot says in report.md
    double xmin = kNaN, xmax = kNaN; ///< forced x range (else the data's)
    double ymaxForced = kNaN;        ///< a value the axis must show too (headroom added above)
    double yAxisMax = kNaN;          ///< the top of the y axis as is (lanes), when above the data
    /// Vertical marks at x (the faults of the run): a dashed line and its label each.
    std::vector<std::pair<double, std::string>> marks;
};

std::string
Quote(const std::string& s)
{
    // Double quotes: a '\n' in a title starts a second line.
    std::string out;
    for (char c : s)
    {
        if (c == '"' || c == '\\')
        {
            out += '\\';
            out += c;
        }
        else if (c == '\n')
        {
            out += "\\n";
        }
        else
        {
            out += c;
        }
    }
    return "\"" + out + "\"";
}

struct Extent
{
    size_t n = 0;
    double xmin = INFINITY, xmax = -INFINITY, ymin = INFINITY, ymax = -INFINITY;
    void Add(double x, double y)
    {
        if (!std::isfinite(x) || !std::isfinite(y))
        {
            return;
        }
        ++n;
        xmin = std::min(xmin, x);
        xmax = std::max(xmax, x);
        ymin = std::min(ymin, y);
        ymax = std::max(ymax, y);
    }
    void Add(const Extent& e)
    {
        if (e.n)
        {
            n += e.n;
            xmin = std::min(xmin, e.xmin);
            xmax = std::max(xmax, e.xmax);
            ymin = std::min(ymin, e.ymin);
            ymax = std::max(ymax, e.ymax);
        }
    }
    json Json(const std::string& label) const
    {
        return {{"label", label}, {"n", n}, {"x", {xmin, xmax}}, {"y", {ymin, ymax}}};
    }
};

/// Axis ranges that show every point: linear axes over data >= 0 start at 0, every
/// axis leaves headroom above the largest value; log axes a margin on both sides.
/// Empty string when there is nothing to show (no point, or only zeros).
std::string
Axes(const Figure& f, const Extent& all, double& x0, double& x1, double& y0, double& y1)
{
    if (all.n == 0)
    {
        return f.emptyWhy.empty() ? "it has no data" : f.emptyWhy;
    }
    if (!f.logy && all.ymin >= 0 && all.ymax <= 0)
    {
        return "every value is 0";
    }
    x0 = std::isnan(f.xmin) ? all.xmin : f.xmin;
    x1 = std::isnan(f.xmax) ? all.xmax : f.xmax;
    if (f.logx)
    {
        x0 = x0 / 1.5;
        x1 = x1 * 1.5;
    }
    else if (x1 <= x0)
    {
        const double pad = x0 == 0 ? 1 : std::fabs(x0) * 0.1;
        x0 -= pad;
        x1 += pad;
    }
    if (f.logy)
    {
        y0 = all.ymin / 2;
        y1 = all.ymax * 2;
    }
    else
    {
        const double top = std::isnan(f.ymaxForced) ? all.ymax : std::max(all.ymax, f.ymaxForced);
        if (all.ymin >= 0)
        {
            y0 = 0;
            y1 = !std::isnan(f.yAxisMax) && f.yAxisMax > top ? f.yAxisMax : top * 1.12;
        }
        else
        {
            const double span = top - all.ymin;
            y0 = all.ymin - 0.08 * span;
            y1 = top + 0.12 * span;
        }
    }
    return {};
}

/// A gnuplot started on scripts: its process and the read end of its output.
struct GnuplotRun
{
    pid_t pid{-1};
    int fd{-1};
};

/// Starts one gnuplot on \p scripts, in that order, in folder \p in, no shell between
/// (the folder's name is the user's and may hold any character); pid -1 when it could not
/// start.
GnuplotRun
StartGnuplot(const fs::path& in, const std::vector<std::string>& scripts)
{
    std::vector<char*> argv{const_cast<char*>("gnuplot")};
    for (const auto& script : scripts)
    {
        argv.push_back(const_cast<char*>(script.c_str()));
    }
    argv.push_back(nullptr);
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0)
    {
        return {};
    }
    const pid_t pid = fork();
    if (pid < 0)
    {
        close(fds[0]);
        close(fds[1]);
        return {};
    }
    if (pid == 0)
    {
        dup2(fds[1], 1);
        dup2(fds[1], 2);
        close(fds[0]);
        close(fds[1]);
        if (chdir(in.c_str()) == 0)
        {
            execvp("gnuplot", argv.data());
        }
        _exit(127);
    }
    close(fds[1]);
    return {pid, fds[0]};
}

/// Waits for \p run to end; its output and errors in \p out. Its exit code, or -1 when it
/// did not start or did not exit.
int
FinishGnuplot(GnuplotRun run, std::string& out)
{
    if (run.pid < 0)
    {
        return -1;
    }
    char buf[256];
    for (ssize_t n; (n = read(run.fd, buf, sizeof buf)) != 0;)
    {
        if (n > 0)
        {
            out.append(buf, static_cast<size_t>(n));
        }
        else if (errno != EINTR)
        {
            break;
        }
    }
    close(run.fd);
    int status = 0;
    pid_t waited = 0;
    while ((waited = waitpid(run.pid, &status, 0)) < 0 && errno == EINTR)
    {
    }
    return waited == run.pid && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/// Writes plots/NAME.gp (and removes an older NAME.png). Returns "" when written, else why
/// there is nothing to draw.
std::string
WriteScript(const Figure& f, const fs::path& dir)
{
    Extent all;
    json check = {{"name", f.name}, {"logx", f.logx}, {"logy", f.logy}, {"series", json::array()}};
    auto extentOf = [](const Series& s) {
        Extent e;
        for (const auto& [x, y] : s.points)
        {
            e.Add(x, y);
        }
        return e;
    };
    for (const auto& s : f.series)
    {
        const Extent e = extentOf(s);
        all.Add(e);
        check["series"].push_back(e.Json(s.label));
    }
    for (size_t b = 0; b < f.bands.size(); ++b)
    {
        Extent e = extentOf(f.bands[b]);
        for (size_t i = 0; i < f.bands[b].points.size(); ++i)
        {
            e.Add(f.bands[b].points[i].first, f.bandHigh[b][i]);
        }
        all.Add(e);
        check["series"].push_back(e.Json(f.bands[b].label));
    }
    double x0 = 0, x1 = 0, y0 = 0, y1 = 0;
    const std::string why = Axes(f, all, x0, x1, y0, y1);
    const fs::path gp = dir / "plots" / (f.name + ".gp");
    const fs::path png = dir / "plots" / (f.name + ".png");
    if (!why.empty())
    {
        fs::remove(gp);
        fs::remove(png);
        return why;
    }
    check["x"] = {x0, x1};
    check["y"] = {y0, y1};
    {
        std::ofstream s(gp);
        s << "# Re-render with: gnuplot " << f.name << ".gp (in this folder)\n";
        s << "# fabemu-check: " << check.dump() << "\n";
        // fabemu renders a run's scripts in one gnuplot: none takes another's settings.
        s << "reset\n";
        s << "set terminal pngcairo size 1000,560 noenhanced\n";
        s << "set output '" << f.name << ".png'\n";
        s << "set title " << Quote(f.title) << "\nset xlabel " << Quote(f.xlabel) << "\nset ylabel "
          << Quote(f.ylabel) << "\nset grid\n";
        size_t longest = 0;
        for (const auto& se : f.series)
        {
            longest = std::max(longest, se.label.size());
        }
        // A long label beside the plot would squeeze it: below it then.
        s << (!f.key         ? "set key off\n"
              : longest > 36 ? "set key below\n"
                             : "set key outside right top\n");
        if (f.logx)
        {
            s << "set logscale x\n";
        }
        if (f.logy)
        {
            s << "set logscale y\n";
        }
        s << fmt::format("set xrange [{:.9g}:{:.9g}]\nset yrange [{:.9g}:{:.9g}]\n", x0, x1, y0,
                         y1);
        s << f.extra;
        for (const auto& [x, label] : f.marks)
        {
            if (x >= x0 && x <= x1)
            {
                s << fmt::format("set arrow from {0:.9g}, graph 0 to {0:.9g}, graph 1 nohead dt 2 "
                                 "lw 1.5 lc rgb '#555555' front\n"
                                 "set label {1} at {0:.9g}, graph 0.97 right rotate by 90 "
                                 "offset -0.6,0 textcolor rgb '#555555' front\n",
                                 x, Quote(label));
            }
        }
        size_t k = 0;
        auto block = [&](const std::vector<std::pair<double, double>>& pts,
                         const std::vector<double>* hi) {
            s << "$d" << k++ << " << EOD\n";
            for (size_t i = 0; i < pts.size(); ++i)
            {
                if (std::isnan(pts[i].second))
                {
                    s << "\n"; // a gap
                    continue;
                }
                s << fmt::format("{:.9g} {:.9g}", pts[i].first, pts[i].second);
                if (hi)
                {
                    s << fmt::format(" {:.9g}", (*hi)[i]);
                }
                s << "\n";
            }
            s << "EOD\n";
        };
        for (size_t b = 0; b < f.bands.size(); ++b)
        {
            block(f.bands[b].points, &f.bandHigh[b]);
        }
        for (const auto& se : f.series)
        {
            block(se.points, nullptr);
        }
        s << "plot ";
        k = 0;
        for (const auto& b : f.bands)
        {
            s << (k ? ", \\\n     " : "") << "$d" << k << " using 1:2:3 with " << b.style
              << " title " << Quote(b.label);
            ++k;
        }
        for (const auto& se : f.series)
        {
            s << (k ? ", \\\n     " : "") << "$d" << k << " using 1:2 with " << se.style
              << " title " << Quote(se.label);
            ++k;
        }
        s << "\n";
    }
    fs::remove(png);
    return {};
}

/// Draws \p figs: writes each one's script, then renders them all in one gnuplot, which
/// loads its libraries and fonts once (perm128's four plots in 0.13 s, where a gnuplot
/// each took 0.19-0.21 s on two cores). Where that one fails, each script again in a
/// gnuplot of its own, all at once, so that the others are drawn and the failing one is
/// named. Returns, by figure, "" when drawn, else why not.
std::vector<std::string>
Draw(const std::vector<Figure>& figs, const fs::path& dir, bool haveGnuplot, std::ostream& err)
{
    std::vector<std::string> why;
    std::vector<std::string> scripts;
    for (size_t i = 0; i < figs.size(); ++i)
    {
        why.push_back(WriteScript(figs[i], dir));
        if (why[i].empty() && !haveGnuplot)
        {
            why[i] = "gnuplot is not installed";
        }
        if (why[i].empty())
        {
            scripts.push_back(figs[i].name + ".gp");
        }
    }
    if (scripts.empty())
    {
        return why;
    }
    std::string together;
    bool drawn = FinishGnuplot(StartGnuplot(dir / "plots", scripts), together) == 0;
    for (size_t i = 0; i < figs.size() && drawn; ++i)
    {
        drawn = !why[i].empty() || fs::exists(dir / "plots" / (figs[i].name + ".png"));
    }
    if (drawn)
    {
        return why;
    }
    std::vector<GnuplotRun> runs(figs.size());
    for (size_t i = 0; i < figs.size(); ++i)
    {
        if (why[i].empty())
        {
            runs[i] = StartGnuplot(dir / "plots", {figs[i].name + ".gp"});
        }
    }
    for (size_t i = 0; i < figs.size(); ++i)
    {
        if (!why[i].empty())
        {
            continue;
        }
        std::string out;
        const int rc = FinishGnuplot(runs[i], out);
        if (rc != 0 || !fs::exists(dir / "plots" / (figs[i].name + ".png")))
        {
            err << "fabemu: gnuplot failed on plots/" << figs[i].name << ".gp: " << out << "\n";
            why[i] = "gnuplot failed";
        }
    }
    return why;
}

bool
GnuplotAvailable()
{
    return std::system("command -v gnuplot >/dev/null 2>&1") == 0;
}

double
Num(const std::string& s)
{
    return std::strtod(s.c_str(), nullptr);
}

/// The smallest positive step between successive times of one key: the sampling interval.
double
SampleStep(const std::map<long long, std::vector<double>>& timesByKey)
{
    double step = INFINITY;
    for (const auto& [k, ts] : timesByKey)
    {
        for (size_t i = 1; i < ts.size(); ++i)
        {
            if (ts[i] > ts[i - 1])
            {
                step = std::min(step, ts[i] - ts[i - 1]);
            }
        }
    }
    return step;
}

/// What a user knows a flow by.
struct FlowInfo
{
    std::string src, dst, op, state;
    double start = 0, end = 0; ///< seconds; end: completion, else the end of the run
    double bytes = 0;
};

std::map<long long, FlowInfo>
Flows(const json& summary)
{
    std::map<long long, FlowInfo> flows;
    const double simEnd = summary.value("sim_time_s", 0.0);
    if (!summary.contains("flows") || !summary["flows"].is_array())
    {
        return flows;
    }
    for (const auto& f : summary["flows"])
    {
        FlowInfo i;
        i.src = f.value("src", std::string("?"));
        i.dst = f.value("dst", std::string("?"));
        i.op = f.value("op", std::string("write"));
        i.state = f.value("state", std::string("completed"));
        i.start = f.value("start_s", 0.0);
        i.bytes = f.value("bytes", 0.0);
        i.end = f.contains("fct_s") ? i.start + f["fct_s"].get<double>() : simEnd;
        flows[f.value("id", -1LL)] = i;
    }
    return flows;
}

std::string
FlowLabel(long long id, const std::map<long long, FlowInfo>& flows)
{
    auto it = flows.find(id);
    if (it == flows.end())
    {
        return fmt::format("flow {}", id);
    }
    std::string l = fmt::format("flow {} {}→{}", id, it->second.src, it->second.dst);
    if (it->second.state != "completed")
    {
        l += " (" + it->second.state + ")";
    }
    return l;
}

/// Series with exactly the same points drawn as one, labelled by all of them ("flows
/// 0-3 ... same curve"), so no series hides another; the rest drawn widest first.
void
MergeIdentical(std::vector<Series>& series)
{
    std::vector<Series> out;
    std::vector<std::vector<std::string>> names;
    for (auto& s : series)
    {
        bool merged = false;
        for (size_t i = 0; i < out.size(); ++i)
        {
            if (out[i].points.size() == s.points.size() &&
                std::equal(out[i].points.begin(), out[i].points.end(), s.points.begin(),
                           [](const auto& a, const auto& b) {
                               return a.first == b.first &&
                                      (a.second == b.second ||
                                       (std::isnan(a.second) && std::isnan(b.second)));
                           }))
            {
                names[i].push_back(s.label);
                merged = true;
                break;
            }
        }
        if (!merged)
        {
            out.push_back(std::move(s));
            names.push_back({out.back().label});
        }
    }
    for (size_t i = 0; i < out.size(); ++i)
    {
        if (names[i].size() > 1)
        {
            std::string l = names[i][0];
            for (size_t j = 1; j < names[i].size(); ++j)
            {
                l += (j == names[i].size() - 1 ? " and " : ", ") + names[i][j];
            }
            out[i].label =
                names[i].size() == 2
                    ? fmt::format("{} ({} identical)", l, names[i].size())
                    : fmt::format("{} and {} more, identical", names[i][0], names[i].size() - 1);
        }
    }
    series = std::move(out);
}

/// Colours and widths: the first series drawn widest, so one that runs along
/// another still shows at its edges.
void
Style(std::vector<Series>& series, const std::string& kind, double extraWidth = 4)
{
    const size_t n = series.size();
    for (size_t i = 0; i < n; ++i)
    {
        const double step = n > 1 ? std::min(1.5, extraWidth / static_cast<double>(n - 1)) : 0;
        const double lw = 1.2 + step * static_cast<double>(n - 1 - i);
        series[i].style =
            fmt::format("{} lw {:.2g} lc rgb '{}' dt {}", kind, lw, kColours[i % 8], 1 + (i / 8));
    }
}

/// Percentile bands over many series sampled on a common x grid: p10-p90 band,
/// median line, min and max as thin lines.
void
Bands(Figure& f, const std::vector<double>& xs, const std::vector<std::vector<double>>& valuesAtX,
      const std::string& what)
{
    Series band{fmt::format("p10-p90 of {}", what),
                {},
                "filledcurves fc rgb '#A6CEE3' fs solid 0.6 noborder"};
    std::vector<double> hi;
    Series med{"median", {}, "lines lw 2 lc rgb '#0072B2'"};
    Series lo{"min", {}, "lines lw 1 lc rgb '#D55E00' dt 2"};
    Series mx{"max", {}, "lines lw 1 lc rgb '#009E73' dt 2"};
    for (size_t i = 0; i < xs.size(); ++i)
    {
        const auto& v = valuesAtX[i];
        if (v.empty())
        {
            for (auto* s : {&band, &med, &lo, &mx})
            {
                s->points.emplace_back(xs[i], kNaN);
            }
            hi.push_back(kNaN);
            continue;
        }
        band.points.emplace_back(xs[i], Percentile(v, 0.1));
        hi.push_back(Percentile(v, 0.9));
        med.points.emplace_back(xs[i], Percentile(v, 0.5));
        lo.points.emplace_back(xs[i], *std::min_element(v.begin(), v.end()));
        mx.points.emplace_back(xs[i], *std::max_element(v.begin(), v.end()));
    }
    f.bands.push_back(band);
    f.bandHigh.push_back(hi);
    f.series.push_back(mx);
    f.series.push_back(med);
    f.series.push_back(lo);
}

constexpr size_t kMaxLines = 8; ///< more series than this are drawn as percentile bands

int
PathMtu(const fs::path& dir)
{
    try
    {
        const YAML::Node y = YAML::LoadFile((dir / "scenario.resolved.yaml").string());
        if (y["fabric"] && y["fabric"]["mtu"])
        {
            return y["fabric"]["mtu"].as<int>();
        }
    }
    catch (const std::exception&)
    {
    }
    return 4096;
}

// ---------------------------------------------------------------- throughput

void
Throughput(const fs::path& dir, const json& summary, std::vector<Figure>& figs)
{
    const auto flows = Flows(summary);
    std::map<long long, std::vector<double>> times;
    std::map<long long, std::vector<std::pair<double, double>>> samples; // flow: (t_ns, gbps)
    for (const auto& r : ReadCsv(dir / "throughput.csv"))
    {
        if (r.size() >= 3)
        {
            const long long id = std::stoll(r[1]);
            times[id].push_back(Num(r[0]));
            samples[id].emplace_back(Num(r[0]), Num(r[2]));
        }
    }
    if (samples.empty())
    {
        return;
    }
    double step = SampleStep(times);
    if (!std::isfinite(step))
    {
        step = 10000;
    }
    double t0 = INFINITY, t1 = -INFINITY;
    std::vector<double> meanRates;
    for (const auto& [id, s] : samples)
    {
        t0 = std::min(t0, s.front().first - step);
        t1 = std::max(t1, s.back().first);
        double sum = 0;
        for (const auto& p : s)
        {
            sum += p.second;
        }
        if (sum > 0)
        {
            meanRates.push_back(sum / static_cast<double>(s.size()));
        }
    }
    t0 = std::max(0.0, t0);
    // The window: at least 32 packets of the median flow's mean rate (packet
    // quantisation under 1/32), at least 1/150 of the plot, at most 1/10 of it.
    const double span = t1 - t0;
    const double mtuBits = PathMtu(dir) * 8.0;
    const double medianGbps = meanRates.empty() ? 1 : Percentile(meanRates, 0.5);
    double window = std::max(32 * mtuBits / medianGbps, span / 150); // ns: bits / (Gb/s)
    window = std::min(window, span / 10);
    const long long k = std::max(1LL, std::llround(window / step));
    window = static_cast<double>(k) * step;

    Figure f;
    f.name = "throughput";
    f.xlabel = "time (ms)";
    f.ylabel = "Gb/s";
    f.xmin = t0 / 1e6;
    f.xmax = t1 / 1e6;
    // Each flow: the mean of its samples over windows of k intervals (aligned to the run).
    std::map<long long, std::vector<std::pair<double, double>>> averaged;
    for (const auto& [id, s] : samples)
    {
        std::map<long long, std::pair<double, int>> buckets;
        for (const auto& [t, g] : s)
        {
            const long long b = static_cast<long long>(std::floor((t - step / 2) / window));
            buckets[b].first += g;
            buckets[b].second += 1;
        }
        auto& out = averaged[id];
        for (const auto& [b, sum] : buckets)
        {
            // The window's middle, or the middle of the part of it the flow was there for.
            const double lo = std::max(static_cast<double>(b) * window, s.front().first - step);
            const double hi = std::min(static_cast<double>(b + 1) * window, s.back().first);
            out.emplace_back((lo + hi) / 2 / 1e6, sum.first / sum.second);
        }
    }
    const std::string windowText = HumanDuration(window * 1e-9);
    if (averaged.size() <= kMaxLines)
    {
        f.title =
            fmt::format("Throughput per flow (mean over {} windows; {} samples in throughput.csv)",
                        windowText, HumanDuration(step * 1e-9));
        for (const auto& [id, pts] : averaged)
        {
            f.series.push_back({FlowLabel(id, flows), pts, ""});
        }
        MergeIdentical(f.series);
        Style(f.series, "lines");
    }
    else
    {
        // Many flows: at each window, the distribution over the flows active in it.
        std::map<long long, std::vector<double>> at;
        for (const auto& [id, pts] : averaged)
        {
            for (const auto& [x, y] : pts)
            {
                at[std::llround(x * 1e6 / window - 0.5)].push_back(y);
            }
        }
        std::vector<double> xs;
        std::vector<std::vector<double>> vs;
        for (long long b = at.begin()->first; b <= at.rbegin()->first; ++b)
        {
            xs.push_back(std::clamp((static_cast<double>(b) + 0.5) * window / 1e6, f.xmin, f.xmax));
            vs.push_back(at.count(b) ? at[b] : std::vector<double>{});
        }
        f.title =
            fmt::format("Throughput of {} flows: spread over the flows active in each {} window",
                        averaged.size(), windowText);
        Bands(f, xs, vs, "flows");
    }
    f.caption = fmt::format("Throughput of each flow, the mean of its {} samples over {} windows "
                            "(throughput.csv keeps the raw samples).",
                            HumanDuration(step * 1e-9), windowText);
    figs.push_back(std::move(f));
}

// ---------------------------------------------------------------- queues

void
Queues(const fs::path& dir, const json& summary, std::vector<Figure>& figs)
{
    const bool ib = summary.value("fabric", std::string()) == "infiniband";
    struct Key
    {
        long long node, port, prio;
        bool operator<(const Key& o) const
        {
            return std::tie(node, port, prio) < std::tie(o.node, o.port, o.prio);
        }
    };
    std::map<Key, std::map<long long, double>> rows; // key: t_ns -> bytes
    std::map<long long, std::vector<double>> times;
    std::map<Key, double> peak;
    std::set<long long> allTimes;
    for (const auto& r : ReadCsv(dir / "queue.csv"))
    {
        if (r.size() >= 5)
        {
            const Key key{std::stoll(r[1]), std::stoll(r[2]), std::stoll(r[3])};
            const long long t = std::stoll(r[0]);
            rows[key][t] = Num(r[4]);
            peak[key] = std::max(peak[key], Num(r[4]));
            allTimes.insert(t);
        }
    }
    if (rows.empty())
    {
        return;
    }
    std::map<long long, std::vector<double>> one{{0, {}}};
    for (long long t : allTimes)
    {
        one[0].push_back(static_cast<double>(t));
    }
    double step = SampleStep(one);
    if (!std::isfinite(step))
    {
        step = 10000;
    }
    std::vector<std::pair<double, Key>> order;
    for (const auto& [k, v] : peak)
    {
        order.emplace_back(-v, k);
    }
    std::sort(order.begin(), order.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    std::set<Key> keep;
    for (size_t i = 0; i < order.size() && keep.size() < kMaxLines; ++i)
    {
        if (order[i].first < 0)
        {
            keep.insert(order[i].second);
        }
    }
    if (keep.empty())
    {
        return;
    }
    const long long first = *allTimes.begin();
    const long long st = std::llround(step);
    // The last instant sampled: the last row, or the sampling instant before the run's end
    // (not the end itself, which the sampler may not have reached).
    const long long simNs = std::llround(summary.value("sim_time_s", 0.0) * 1e9);
    const long long last = std::max<long long>(*allTimes.rbegin(), (simNs / st - 1) * st);
    Figure f;
    f.name = "queue";
    f.xlabel = "time (ms)";
    f.ylabel = "KB";
    f.xmin = 0;
    f.xmax = static_cast<double>(last) / 1e6;
    const std::string what =
        ib ? "Switch input buffer occupancy per VL" : "Switch egress queue depth";
    f.title = keep.size() < peak.size() ? fmt::format("{}: the {} busiest of {} (empty = 0)", what,
                                                      keep.size(), peak.size())
                                        : fmt::format("{} (empty = 0)", what);
    for (const Key& key : keep) // numeric order
    {
        Series s;
        s.label = ib ? fmt::format("node {} port {} VL {}", key.node, key.port, key.prio)
                     : fmt::format("node {} port {} prio {}", key.node, key.port, key.prio);
        const auto& r = rows[key];
        // The sampler writes only non-empty queues: every sampling instant it left out was 0.
        for (long long t = first - (first % st == 0 ? 0 : first % st); t <= last; t += st)
        {
            auto it = r.find(t);
            s.points.emplace_back(static_cast<double>(t) / 1e6,
                                  it == r.end() ? 0 : it->second / 1024);
        }
        f.series.push_back(std::move(s));
    }
    MergeIdentical(f.series);
    Style(f.series, "lines", 1.5);
    f.caption = fmt::format("{} every {}, the {} busiest; instants queue.csv leaves out (an empty "
                            "queue) are drawn as 0.",
                            what, HumanDuration(step * 1e-9), keep.size());
    figs.push_back(std::move(f));
}

// ---------------------------------------------------------------- PFC pauses

void
Pauses(const fs::path& dir, const json& summary, std::vector<Figure>& figs)
{
    struct Key
    {
        long long node, port, prio;
        bool operator<(const Key& o) const
        {
            return std::tie(node, port, prio) < std::tie(o.node, o.port, o.prio);
        }
    };
    std::map<Key, std::vector<std::pair<double, bool>>> events;
    for (const auto& r : ReadCsv(dir / "pfc.csv"))
    {
        if (r.size() >= 5)
        {
            events[{std::stoll(r[1]), std::stoll(r[2]), std::stoll(r[3])}].emplace_back(
                Num(r[0]) / 1e6, r[4] == "pause");
        }
    }
    if (events.empty())
    {
        return;
    }
    const double end =
        std::max(summary.value("sim_time_s", 0.0) * 1e3, events.begin()->second.back().first);
    // Busiest lanes first if there are too many to read: by time paused.
    constexpr size_t kMaxLanes = 24;
    std::vector<std::pair<double, Key>> order;
    for (const auto& [key, ev] : events)
    {
        double paused = 0, since = -1;
        for (const auto& [t, p] : ev)
        {
            if (p && since < 0)
            {
                since = t;
            }
            else if (!p && since >= 0)
            {
                paused += t - since;
                since = -1;
            }
        }
        paused += since >= 0 ? end - since : 0;
        order.emplace_back(-paused, key);
    }
    std::sort(order.begin(), order.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    std::set<Key> keep;
    for (size_t i = 0; i < order.size() && i < kMaxLanes; ++i)
    {
        keep.insert(order[i].second);
    }
    Figure f;
    f.name = "pause";
    f.xlabel = "time (ms)";
    f.ylabel = "";
    f.key = false;
    f.xmin = 0;
    f.xmax = end;
    f.title =
        keep.size() < events.size()
            ? fmt::format("PFC pauses sent by switches: the {} most paused of {} (port, priority) "
                          "lanes; high = paused",
                          keep.size(), events.size())
            : "PFC pauses sent by switches, one lane per (switch, port, priority); high = paused";
    std::string tics = "set ytics (";
    double lane = 0;
    for (const Key& key : keep)
    {
        Series s;
        s.label = fmt::format("node {} port {} prio {}", key.node, key.port, key.prio);
        s.style = fmt::format("steps lw 1.5 lc rgb '{}'", kColours[static_cast<size_t>(lane) % 8]);
        const double base = lane + 0.15;
        s.points.emplace_back(0, base);
        for (const auto& [t, paused] : events[key])
        {
            s.points.emplace_back(t, base + (paused ? 0.7 : 0));
        }
        s.points.emplace_back(end, s.points.back().second);
        tics += fmt::format("{}{} {}", lane ? ", " : "", Quote(s.label), lane + 0.5);
        f.series.push_back(std::move(s));
        lane += 1;
    }
    tics += ")\nset grid noytics\n";
    f.extra = tics;
    f.yAxisMax = lane * 1.04; // the axis ends just above the top lane's highest step
    f.caption = "PFC PAUSE frames sent by switches: each lane a (switch node, port, priority), "
                "high while paused.";
    figs.push_back(std::move(f));
}

// ---------------------------------------------------------------- FCT slowdown

void
Slowdown(const fs::path& /*dir: the flows are in summary.json*/, const json& summary,
         std::vector<Figure>& figs)
{
    std::vector<std::pair<double, double>> pts; // (bytes, slowdown)
    for (const auto& flow : summary.value("flows", json::array()))
    {
        // Every completed flow, RDMA or dma: summary.json has them all, fct.csv the RDMA ones.
        if (flow.value("state", std::string()) == "completed" && flow.contains("slowdown"))
        {
            pts.emplace_back(flow["bytes"].get<double>(), flow["slowdown"].get<double>());
        }
    }
    if (pts.empty())
    {
        Figure none;
        none.name = "fct-slowdown";
        none.emptyWhy = "no flow completed";
        figs.push_back(std::move(none));
        return;
    }
    const json stats = summary.value("flow_stats", json::object());
    const long long failed = stats.value("failed", 0LL);
    const long long pending = stats.value("pending", 0LL);
    std::string apart; // failed and pending flows have no FCT: counted apart
    if (failed + pending)
    {
        apart = failed && pending
                    ? fmt::format("{} failed and {} pending", failed, pending)
                    : fmt::format("{} {}", failed + pending, failed ? "failed" : "pending");
        apart += failed + pending == 1 ? " flow has no FCT and is not shown"
                                       : " flows have no FCT and are not shown";
    }
    std::set<double> sizes;
    for (const auto& p : pts)
    {
        sizes.insert(p.first);
    }
    Figure f;
    f.name = "fct-slowdown";
    if (sizes.size() >= 5 && pts.size() >= 20)
    {
        // HPCC / DCQCN papers' view: p50, p95, p99 of the slowdown per size bucket
        // (buckets of about equal counts), over the flows as points.
        std::sort(pts.begin(), pts.end());
        const size_t nb = std::min<size_t>(10, pts.size() / 10);
        Series dots{"each flow", pts, "points pt 7 ps 0.4 lc rgb '#BBBBBB'"};
        Series p50{"p50", {}, "linespoints lw 2 pt 7 lc rgb '#0072B2'"};
        Series p95{"p95", {}, "linespoints lw 2 pt 5 lc rgb '#E69F00'"};
        Series p99{"p99", {}, "linespoints lw 2 pt 9 lc rgb '#D55E00'"};
        for (size_t b = 0; b < nb; ++b)
        {
            const size_t lo = b * pts.size() / nb;
            const size_t hi = (b + 1) * pts.size() / nb;
            std::vector<double> sd, sz;
            for (size_t i = lo; i < hi; ++i)
            {
                sz.push_back(pts[i].first);
                sd.push_back(pts[i].second);
            }
            const double x = Percentile(sz, 0.5);
            p50.points.emplace_back(x, Percentile(sd, 0.5));
            p95.points.emplace_back(x, Percentile(sd, 0.95));
            p99.points.emplace_back(x, Percentile(sd, 0.99));
        }
        f.series = {dots, p50, p95, p99};
        f.logx = true;
        f.logy = true;
        f.xlabel = "flow size (bytes)";
        f.ylabel = "FCT slowdown (FCT / ideal FCT)";
        f.title =
            fmt::format("FCT slowdown by flow size, {} completed flows: p50, p95, p99 in {} size "
                        "buckets of ~{} flows{}",
                        pts.size(), nb, pts.size() / nb, apart.empty() ? "" : "\n" + apart);
        f.caption =
            fmt::format("FCT slowdown of the {} completed flows by size: p50, p95, p99 per size "
                        "bucket{}.",
                        pts.size(), apart.empty() ? "" : "; " + apart);
    }
    else
    {
        // Few sizes (an incast): the CDF of the slowdown.
        std::vector<double> sd;
        for (const auto& p : pts)
        {
            sd.push_back(p.second);
        }
        std::sort(sd.begin(), sd.end());
        Series cdf{"completed flows", {}, "steps lw 2 lc rgb '#0072B2'"};
        const double n = static_cast<double>(sd.size());
        cdf.points.emplace_back(sd.front(), 0.0);
        for (size_t i = 0; i < sd.size(); ++i)
        {
            cdf.points.emplace_back(sd[i], static_cast<double>(i + 1) / n);
        }
        const double lo = sd.front(), hi = sd.back();
        const double pad = hi > lo ? (hi - lo) * 0.08 : std::max(0.05, lo * 0.05);
        f.xmin = std::max(0.0, lo - pad);
        f.xmax = hi + pad;
        f.series = {cdf};
        f.key = false;
        f.ymaxForced = 1;
        f.xlabel = "FCT slowdown (FCT / ideal FCT)";
        f.ylabel = "fraction of completed flows";
        std::string sizeText;
        for (double s : sizes)
        {
            sizeText += (sizeText.empty() ? "" : ", ") + fmt::format("{:.4g} KB", s / 1024);
        }
        f.title =
            fmt::format("CDF of FCT slowdown: {} completed flow{} of {} (p50 {:.3g}, p99 {:.3g}){}",
                        sd.size(), sd.size() == 1 ? "" : "s", sizeText, Percentile(sd, 0.5),
                        Percentile(sd, 0.99), apart.empty() ? "" : "\n" + apart);
        f.caption = fmt::format("CDF of the FCT slowdown of the {} completed flows{}.", sd.size(),
                                apart.empty() ? "" : "; " + apart);
    }
    figs.push_back(std::move(f));
}

// ---------------------------------------------------------------- collectives

/// busBw against size, a line per job and algorithm (the mean over its iterations), as
/// nccl-tests' output is plotted. Needs two sizes or more: a sweep.
void
CollectiveBusBw(const fs::path& /*dir: the results are in summary.json*/, const json& summary,
                std::vector<Figure>& figs)
{
    std::map<std::string, std::map<double, std::vector<double>>> byLine; // label: size -> busBw
    std::set<double> sizes;
    size_t notDone = 0;
    for (const auto& c : summary.value("collectives", json::array()))
    {
        if (c.value("state", std::string()) != "completed")
        {
            ++notDone;
            continue;
        }
        const double bytes = c["bytes"].get<double>();
        sizes.insert(bytes);
        byLine[fmt::format("{} {} ({})", c["job"].get<std::string>(), c["op"].get<std::string>(),
                           c["algorithm"].get<std::string>())][bytes]
            .push_back(c["busbw_gbs"].get<double>());
    }
    Figure f;
    f.name = "collective-busbw";
    if (sizes.size() < 2)
    {
        f.emptyWhy = "one size only (bytes: {from, to, factor} sweeps sizes)";
        figs.push_back(std::move(f));
        return;
    }
    size_t colour = 0;
    for (const auto& [label, points] : byLine)
    {
        Series line{
            label, {}, fmt::format("linespoints lw 2 pt 7 lc rgb '{}'", kColours[colour++ % 8])};
        for (const auto& [bytes, values] : points)
        {
            double sum = 0;
            for (double v : values)
            {
                sum += v;
            }
            line.points.emplace_back(bytes, sum / values.size());
        }
        f.series.push_back(std::move(line));
    }
    f.logx = true;
    f.xlabel = "size (bytes)";
    f.ylabel = "busBw (GB/s)";
    const std::string apart =
        notDone ? fmt::format("; {} that did not complete have no busBw and are not shown", notDone)
                : "";
    f.title = fmt::format("Bus bandwidth by size, {} sizes{}", sizes.size(), apart);
    f.caption = fmt::format("busBw (nccl-tests' definition) of every job against its size, the "
                            "mean over its iterations{}.",
                            apart);
    figs.push_back(std::move(f));
}

/// Training steps: each step's time and the communication it exposed, per job, against the
/// iteration; the compute's time beside them.
void
TrainingSteps(const fs::path& /*dir: the results are in summary.json*/, const json& summary,
              std::vector<Figure>& figs)
{
    std::vector<std::string> jobs;
    std::map<std::string, std::vector<std::array<double, 3>>> byJob; // iteration, step, exposed
    size_t notDone = 0;
    for (const auto& st : summary.value("training", json::array()))
    {
        const std::string job = st["job"].get<std::string>();
        if (byJob.find(job) == byJob.end())
        {
            jobs.push_back(job);
            byJob[job];
        }
        if (st.value("state", std::string()) != "completed")
        {
            ++notDone;
            continue;
        }
        byJob[job].push_back({st["iteration"].get<double>(), st["step_s"].get<double>() * 1e3,
                              st["exposed_s"].get<double>() * 1e3});
    }
    Figure f;
    f.name = "training-steps";
    size_t colour = 0;
    for (const auto& job : jobs)
    {
        const std::string c = kColours[colour++ % 8];
        Series step{job + " step", {}, fmt::format("linespoints lw 2 pt 7 lc rgb '{}'", c)};
        Series exposed{job + " exposed communication",
                       {},
                       fmt::format("linespoints lw 2 dt 2 pt 5 lc rgb '{}'", c)};
        for (const auto& [it, stepMs, exposedMs] : byJob[job])
        {
            step.points.emplace_back(it, stepMs);
            exposed.points.emplace_back(it, exposedMs);
        }
        if (!step.points.empty())
        {
            f.series.push_back(std::move(step));
            f.series.push_back(std::move(exposed));
        }
    }
    if (f.series.empty())
    {
        f.emptyWhy = "no training step completed";
        figs.push_back(std::move(f));
        return;
    }
    f.xlabel = "iteration";
    f.ylabel = "time (ms)";
    f.extra = "set xtics 1\n";
    f.xmin = -0.5;
    double last = 0;
    f.ymaxForced = 0;
    for (const auto& [job, points] : byJob)
    {
        for (const auto& p : points)
        {
            last = std::max(last, p[0]);
            f.ymaxForced = std::max(f.ymaxForced, p[1]);
        }
    }
    f.xmax = last + 0.5;
    const std::string apart =
        notDone ? fmt::format("; {} that did not complete are not shown", notDone) : "";
    f.title = fmt::format("Training steps: step time and exposed communication{}", apart);
    f.caption = fmt::format("Each training job's step time (solid) and the part of it that "
                            "communication added to the compute (dashed), by iteration{}.",
                            apart);
    figs.push_back(std::move(f));
}

/// The loaded-latency curve: each memory target's median and p99 latency against the
/// bandwidth its workloads achieved (one point per workload; rates sweep the curve), with
/// the target's idle latency as a floor; one curve per target and mix (reads, pattern).
void
LoadedLatency(const fs::path& /*dir: the rows are in summary.json too*/, const json& summary,
              std::vector<Figure>& figs)
{
    std::vector<std::string> targets;
    std::map<std::string, std::vector<std::array<double, 4>>> rows; // gbs, p50, p99, idle
    std::map<std::string, int> swept; // rate-limited workloads of each curve
    for (const auto& m : summary.value("memory", json::array()))
    {
        if (m.value("requests", uint64_t{0}) == 0)
        {
            continue;
        }
        const std::string t =
            fmt::format("{}, {:.0f} % reads, {}", m["target"].get<std::string>(),
                        m["read_ratio"].get<double>() * 100, m["pattern"].get<std::string>());
        if (rows.find(t) == rows.end())
        {
            targets.push_back(t);
        }
        swept[t] += m.value("offered_gbs", 0.0) > 0 ? 1 : 0;
        rows[t].push_back({m["gbs"].get<double>(), m["p50_ns"].get<double>(),
                           m["p99_ns"].get<double>(), m["idle_ns"].get<double>()});
    }
    Figure f;
    f.name = "loaded-latency";
    size_t colour = 0;
    for (const auto& t : targets)
    {
        auto& points = rows[t];
        std::sort(points.begin(), points.end());
        const std::string c = kColours[colour++ % 8];
        // A line joins a sweep of offered rates; points of unlike runs (alone, shared) stand
        // apart.
        const std::string with = swept[t] >= 2 ? "linespoints" : "points";
        Series p50{t + " p50", {}, fmt::format("{} lw 2 pt 7 lc rgb '{}'", with, c)};
        Series p99{t + " p99", {}, fmt::format("{} lw 2 dt 2 pt 5 lc rgb '{}'", with, c)};
        Series idle{t + " idle", {}, fmt::format("lines lw 1 dt 3 lc rgb '{}'", c)};
        for (const auto& [gbs, median, tail, floor] : points)
        {
            p50.points.emplace_back(gbs, median);
            p99.points.emplace_back(gbs, tail);
        }
        idle.points = {{0, points.front()[3]}, {points.back()[0], points.front()[3]}};
        f.series.push_back(std::move(p50));
        f.series.push_back(std::move(p99));
        f.series.push_back(std::move(idle));
    }
    if (f.series.empty())
    {
        f.emptyWhy = "no memory request completed";
        figs.push_back(std::move(f));
        return;
    }
    f.xlabel = "achieved bandwidth (GB/s)";
    f.ylabel = "load latency (ns)";
    f.xmin = 0;
    f.ymaxForced = 0;
    f.title = "Loaded latency: latency against achieved bandwidth";
    f.caption = "Each memory target's median (solid) and p99 (dashed) load latency against the "
                "bandwidth its workloads achieved, one point per workload and a curve per mix of "
                "reads and access pattern (points alone unless the workloads sweep offered "
                "rates), with its idle latency (dotted).";
    figs.push_back(std::move(f));
}

/// Each rank's progress: the transfers that have arrived at it (collective-steps.csv) over
/// time, a staircase per rank of every job in the scenario's order (eight at most).
void
CollectiveSteps(const fs::path& dir, const json& summary, std::vector<Figure>& figs)
{
    std::vector<std::string> jobs; // in the scenario's order
    for (const auto& c : summary.value("collectives", json::array()))
    {
        const std::string job = c.value("job", std::string());
        if (std::find(jobs.begin(), jobs.end(), job) == jobs.end())
        {
            jobs.push_back(job);
        }
    }
    std::map<std::pair<size_t, std::string>, std::vector<double>> arrivals; // (job, rank): ms
    for (const auto& r : ReadCsv(dir / "collective-steps.csv"))
    {
        const auto job = std::find(jobs.begin(), jobs.end(), r.size() >= 8 ? r[0] : "");
        if (job == jobs.end() || r[7].empty())
        {
            continue; // posted, never arrived
        }
        arrivals[{static_cast<size_t>(job - jobs.begin()), r[3]}].push_back(Num(r[7]) * 1e3);
    }
    Figure f;
    f.name = "collective-steps";
    if (arrivals.empty())
    {
        f.emptyWhy = "no transfer of a collective arrived";
        figs.push_back(std::move(f));
        return;
    }
    size_t colour = 0;
    for (auto& [key, times] : arrivals)
    {
        if (colour == 8)
        {
            break;
        }
        std::sort(times.begin(), times.end());
        Series line{jobs.size() > 1 ? jobs[key.first] + " " + key.second : key.second,
                    {},
                    fmt::format("steps lw 2 lc rgb '{}'", kColours[colour++])};
        line.points.emplace_back(0.0, 0.0);
        for (size_t i = 0; i < times.size(); ++i)
        {
            line.points.emplace_back(times[i], static_cast<double>(i + 1));
        }
        f.series.push_back(std::move(line));
    }
    f.xlabel = "simulated time (ms)";
    f.ylabel = "transfers arrived at the rank";
    f.title = fmt::format("Each rank's transfers arrived: {} of {} ranks{}", f.series.size(),
                          arrivals.size(), jobs.size() > 1 ? " (job rank)" : "");
    f.caption = "How far each rank is through its collectives' steps: the transfers that have "
                "arrived at it over time (collective-steps.csv; every transfer is a slice in "
                "trace.json, which Perfetto opens).";
    figs.push_back(std::move(f));
}

// ---------------------------------------------------------------- DCQCN rates

/// A QP of rate.csv: the flow it belongs to, and whether it is the flow's sending side.
struct RateQp
{
    long long flow = -1;
    bool sends = true;
};

/// Each simulated flow's QPs by (host, qpn): hosts number their QPs from 17 in the order
/// flows start (each flow one QP on its source, then one on its destination); the data
/// comes from the source's QP (the destination's for a READ).
std::map<std::pair<long long, long long>, RateQp>
FlowQps(const std::map<long long, FlowInfo>& flows)
{
    std::map<std::pair<long long, long long>, RateQp> qps;
    std::vector<std::pair<double, long long>> order;
    for (const auto& [id, f] : flows)
    {
        order.emplace_back(f.start, id);
    }
    std::sort(order.begin(), order.end());
    std::map<long long, long long> next;
    auto hostIndex = [](const std::string& h) {
        return h.size() > 1 && h[0] == 'h' ? std::stoll(h.substr(1)) : -1;
    };
    for (const auto& [start, id] : order)
    {
        const FlowInfo& f = flows.at(id);
        const long long a = hostIndex(f.src), b = hostIndex(f.dst);
        if (a < 0 || b < 0)
        {
            continue;
        }
        const bool read = f.op == "read";
        long long& qa = next.try_emplace(a, 17).first->second;
        qps[{a, qa++}] = {id, !read};
        long long& qb = next.try_emplace(b, 17).first->second;
        qps[{b, qb++}] = {id, read};
    }
    return qps;
}

/// One sending QP's rate over time, in the plot's unit.
struct RateLine
{
    std::string label;
    std::vector<std::pair<double, double>> pts;
    double end = 0;
    long long sortKey = 0;
};

/// rate.csv's rows as one line per sending QP (a real endpoint's flow: its host,
/// destination and the destination's QP), each held to its flow's end, in flow order.
std::vector<RateLine>
RateLines(const std::vector<std::vector<std::string>>& rows, const json& summary, double unit)
{
    const auto flows = Flows(summary);
    const auto qps = FlowQps(flows);
    const double simEnd = summary.value("sim_time_s", 0.0);
    std::map<std::string, RateLine> lines;
    for (const auto& r : rows)
    {
        if (r.size() < 4)
        {
            continue;
        }
        const long long host = std::stoll(r[1]), qpn = std::stoll(r[2]);
        RateLine* l = nullptr;
        if (r.size() >= 5 && !r[4].empty())
        {
            l = &lines[fmt::format("e{} {} {}", host, r[4], qpn)];
            l->label = fmt::format("h{} to h{} qp {}", host, r[4], qpn); // the destination's QP
            l->end = simEnd;
            l->sortKey = 1000000 + host * 1000 + qpn;
        }
        else
        {
            auto it = qps.find({host, qpn});
            if (it != qps.end() && !it->second.sends)
            {
                continue; // the receiving side of a flow: it sends only ACKs
            }
            l = &lines[fmt::format("{} {}", host, qpn)];
            if (it != qps.end())
            {
                l->label = FlowLabel(it->second.flow, flows);
                l->end = flows.at(it->second.flow).end;
                l->sortKey = it->second.flow;
            }
            else
            {
                l->label = fmt::format("h{} qp {}", host, qpn);
                l->end = simEnd;
                l->sortKey = 2000000 + host * 1000 + qpn;
            }
        }
        l->pts.emplace_back(Num(r[0]) / 1e6, Num(r[3]) / unit);
    }
    std::vector<RateLine> ordered;
    for (auto& [k, l] : lines)
    {
        // Held to the flow's end: a QP whose rate never changed is a flat line, not a point.
        l.pts.emplace_back(std::max(l.end * 1e3, l.pts.back().first), l.pts.back().second);
        ordered.push_back(std::move(l));
    }
    std::sort(ordered.begin(), ordered.end(),
              [](const RateLine& a, const RateLine& b) { return a.sortKey < b.sortKey; });
    return ordered;
}

/// Many QPs: at each of 300 instants, the distribution of the rates of the QPs sending then.
void
RateBands(Figure& f, const std::vector<RateLine>& lines)
{
    std::vector<double> xs;
    std::vector<std::vector<double>> vs;
    const int n = 300;
    for (int i = 0; i <= n; ++i)
    {
        const double t = f.xmax * i / n;
        std::vector<double> v;
        for (const auto& l : lines)
        {
            if (t < l.pts.front().first || t > l.pts.back().first)
            {
                continue;
            }
            auto it = std::upper_bound(l.pts.begin(), l.pts.end(),
                                       std::make_pair(t, std::numeric_limits<double>::infinity()));
            v.push_back(std::prev(it)->second);
        }
        xs.push_back(t);
        vs.push_back(v);
    }
    Bands(f, xs, vs, "sending QPs");
}

void
Rates(const fs::path& dir, const json& summary, std::vector<Figure>& figs)
{
    const auto rows = ReadCsv(dir / "rate.csv");
    double peak = 0;
    for (const auto& r : rows)
    {
        peak = r.size() >= 4 ? std::max(peak, Num(r[3])) : peak;
    }
    const bool mbps = peak < 10e9;
    std::vector<RateLine> lines = RateLines(rows, summary, mbps ? 1e6 : 1e9);
    if (lines.empty())
    {
        return;
    }
    Figure f;
    f.name = "dcqcn-rate";
    f.xlabel = "time (ms)";
    f.ylabel = mbps ? "Mb/s" : "Gb/s";
    f.logy = true;
    f.xmin = 0;
    f.xmax = summary.value("sim_time_s", 0.0) * 1e3;
    if (lines.size() <= kMaxLines)
    {
        for (auto& l : lines)
        {
            f.series.push_back({l.label, std::move(l.pts), ""});
        }
        MergeIdentical(f.series);
        Style(f.series, "steps");
        f.title = "DCQCN sending rate of each flow (log scale)";
    }
    else
    {
        RateBands(f, lines);
        f.title = fmt::format("DCQCN sending rate of {} flows: spread over the flows sending at "
                              "each instant (log scale)",
                              lines.size());
    }
    f.caption =
        "DCQCN sending rate of each flow's sending QP (rate.csv), held until the flow ends.";
    figs.push_back(std::move(f));
}

} // namespace

std::string
DrawLinePlot(const LinePlot& p, const fs::path& dir, std::ostream& err)
{
    Figure f;
    f.name = p.name;
    f.title = p.title;
    f.xlabel = p.xlabel;
    f.ylabel = p.ylabel;
    f.key = p.lines.size() > 1;
    size_t colour = 0;
    for (const auto& [label, points] : p.lines)
    {
        f.series.push_back(
            {label, points,
             fmt::format("linespoints lw 2 pt 7 lc rgb '{}'", kColours[colour++ % 8])});
    }
    if (!p.xLabels.empty())
    {
        f.xmin = -0.5;
        f.xmax = static_cast<double>(p.xLabels.size()) - 0.5;
        std::vector<std::string> tics;
        for (size_t i = 0; i < p.xLabels.size(); ++i)
        {
            tics.push_back(fmt::format("{} {}", Quote(p.xLabels[i]), i));
        }
        f.extra = fmt::format("set xtics ({})\n", fmt::join(tics, ", "));
    }
    fs::create_directories(dir / "plots");
    return Draw({f}, dir, GnuplotAvailable(), err).front();
}

PlotOutcome
RenderPlots(const fs::path& dir, const json& summary, std::ostream& err)
{
    PlotOutcome out;
    fs::create_directories(dir / "plots");
    for (const char* name :
         {"throughput", "queue", "pause", "fct-slowdown", "dcqcn-rate", "collective-busbw",
          "collective-steps", "training-steps", "loaded-latency"})
    {
        fs::remove(dir / "plots" / (std::string(name) + ".gp")); // an older rendering's
        fs::remove(dir / "plots" / (std::string(name) + ".png"));
    }
    const bool gnuplot = GnuplotAvailable();
    if (!gnuplot)
    {
        err << "fabemu report: gnuplot is not installed; plot scripts are written, no PNGs\n";
    }
    std::vector<Figure> figs;
    using Maker = void (*)(const fs::path&, const json&, std::vector<Figure>&);
    const std::pair<const char*, Maker> makers[] = {{"throughput.csv", Throughput},
                                                    {"queue.csv", Queues},
                                                    {"pfc.csv", Pauses},
                                                    {"fct.csv", Slowdown},
                                                    {"rate.csv", Rates},
                                                    {"collectives.csv", CollectiveBusBw},
                                                    {"collective-steps.csv", CollectiveSteps},
                                                    {"training.csv", TrainingSteps},
                                                    {"memory.csv", LoadedLatency}};
    for (const auto& [csv, make] : makers)
    {
        if (fs::exists(dir / csv))
        {
            make(dir, summary, figs);
        }
    }
    // The run's faults (faults.csv: time_s,link,kind,value) marked on every plot over time.
    std::vector<std::pair<double, std::string>> faults;
    if (fs::exists(dir / "faults.csv"))
    {
        for (const auto& r : ReadCsv(dir / "faults.csv"))
        {
            if (r.size() == 4)
            {
                faults.emplace_back(Num(r[0]), fmt::format("{} {} {}", r[1], r[2], r[3]));
            }
        }
    }
    for (auto& f : figs)
    {
        if (f.xlabel == "time (ms)" || f.xlabel == "simulated time (ms)")
        {
            // Said in the caption only when one falls inside the data's time span.
            double x0 = std::numeric_limits<double>::infinity();
            double x1 = -x0;
            for (const auto& se : f.series)
            {
                for (const auto& [x, y] : se.points)
                {
                    x0 = std::min(x0, x);
                    x1 = std::max(x1, x);
                }
            }
            bool inside = false;
            for (const auto& [t, label] : faults)
            {
                f.marks.emplace_back(t * 1e3, label);
                inside = inside || (t * 1e3 >= x0 && t * 1e3 <= x1);
            }
            if (inside && f.caption.find("Dashed") == std::string::npos)
            {
                f.caption += " Dashed lines: the faults (faults.csv).";
            }
        }
    }
    const std::vector<std::string> why = Draw(figs, dir, gnuplot, err);
    for (size_t i = 0; i < figs.size(); ++i)
    {
        const Figure& f = figs[i];
        if (why[i].empty())
        {
            out.made.push_back("plots/" + f.name + ".png");
            out.captions.push_back(f.caption);
        }
        else if (why[i] != "gnuplot is not installed" && why[i] != "gnuplot failed")
        {
            out.omitted.push_back(fmt::format("plots/{}.png: left out, {}", f.name, why[i]));
        }
    }
    return out;
}

} // namespace fabemu
