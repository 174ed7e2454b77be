#include "ns3/pcie-socket-link.h"

#include "ns3/log.h"
#include "ns3/simulator.h"
#include "ns3/trace-source-accessor.h"

#include <algorithm>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("PcieSocketLink");
NS_OBJECT_ENSURE_REGISTERED(PcieSocketLink);

TypeId
PcieSocketLink::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::PcieSocketLink")
            .SetParent<Object>()
            .SetGroupName("Pcie")
            .AddConstructor<PcieSocketLink>()
            .AddAttribute("Bandwidth",
                          "Per direction, header + payload bytes (placeholder: NCCL's "
                          "SKL_QPI_BW planning figure, 10 GB/s)",
                          DataRateValue(DataRate(uint64_t(80000000000))),
                          MakeDataRateAccessor(&PcieSocketLink::m_bandwidth), MakeDataRateChecker())
            .AddAttribute("Latency", "From a TLP's last byte leaving to its arrival (placeholder)",
                          TimeValue(NanoSeconds(100)), MakeTimeAccessor(&PcieSocketLink::m_latency),
                          MakeTimeChecker(Time(0)))
            .AddTraceSource("TlpTx", "A TLP left (TLP, sending side)",
                            MakeTraceSourceAccessor(&PcieSocketLink::m_txTrace),
                            "ns3::PcieSocketLink::TlpTracedCallback");
    return tid;
}

PcieSocketLink::PcieSocketLink() = default;

void
PcieSocketLink::DoDispose()
{
    m_receive = {};
    Object::DoDispose();
}

void
PcieSocketLink::SetReceiveCallback(uint32_t side, Callback<void, const PcieTlp&> cb)
{
    m_receive[side] = cb;
}

Time
PcieSocketLink::Send(uint32_t side, const PcieTlp& tlp)
{
    const Time start = std::max(Simulator::Now(), m_busyUntil[side]);
    m_busyUntil[side] = start + m_bandwidth.CalculateBytesTxTime(tlp.headerBytes + tlp.payload);
    ++m_sent[side];
    m_txTrace(tlp, side);
    Simulator::Schedule(m_busyUntil[side] + m_latency - Simulator::Now(), &PcieSocketLink::Deliver,
                        this, 1 - side, tlp);
    return m_busyUntil[side];
}

void
PcieSocketLink::Deliver(uint32_t side, PcieTlp tlp)
{
    if (!m_receive[side].IsNull())
    {
        m_receive[side](tlp);
    }
}

} // namespace ns3
