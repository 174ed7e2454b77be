#include "lag-monitor.h"

#include "realtime-simulator.h"

#include "ns3/abort.h"
#include "ns3/realtime-simulator-impl.h"
#include "ns3/simulator.h"

#include <algorithm>

namespace fabemu
{

using namespace ns3;

void
LagMonitor::Start(Time interval)
{
    m_interval = interval;
    Simulator::Schedule(m_interval, &LagMonitor::Sample, this);
}

void
LagMonitor::Sample()
{
    Time wall;
    if (auto ours = DynamicCast<FabemuRealtimeSimulatorImpl>(Simulator::GetImplementation()))
    {
        wall = ours->RealtimeNow();
    }
    else if (auto ns3s = DynamicCast<RealtimeSimulatorImpl>(Simulator::GetImplementation()))
    {
        wall = ns3s->RealtimeNow();
    }
    else
    {
        NS_ABORT_MSG("LagMonitor: the simulator is not a real-time one");
    }
    m_samples.push_back((wall - Simulator::Now()).GetNanoSeconds());
    m_maxNs = std::max(m_maxNs, m_samples.back());
    Simulator::Schedule(m_interval, &LagMonitor::Sample, this);
}

LagMonitor::Summary
LagMonitor::Summarize() const
{
    Summary s;
    s.sortedNs = m_samples;
    std::sort(s.sortedNs.begin(), s.sortedNs.end());
    if (!s.sortedNs.empty())
    {
        s.maxMs = s.sortedNs.back() / 1e6;
        s.p99Ms = s.sortedNs[s.sortedNs.size() * 99 / 100] / 1e6;
    }
    return s;
}

} // namespace fabemu
