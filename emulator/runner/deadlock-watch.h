// A deadlock noticed while the run goes on: the fabric is asked every Interval whether it
// is in one (Fabric::Deadlock); once the same cycle has lasted Persist with no byte
// received anywhere on the fabric (Fabric::Progress), the run stops there, since nothing
// can move again, unless a PFC watchdog may yet break it (Fabric::DeadlockMayClear). The
// summary's deadlock then says when.
#ifndef FABEMU_RUNNER_DEADLOCK_WATCH_H
#define FABEMU_RUNNER_DEADLOCK_WATCH_H

#include "emulator/runner/fabric.h"

#include "ns3/event-id.h"
#include "ns3/nstime.h"

#include <nlohmann/json.hpp>

namespace fabemu
{

class DeadlockWatch
{
  public:
    /// How often the fabric is asked, in simulated time.
    static constexpr int64_t kIntervalUs = 100;
    /// How long one cycle must last, with no byte received anywhere, before the run
    /// stops: longer than a QP's retransmission timeout (1 ms), so that a flow off the
    /// cycle that waits for its timer is not taken for stuck.
    static constexpr int64_t kPersistUs = 2000;

    /// Watches \p fabric (built; it must outlive the run) from the start of the run.
    explicit DeadlockWatch(const Fabric& fabric);
    ~DeadlockWatch();
    DeadlockWatch(const DeadlockWatch&) = delete;
    DeadlockWatch& operator=(const DeadlockWatch&) = delete;

    /// Whether it stopped the run.
    bool Stopped() const { return m_stopped; }
    /// \p deadlock (summary.json's, from the totals) with when the cycle was first seen
    /// (detected_at_s) and, if the run was stopped for it, stopped_at_s.
    void Annotate(nlohmann::json& deadlock) const;

  private:
    void Check();

    const Fabric& m_fabric;
    bool m_mayClear;
    ns3::EventId m_next;
    nlohmann::json m_cycle; ///< the cycle seen at the last check (null: none)
    ns3::Time m_since;      ///< when that cycle was first seen
    ns3::Time m_still;      ///< since when it has been there with nothing received
    uint64_t m_progress{0}; ///< Fabric::Progress at the last check
    bool m_stopped{false};
    ns3::Time m_stoppedAt;
};

} // namespace fabemu

#endif
