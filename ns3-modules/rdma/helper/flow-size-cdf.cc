#include "ns3/flow-size-cdf.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace ns3
{

FlowSizeCdf
FlowSizeCdf::Load(const std::string& path)
{
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec))
    {
        throw std::runtime_error(path + ": is a folder, not a flow-size CDF file");
    }
    std::ifstream in(path);
    if (!in)
    {
        throw std::runtime_error(path + ": cannot open flow-size CDF");
    }
    FlowSizeCdf cdf;
    std::string line;
    int lineNo = 0;
    while (std::getline(in, line))
    {
        ++lineNo;
        const auto hash = line.find('#');
        if (hash != std::string::npos)
        {
            line.resize(hash);
        }
        if (line.find_first_not_of(" \t\r") == std::string::npos)
        {
            continue; // blank or comment
        }
        std::istringstream fields(line);
        double size = 0;
        double percent = 0;
        std::string more;
        const std::string where = path + ":" + std::to_string(lineNo) + ": ";
        // Two numbers and nothing else: a word, a third field or binary bytes are refused.
        if (!(fields >> size >> percent) || (fields >> more) || !std::isfinite(size) ||
            !std::isfinite(percent))
        {
            throw std::runtime_error(where + "want 'size_bytes cumulative_percent'");
        }
        if (size < 0 || size > 1e15 || percent < 0 || percent > 100)
        {
            throw std::runtime_error(where + "size must be 0..1e15 bytes and percent in 0..100");
        }
        if (!cdf.m_points.empty() &&
            (size < cdf.m_points.back().first || percent / 100 < cdf.m_points.back().second))
        {
            throw std::runtime_error(where + "sizes and percents must not decrease");
        }
        cdf.m_points.emplace_back(size, percent / 100);
    }
    if (cdf.m_points.size() < 2 || cdf.m_points.back().second < 0.999999)
    {
        throw std::runtime_error(path + ": a CDF needs at least two points and must end at 100");
    }
    // Poisson arrivals come at load x rate / mean: a mean below a byte has no sense (0: no
    // time would pass between arrivals).
    if (cdf.Mean() < 1)
    {
        throw std::runtime_error(path + ": the mean flow size is below one byte");
    }
    return cdf;
}

uint64_t
FlowSizeCdf::Sample(double u) const
{
    if (u <= m_points.front().second)
    {
        return static_cast<uint64_t>(m_points.front().first);
    }
    for (size_t i = 1; i < m_points.size(); ++i)
    {
        const auto [s1, c1] = m_points[i];
        if (u <= c1)
        {
            const auto [s0, c0] = m_points[i - 1];
            const double frac = c1 > c0 ? (u - c0) / (c1 - c0) : 1;
            return static_cast<uint64_t>(s0 + frac * (s1 - s0) + 0.5);
        }
    }
    return static_cast<uint64_t>(m_points.back().first);
}

double
FlowSizeCdf::Mean() const
{
    // Sizes are uniform between points under linear interpolation.
    double mean = m_points.front().first * m_points.front().second;
    for (size_t i = 1; i < m_points.size(); ++i)
    {
        const double p = m_points[i].second - m_points[i - 1].second;
        mean += p * (m_points[i].first + m_points[i - 1].first) / 2;
    }
    return mean;
}

} // namespace ns3
