// Units (bytes, times, rates) and the closest-word suggestion used by every message.
#include "scenarios/src/scenario-reader.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <regex>

namespace fabemu
{

// ---------------------------------------------------------------- units

/// "<number><unit>" with the number possibly fractional; false when it is not that shape.
bool
SplitQuantity(const std::string& text, double& number, std::string& unit)
{
    static const std::regex re(
        R"(^\s*([0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?)\s*([A-Za-z]*)\s*$)");
    std::smatch m;
    if (!std::regex_match(text, m, re))
    {
        return false;
    }
    // strtod, not stod: beyond double's range ("1e400") is "not a quantity" here, where stod
    // would throw std::out_of_range out of the loader.
    number = std::strtod(m[1].str().c_str(), nullptr);
    unit = m[2];
    return std::isfinite(number);
}

namespace
{

/// "<number><unit>" scaled by the unit's factor in \p scale; false for an unknown
/// unit or a value above \p max.
bool
Scaled(const std::string& text, const std::map<std::string, double>& scale, double max, double& v)
{
    double n = 0;
    std::string unit;
    if (!SplitQuantity(text, n, unit))
    {
        return false;
    }
    const auto it = scale.find(unit);
    if (it == scale.end() || n * it->second > max)
    {
        return false;
    }
    v = n * it->second;
    return true;
}

} // namespace

bool
ParseBytes(const std::string& text, uint64_t& bytes)
{
    static const std::map<std::string, double> scale{
        {"", 1},         {"B", 1},         {"KB", 1024.0},          {"KiB", 1024.0},
        {"MB", 1 << 20}, {"MiB", 1 << 20}, {"GB", double(1 << 30)}, {"GiB", double(1 << 30)}};
    double v = 0;
    if (!Scaled(text, scale, 1.8e19, v) || v != std::floor(v))
    {
        return false; // not a size, or a fraction of a byte
    }
    bytes = static_cast<uint64_t>(v);
    return true;
}

bool
ParseTime(const std::string& text, int64_t& ps)
{
    static const std::map<std::string, double> scale{{"ps", 1},   {"ns", 1e3}, {"us", 1e6},
                                                     {"ms", 1e9}, {"s", 1e12}, {"min", 60e12}};
    double v = 0;
    if (!Scaled(text, scale, 9e18, v))
    {
        return false;
    }
    ps = std::llround(v);
    return true;
}

bool
ParseRate(const std::string& text, uint64_t& bps)
{
    // Bits per second, and bytes per second as memory is quoted ("76.8GBps").
    static const std::map<std::string, double> scale{
        {"bps", 1}, {"Kbps", 1e3}, {"kbps", 1e3}, {"Mbps", 1e6}, {"Gbps", 1e9}, {"Tbps", 1e12},
        {"Bps", 8}, {"KBps", 8e3}, {"MBps", 8e6}, {"GBps", 8e9}, {"TBps", 8e12}};
    double v = 0;
    if (!Scaled(text, scale, 1.8e19, v) || v < 1)
    {
        return false;
    }
    bps = static_cast<uint64_t>(std::llround(v));
    return true;
}

std::string
Closest(const std::string& word, const std::vector<std::string>& options)
{
    auto distance = [](const std::string& a, const std::string& b) {
        std::vector<size_t> row(b.size() + 1);
        for (size_t j = 0; j <= b.size(); ++j)
        {
            row[j] = j;
        }
        for (size_t i = 1; i <= a.size(); ++i)
        {
            size_t diag = row[0];
            row[0] = i;
            for (size_t j = 1; j <= b.size(); ++j)
            {
                const size_t up = row[j];
                const bool same = std::tolower(a[i - 1]) == std::tolower(b[j - 1]);
                row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (same ? 0 : 1)});
                diag = up;
            }
        }
        return row[b.size()];
    };
    std::string best;
    size_t bestD = 4;
    for (const auto& o : options)
    {
        const size_t d = distance(word, o);
        if (d < bestD)
        {
            bestD = d;
            best = o;
        }
    }
    return best;
}

} // namespace fabemu
