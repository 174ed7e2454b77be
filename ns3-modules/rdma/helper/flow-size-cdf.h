/*
 * A flow-size distribution read from a CDF file in the format of the
 * DCQCN/HPCC simulators: one "size_bytes cumulative_percent" pair per line,
 * sizes and percents non-decreasing, the last percent 100. Sampling inverts
 * the CDF with linear interpolation between points, as those simulators do.
 */
#ifndef FABEMU_FLOW_SIZE_CDF_H
#define FABEMU_FLOW_SIZE_CDF_H

#include <cstdint>
#include <string>
#include <vector>

namespace ns3
{

class FlowSizeCdf
{
  public:
    /// Reads \p path; throws std::runtime_error naming the file and line of any fault.
    static FlowSizeCdf Load(const std::string& path);
    /// A size for the uniform variate \p u in [0, 1).
    uint64_t Sample(double u) const;
    /// The distribution's mean, bytes.
    double Mean() const;

  private:
    std::vector<std::pair<double, double>> m_points; ///< (size, cumulative fraction)
};

} // namespace ns3

#endif
