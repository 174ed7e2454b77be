/*
 * How far simulated time lags the wall clock in a real-time run. On our
 * real-time simulator it is read from the simulator itself, which records how
 * late every event started (FabemuRealtimeSimulatorImpl::GetLateness): the lag
 * at every moment simulated time shows, and no event of its own, so an idle
 * simulation is not woken to be measured. On ns-3's RealtimeSimulatorImpl (the
 * benchmarks compare the two) it samples every millisecond instead, with an
 * event on the simulation thread, so a simulation that falls behind shows it.
 */
#ifndef FABEMU_LAG_MONITOR_H
#define FABEMU_LAG_MONITOR_H

#include "emulator/edge/realtime-simulator.h"

#include "ns3/nstime.h"
#include "ns3/ptr.h"

#include <cstdint>
#include <utility>
#include <vector>

namespace fabemu
{

class LagMonitor
{
  public:
    /// Starts measuring; call before Simulator::Run. Aborts when the simulator is
    /// not a real-time one (there is no lag to measure). \p interval: the sampling
    /// period on ns-3's simulator.
    void Start(ns3::Time interval = ns3::MilliSeconds(1));

    /// The largest lag and the latest (ns; read on the simulation thread, or after Run).
    int64_t MaxNs() const { return Record().MaxNs(); }
    int64_t LastNs() const { return Record().LastNs(); }

    struct Summary
    {
        double maxMs{0};
        double medianMs{0};
        double p99Ms{0};
        uint64_t measurements{0}; ///< events (or samples) measured
        /// The distribution, for a CSV: (a bucket's upper bound in ns, how many).
        std::vector<std::pair<int64_t, uint64_t>> distribution;
    };
    Summary Summarize() const;

  private:
    void Sample();
    const ns3::LatenessRecord& Record() const;

    ns3::Ptr<ns3::FabemuRealtimeSimulatorImpl> m_ours; ///< set: the simulator records the lag
    ns3::Time m_interval;
    ns3::LatenessRecord m_samples; ///< on ns-3's simulator
};

} // namespace fabemu

#endif
