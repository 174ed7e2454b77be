#include "ns3/cxl-memory-expander.h"

#include "ns3/cxl-port.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(CxlMemoryExpander);

TypeId
CxlMemoryExpander::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::CxlMemoryExpander")
            .SetParent<Object>()
            .SetGroupName("Cxl")
            .AddConstructor<CxlMemoryExpander>()
            .AddAttribute("ControllerLatency",
                          "The controller's pipeline, request in to DRAM command and DRAM "
                          "data to response out",
                          TimeValue(NanoSeconds(45)),
                          MakeTimeAccessor(&CxlMemoryExpander::m_controllerLatency),
                          MakeTimeChecker(Time(0)))
            .AddAttribute("DramLatency", "DRAM access latency of a line once it is moved",
                          TimeValue(NanoSeconds(60)),
                          MakeTimeAccessor(&CxlMemoryExpander::m_dramLatency),
                          MakeTimeChecker(Time(0)))
            .AddAttribute("DramRate", "DRAM bandwidth (default: two DDR5-4800 channels, 76.8 GB/s)",
                          DataRateValue(DataRate("614.4Gbps")),
                          MakeDataRateAccessor(&CxlMemoryExpander::m_dramRate),
                          MakeDataRateChecker())
            .AddAttribute("LogicalDevices",
                          "Logical devices (MLD partitions, 1..16) the device offers for pooling",
                          UintegerValue(1),
                          MakeUintegerAccessor(&CxlMemoryExpander::m_logicalDevices),
                          MakeUintegerChecker<uint32_t>(1, 16))
            .AddTraceSource("Access", "A request reached the DRAM, after its wait",
                            MakeTraceSourceAccessor(&CxlMemoryExpander::m_accessTrace),
                            "ns3::CxlMemoryExpander::AccessTracedCallback");
    return tid;
}

CxlMemoryExpander::CxlMemoryExpander() = default;
CxlMemoryExpander::~CxlMemoryExpander() = default;

Ptr<CxlPort>
CxlMemoryExpander::AddPort()
{
    Ptr<CxlPort> p = CreateObject<CxlPort>();
    p->SetReceiveCallback(MakeCallback(&CxlMemoryExpander::Receive, this).Bind(p));
    m_ports.push_back(p);
    return p;
}

Time
CxlMemoryExpander::GetLineTime() const
{
    return m_dramRate.CalculateBytesTxTime(64);
}

void
CxlMemoryExpander::Receive(Ptr<CxlPort> port, const CxlMessage& m)
{
    const bool read = m.type == CxlMessageType::M2sReq;
    (read ? m_reads : m_writes)++;
    // The controller's latency is a pipeline; the DRAM moves one line at a time.
    const Time ready = Simulator::Now() + m_controllerLatency;
    const Time start = std::max(ready, m_dramFree);
    m_dramFree = start + GetLineTime();
    m_accessTrace(m, start - ready);
    CxlMessage response = m;
    response.type = read ? CxlMessageType::S2mDrs : CxlMessageType::S2mNdr;
    Simulator::Schedule(m_dramFree + m_dramLatency - Simulator::Now(), &CxlPort::Enqueue, port,
                        response);
}

void
CxlMemoryExpander::DoDispose()
{
    for (auto& p : m_ports)
    {
        p->SetReceiveCallback(MakeNullCallback<void, const CxlMessage&>());
    }
    m_ports.clear();
    Object::DoDispose();
}

} // namespace ns3
