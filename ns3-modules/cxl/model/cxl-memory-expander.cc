#include "ns3/cxl-memory-expander.h"

#include "ns3/abort.h"
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
            .AddAttribute(
                "DramLatency", "DRAM access latency of a line in a closed row (random access)",
                TimeValue(NanoSeconds(60)), MakeTimeAccessor(&CxlMemoryExpander::m_dramLatency),
                MakeTimeChecker(Time(0)))
            .AddAttribute("RowHitLatency",
                          "DRAM access latency of a line in an open row (streaming): "
                          "DramLatency less precharge and activate (tRP + tRCD, ~28 ns on DDR5)",
                          TimeValue(NanoSeconds(32)),
                          MakeTimeAccessor(&CxlMemoryExpander::m_rowHitLatency),
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

Time
CxlMemoryExpander::Access(const CxlMessage& m)
{
    NS_ABORT_MSG_IF(m.logicalDevice >= m_logicalDevices, "CxlMemoryExpander: logical device "
                                                             << m.logicalDevice << " of "
                                                             << m_logicalDevices);
    (m.type == CxlMessageType::M2sReq ? m_reads : m_writes)++;
    // The controller's latency is a pipeline; the DRAM moves one line at a time.
    const Time ready = Simulator::Now() + m_controllerLatency;
    const Time start = std::max(ready, m_dramFree);
    m_dramFree = start + GetLineTime();
    m_accessTrace(m, start - ready);
    return m_dramFree + GetDramLatency(m.rowHit) - Simulator::Now();
}

namespace
{

CxlMessage
ResponseTo(const CxlMessage& m)
{
    CxlMessage response = m;
    response.type =
        m.type == CxlMessageType::M2sReq ? CxlMessageType::S2mDrs : CxlMessageType::S2mNdr;
    return response;
}

void
Reply(Callback<void, const CxlMessage&> reply, const CxlMessage& response)
{
    reply(response);
}

} // namespace

void
CxlMemoryExpander::Receive(Ptr<CxlPort> port, const CxlMessage& m)
{
    Simulator::Schedule(Access(m), &CxlPort::Enqueue, port, ResponseTo(m));
}

void
CxlMemoryExpander::Serve(Callback<void, const CxlMessage&> reply, const CxlMessage& m)
{
    Simulator::Schedule(Access(m), &Reply, reply, ResponseTo(m));
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
