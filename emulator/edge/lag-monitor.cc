#include "emulator/edge/lag-monitor.h"

#include "ns3/abort.h"
#include "ns3/realtime-simulator-impl.h"
#include "ns3/simulator.h"

namespace fabemu
{

using namespace ns3;

void
LagMonitor::Start(Time interval)
{
    m_interval = interval;
    m_ours = DynamicCast<FabemuRealtimeSimulatorImpl>(Simulator::GetImplementation());
    if (m_ours)
    {
        return; // it records every event's lateness itself
    }
    NS_ABORT_MSG_UNLESS(DynamicCast<RealtimeSimulatorImpl>(Simulator::GetImplementation()),
                        "LagMonitor: the simulator is not a real-time one");
    Simulator::Schedule(m_interval, &LagMonitor::Sample, this);
}

void
LagMonitor::Sample()
{
    auto ns3s = DynamicCast<RealtimeSimulatorImpl>(Simulator::GetImplementation());
    m_samples.Add((ns3s->RealtimeNow() - Simulator::Now()).GetNanoSeconds());
    Simulator::Schedule(m_interval, &LagMonitor::Sample, this);
}

const LatenessRecord&
LagMonitor::Record() const
{
    return m_ours ? m_ours->GetLateness() : m_samples;
}

LagMonitor::Summary
LagMonitor::Summarize() const
{
    const LatenessRecord& r = Record();
    Summary s;
    s.maxMs = r.MaxNs() / 1e6;
    s.medianMs = r.QuantileNs(0.5) / 1e6;
    s.p99Ms = r.QuantileNs(0.99) / 1e6;
    s.measurements = r.Count();
    s.distribution = r.Buckets();
    return s;
}

} // namespace fabemu
