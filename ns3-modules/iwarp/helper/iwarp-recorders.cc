#include "ns3/iwarp-recorders.h"

#include "ns3/simulator.h"

#include <algorithm>

namespace ns3
{

IwarpQueueSampler::IwarpQueueSampler(const IwarpFabricHelper& fabric, std::ostream& out,
                                     Time interval, uint32_t context)
    : m_fabric(fabric),
      m_out(out),
      m_interval(interval),
      m_wasBusy(fabric.GetSwitchPorts().size(), false)
{
    // Each sample schedules the next in its own context.
    if (context == Simulator::NO_CONTEXT)
    {
        Simulator::ScheduleNow(&IwarpQueueSampler::Sample, this);
    }
    else
    {
        Simulator::ScheduleWithContext(context, Time(0), &IwarpQueueSampler::Sample, this);
    }
}

void
IwarpQueueSampler::Sample()
{
    const int64_t now = Simulator::Now().GetNanoSeconds();
    const auto& ports = m_fabric.GetSwitchPorts();
    for (size_t i = 0; i < ports.size(); ++i)
    {
        const uint64_t bytes = ports[i].queue->GetNBytes();
        // A queue is written while busy and once more when it empties: the plot drops to 0.
        if (bytes > 0 || m_wasBusy[i])
        {
            m_out << now << ' ' << ports[i].node << ' ' << ports[i].port << " 0 " << bytes << '\n';
        }
        m_wasBusy[i] = bytes > 0;
        m_peak = std::max(m_peak, bytes);
    }
    Simulator::Schedule(m_interval, &IwarpQueueSampler::Sample, this);
}

} // namespace ns3
