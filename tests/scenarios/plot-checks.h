// What a results folder's plots and report.md must satisfy: each plot's axes against its
// series (from the "# fabemu-check:" line of its .gp), numbers for people in report.md,
// every plot shown. Shared by scenario-plots (doctest) and check-plots (a command the
// e2e scenario tests run on VM scenarios' folders).
#ifndef FABEMU_TESTS_PLOT_CHECKS_H
#define FABEMU_TESTS_PLOT_CHECKS_H

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace plotcheck
{

inline bool
HaveGnuplot()
{
    return std::system("command -v gnuplot >/dev/null 2>&1") == 0;
}

inline std::string
ReadAll(const std::filesystem::path& p)
{
    std::ifstream in(p);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

/// The check line of plots/NAME.gp, or null.
inline nlohmann::json
CheckLine(const std::filesystem::path& gp)
{
    std::ifstream in(gp);
    for (std::string line; std::getline(in, line);)
    {
        const std::string tag = "# fabemu-check: ";
        if (line.rfind(tag, 0) == 0)
        {
            return nlohmann::json::parse(line.substr(tag.size()));
        }
    }
    return nullptr;
}

struct Findings
{
    std::vector<std::string> plots;    ///< the plots checked, by name
    std::vector<std::string> problems; ///< "PLOT: what is wrong"
};

/// Every plot in \p dir: axes non-degenerate, every series has points and sits inside
/// its axes, off the borders (a linear axis starting at 0 may hold zeros), not a plot of
/// zeros; and report.md: no long floats, every plot shown, every image it shows there.
inline Findings
CheckFolder(const std::filesystem::path& dir)
{
    namespace fs = std::filesystem;
    Findings f;
    auto bad = [&f](const std::string& plot, const std::string& what) {
        f.problems.push_back(plot + ": " + what);
    };
    if (!fs::is_directory(dir / "plots"))
    {
        bad("plots", "no plots/ folder");
        return f;
    }
    for (const auto& e : fs::directory_iterator(dir / "plots"))
    {
        if (e.path().extension() != ".gp")
        {
            continue;
        }
        const std::string name = e.path().stem().string();
        f.plots.push_back(name);
        const nlohmann::json c = CheckLine(e.path());
        if (!c.is_object())
        {
            bad(name, "no fabemu-check line");
            continue;
        }
        if (HaveGnuplot() && !fs::exists(dir / "plots" / (name + ".png")))
        {
            bad(name, "no PNG");
        }
        const double x0 = c["x"][0], x1 = c["x"][1], y0 = c["y"][0], y1 = c["y"][1];
        const bool logy = c["logy"];
        if (!(x0 < x1) || !(y0 < y1))
        {
            bad(name, "degenerate axes " + c.dump());
        }
        if (c["series"].empty())
        {
            bad(name, "no series");
            continue;
        }
        double dataMax = -INFINITY;
        size_t points = 0;
        for (const auto& s : c["series"])
        {
            const size_t n = s["n"];
            if (n == 0)
            {
                bad(name, "an empty series " + s.dump());
                continue;
            }
            points += n;
            const double ymin = s["y"][0], ymax = s["y"][1];
            const double xmin = s["x"][0], xmax = s["x"][1];
            dataMax = std::max(dataMax, ymax);
            if (xmin < x0 || xmax > x1)
            {
                bad(name, "a series outside the x axis " + s.dump());
            }
            const bool onBorder =
                logy ? !(ymax * 1.2 < y1) || !(ymin > y0 * 1.2)
                     : !(ymax < y1 - 0.03 * (y1 - y0)) || !(ymin > y0 || (ymin == 0 && y0 == 0));
            if (onBorder)
            {
                bad(name,
                    "a series on a border (no headroom) " + s.dump() + " in " + c["y"].dump());
            }
        }
        if (points < 2)
        {
            bad(name, "fewer than 2 points");
        }
        if (!logy && y0 == 0 && !(dataMax > 0))
        {
            bad(name, "a plot of zeros");
        }
    }
    const std::string md = ReadAll(dir / "report.md");
    std::smatch m;
    // Seven or more significant digits after the point (0.0007065 is rounded: four).
    if (std::regex_search(md, m, std::regex(R"(\d\.0*[1-9]\d{6,})")))
    {
        bad("report.md", "a number not rounded for people: " + m.str());
    }
    // Every run says in words what happened before its tables.
    if (fs::exists(dir / "summary.json") &&
        md.find("\n## What happened\n\n- **") == std::string::npos) // a run's, not a sweep's
    {
        bad("report.md", "has no \"What happened\" section");
    }
    for (const auto& e : fs::directory_iterator(dir / "plots"))
    {
        if (e.path().extension() == ".png" &&
            md.find("(plots/" + e.path().filename().string() + ")") == std::string::npos)
        {
            bad("report.md", "does not show " + e.path().filename().string());
        }
    }
    const std::regex img(R"(\]\((plots/[^)]+)\))");
    for (auto it = std::sregex_iterator(md.begin(), md.end(), img); it != std::sregex_iterator();
         ++it)
    {
        if (!fs::exists(dir / (*it)[1].str()))
        {
            bad("report.md", "shows a missing " + (*it)[1].str());
        }
    }
    return f;
}

} // namespace plotcheck

#endif
