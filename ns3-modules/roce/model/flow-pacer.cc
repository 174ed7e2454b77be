#include "ns3/flow-pacer.h"

#include "ns3/roce-net-device.h"
#include "ns3/simulator-impl-cache.h"
#include "ns3/simulator.h"

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(FlowPacer);

TypeId
FlowPacer::GetTypeId()
{
    static TypeId tid = TypeId("ns3::FlowPacer")
                            .SetParent<Object>()
                            .SetGroupName("Roce")
                            .AddConstructor<FlowPacer>();
    return tid;
}

void
FlowPacer::SetLineRate(DataRate lineRate)
{
    m_lineRate = lineRate;
}

void
FlowPacer::SetRateControl(Ptr<DcqcnRateControl> cc)
{
    m_cc = cc;
    m_cc->Start(m_lineRate);
}

DataRate
FlowPacer::GetRate() const
{
    return m_cc ? m_cc->GetRate() : m_lineRate;
}

void
FlowPacer::OnSent(uint32_t frameBytes)
{
    const Time gap = m_txTimes.Get(GetRate(), RoceNetDevice::WireBytes(frameBytes));
    m_nextSend = std::max(SimulatorImplCache::Now(), m_nextSend) + gap;
    if (m_cc)
    {
        m_cc->OnBytesSent(frameBytes);
    }
}

void
FlowPacer::OnCnp()
{
    if (m_cc)
    {
        m_cc->OnCnp();
    }
}

void
FlowPacer::DoDispose()
{
    if (m_cc)
    {
        m_cc->Dispose();
        m_cc = nullptr;
    }
    Object::DoDispose();
}

} // namespace ns3
