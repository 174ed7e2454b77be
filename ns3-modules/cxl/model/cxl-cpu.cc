#include "ns3/cxl-cpu.h"

#include "ns3/nstime.h"

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(CxlCpu);

TypeId
CxlCpu::GetTypeId()
{
    static TypeId tid = TypeId("ns3::CxlCpu")
                            .SetParent<Object>()
                            .SetGroupName("Cxl")
                            .AddConstructor<CxlCpu>()
                            .AddTraceSource("IoRx", "A device's CXL.io write reached memory",
                                            MakeTraceSourceAccessor(&CxlCpu::m_ioTrace),
                                            "ns3::CxlCpu::IoTracedCallback");
    return tid;
}

CxlCpu::CxlCpu() : m_local(CreateObject<CxlMemoryExpander>())
{
    // Local DDR: eight DDR5-4800 channels, no CXL controller; with the client's 60 ns
    // round trip to the memory controller a random read takes about 100 ns (docs/cxl.md).
    m_local->SetAttribute("ControllerLatency", TimeValue(Time(0)));
    m_local->SetAttribute("DramLatency", TimeValue(NanoSeconds(40)));
    m_local->SetAttribute("RowHitLatency", TimeValue(NanoSeconds(12)));
    m_local->SetAttribute("DramRate", DataRateValue(DataRate("2457.6Gbps")));
}

CxlCpu::~CxlCpu() = default;

uint32_t
CxlCpu::AddRootPort(Ptr<CxlPort> port)
{
    port->SetReceiveCallback(MakeCallback(&CxlCpu::Receive, this));
    m_ports.push_back(port);
    return m_ports.size() - 1;
}

void
CxlCpu::Attach(Ptr<CxlMemoryClient> client, uint32_t port)
{
    const auto requester = static_cast<uint32_t>(m_clients.size());
    m_clients.push_back(client);
    const Callback<void, const CxlMessage&> send =
        port < m_ports.size() ? MakeCallback(&CxlPort::Enqueue, m_ports[port])
                              : MakeCallback(&CxlMemoryExpander::Serve, m_local)
                                    .Bind(MakeCallback(&CxlCpu::Receive, this));
    client->SetSendCallback(send, requester);
}

void
CxlCpu::Receive(const CxlMessage& m)
{
    if (m.type == CxlMessageType::Io)
    {
        m_ioBytes += m.payload;
        m_ioTrace(m);
        return;
    }
    m_clients.at(m.requester)->Receive(m);
}

void
CxlCpu::DoDispose()
{
    for (auto& p : m_ports)
    {
        p->SetReceiveCallback(MakeNullCallback<void, const CxlMessage&>());
    }
    m_ports.clear();
    m_clients.clear();
    m_local = nullptr;
    Object::DoDispose();
}

} // namespace ns3
