/*
 * The plots of a results folder (internal to the scenario library): each drawn
 * from the folder's CSVs and summary.json, with axes that show all of its data.
 * Every plots/NAME.gp carries a "# fabemu-check: {json}" line: the axis ranges
 * and each series' point count and extents, which the plots test checks.
 */
#ifndef FABEMU_RESULTS_PLOTS_H
#define FABEMU_RESULTS_PLOTS_H

#include <nlohmann/json.hpp>

#include <filesystem>
#include <ostream>
#include <string>
#include <vector>

namespace fabemu
{

struct PlotOutcome
{
    std::vector<std::string> made;     ///< plots/NAME.png, in drawing order
    std::vector<std::string> captions; ///< one line per made plot: what it shows
    std::vector<std::string> omitted;  ///< "plots/NAME.png: why it was left out"
};

/// Writes plots/*.gp and (with gnuplot) plots/*.png in \p dir.
PlotOutcome RenderPlots(const std::filesystem::path& dir, const nlohmann::json& summary,
                        std::ostream& err);

/// A plot of lines through points, drawn as a results folder's plots are (every point
/// inside the axes, a "# fabemu-check:" line in its .gp).
struct LinePlot
{
    std::string name; ///< plots/NAME.png
    std::string title;
    std::string xlabel;
    std::string ylabel;
    std::vector<std::pair<std::string, std::vector<std::pair<double, double>>>> lines;
    std::vector<std::string> xLabels; ///< categorical x: label i sits at x = i
};

/// Writes DIR/plots/NAME.gp and (with gnuplot) NAME.png: "" when drawn, else why not.
std::string DrawLinePlot(const LinePlot& p, const std::filesystem::path& dir, std::ostream& err);

/// The \p p quantile (0..1) of \p v, linearly interpolated between ranks; NaN if empty.
/// The one definition the plots' percentile lines and report.md's FCT table use.
double Percentile(std::vector<double> v, double p);

/// A duration for people: "1.47 ms", "312 us", "2.5 s".
std::string HumanDuration(double seconds);

/// A number for people: integers as they are, else 4 significant digits (more
/// when 4 would round a non-integer to an integer: 0.999983, not 1).
std::string HumanNumber(double x);

} // namespace fabemu

#endif
