#include "emulator/runner/deadlock-watch.h"

#include "ns3/simulator.h"

namespace fabemu
{

using namespace ns3;

DeadlockWatch::DeadlockWatch(const Fabric& fabric)
    : m_fabric(fabric),
      m_mayClear(fabric.DeadlockMayClear())
{
    m_next = Simulator::Schedule(MicroSeconds(kIntervalUs), &DeadlockWatch::Check, this);
}

DeadlockWatch::~DeadlockWatch()
{
    m_next.Cancel();
}

void
DeadlockWatch::Check()
{
    nlohmann::json now = m_fabric.Deadlock();
    const uint64_t progress = m_fabric.Progress();
    if (now.is_null() || now["cycle"] != (m_cycle.is_null() ? nlohmann::json() : m_cycle["cycle"]))
    {
        m_cycle = std::move(now); // a new cycle, or none
        m_since = Simulator::Now();
        m_still = m_since;
    }
    else if (progress != m_progress)
    {
        m_still = Simulator::Now(); // something moved: a buffer on it may yet drain
    }
    else if (!m_mayClear && Simulator::Now() - m_still >= MicroSeconds(kPersistUs))
    {
        m_progress = progress;
        m_stopped = true;
        m_stoppedAt = Simulator::Now();
        Simulator::Stop();
        return;
    }
    m_progress = progress;
    m_next = Simulator::Schedule(MicroSeconds(kIntervalUs), &DeadlockWatch::Check, this);
}

void
DeadlockWatch::Annotate(nlohmann::json& deadlock) const
{
    if (deadlock.is_null() || m_cycle.is_null() || deadlock["cycle"] != m_cycle["cycle"])
    {
        return; // none, or one that formed after the last check
    }
    deadlock["detected_at_s"] = m_since.GetSeconds();
    if (m_stopped)
    {
        deadlock["stopped_at_s"] = m_stoppedAt.GetSeconds();
    }
}

} // namespace fabemu
