/*
 * How far simulated time lags the wall clock in a real-time run: a sample every
 * millisecond, taken on the simulation thread (an event of its own), so a
 * simulation that falls behind shows it in its samples. Works on our real-time
 * simulator and on ns-3's RealtimeSimulatorImpl (the benchmarks compare them).
 */
#ifndef FABEMU_LAG_MONITOR_H
#define FABEMU_LAG_MONITOR_H

#include "ns3/nstime.h"

#include <cstdint>
#include <vector>

namespace fabemu
{

class LagMonitor
{
  public:
    /// Schedules the first sample \p interval from now; call before Simulator::Run.
    /// Aborts when the simulator is not a real-time one (there is no lag to measure).
    void Start(ns3::Time interval = ns3::MilliSeconds(1));

    /// The samples in the order taken (ns; read on the simulation thread, or after Run).
    const std::vector<int64_t>& Samples() const { return m_samples; }
    int64_t MaxNs() const { return m_maxNs; }
    int64_t LastNs() const { return m_samples.empty() ? 0 : m_samples.back(); }

    struct Summary
    {
        double maxMs{0};
        double p99Ms{0};
        std::vector<int64_t> sortedNs; ///< the distribution, for a CSV
    };
    Summary Summarize() const;

  private:
    void Sample();

    ns3::Time m_interval;
    std::vector<int64_t> m_samples;
    int64_t m_maxNs{0};
};

} // namespace fabemu

#endif
