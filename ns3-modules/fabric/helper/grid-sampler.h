/*
 * Sampling on a fixed grid of instants (the start, then every interval) that
 * sleeps while there is nothing to see: after a sample that found everything
 * idle it schedules no more until Wake() reports activity, then resumes at the
 * next instant of the same grid. A recorder whose idle samples write nothing
 * (the queue samplers) writes exactly what sampling throughout would, with
 * far fewer events; in a real-time emulation an idle fabric then wakes nobody.
 *
 * What calls Wake() is needed only while it sleeps: a recorder that connects a
 * per-frame trace to Wake() gives SetWatch the connecting and disconnecting, and
 * the trace is connected only between an idle sample and the next sample, so a
 * busy fabric's frames call nobody. The samples are the same instants either way.
 */
#ifndef FABEMU_GRID_SAMPLER_H
#define FABEMU_GRID_SAMPLER_H

#include "ns3/nstime.h"
#include "ns3/simulator.h"

#include <algorithm>
#include <cstdint>
#include <functional>

namespace ns3
{

class GridSampler
{
  public:
    /// \p sample takes one sample and says whether anything is still busy. The
    /// samples run in \p context; Simulator::NO_CONTEXT (the default) leaves each in
    /// the context of what scheduled it, as Simulator::Schedule does. (A real-time
    /// simulator may give a context of its own a meaning: fabemu's runs its
    /// observers' events without waking for them.)
    GridSampler(Time interval, std::function<bool()> sample,
                uint32_t context = Simulator::NO_CONTEXT)
        : m_interval(interval),
          m_sample(std::move(sample)),
          m_context(context)
    {
    }

    /**
     * \brief Lets the sampler turn its wake-up source on and off: \p watch(true)
     * when a sample finds everything idle (Wake() is needed from then on),
     * \p watch(false) when a sample finds activity while watching (nothing need
     * call Wake() before the next sample, which is already scheduled). Called from
     * the sampling events only, never from inside Wake(), so a trace source may be
     * disconnected from within it. Before Start; not watching to begin with.
     */
    void SetWatch(std::function<void(bool)> watch) { m_watch = std::move(watch); }

    /// Whether the wake-up source is on (always true without SetWatch).
    bool Watching() const { return !m_watch || m_watching; }

    /// The first sample, now.
    void Start()
    {
        m_pending = true;
        ScheduleTake(Time(0));
    }

    /// Something happened that a sample may see: resume if asleep.
    void Wake()
    {
        if (m_pending)
        {
            return;
        }
        // The next instant of the grid after the latest sample, now or later.
        const int64_t step = m_interval.GetTimeStep();
        const int64_t since = (Simulator::Now() - m_last).GetTimeStep();
        const int64_t steps = std::max<int64_t>(1, (since + step - 1) / step);
        m_pending = true;
        ScheduleTake(m_last + TimeStep(steps * step) - Simulator::Now());
    }

    /// Samples taken so far.
    uint64_t Samples() const { return m_samples; }

  private:
    void ScheduleTake(Time delay)
    {
        if (m_context == Simulator::NO_CONTEXT)
        {
            Simulator::Schedule(delay, &GridSampler::Take, this);
        }
        else
        {
            Simulator::ScheduleWithContext(m_context, delay, &GridSampler::Take, this);
        }
    }

    void Take()
    {
        m_pending = false;
        m_last = Simulator::Now();
        ++m_samples;
        const bool busy = m_sample();
        if (busy)
        {
            m_pending = true;
            ScheduleTake(m_interval);
        }
        if (m_watch && busy == m_watching)
        {
            m_watching = !busy;
            m_watch(m_watching);
        }
    }

    Time m_interval;
    std::function<bool()> m_sample;
    std::function<void(bool)> m_watch;
    uint32_t m_context;
    bool m_watching{false}; ///< m_watch(true) was the last call
    Time m_last;            ///< the latest sample's instant (the grid's phase)
    bool m_pending{false};  ///< a sample is scheduled
    uint64_t m_samples{0};
};

} // namespace ns3

#endif
