#include "pcie-endpoint.h"

#include "ns3/log.h"
#include "ns3/simulator.h"

#include <algorithm>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("PcieEndpoint");
NS_OBJECT_ENSURE_REGISTERED(PcieEndpoint);

TypeId
PcieEndpoint::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::PcieEndpoint")
            .SetParent<Object>()
            .SetGroupName("Pcie")
            .AddConstructor<PcieEndpoint>()
            .AddAttribute("ProcessingTime",
                          "From a TLP's arrival to its credits being freed (0: at once)",
                          TimeValue(Time(0)), MakeTimeAccessor(&PcieEndpoint::m_processing),
                          MakeTimeChecker(Time(0)));
    return tid;
}

PcieEndpoint::PcieEndpoint() = default;

void
PcieEndpoint::DoDispose()
{
    m_port = nullptr;
    m_dma = nullptr;
    m_memory = nullptr;
    Object::DoDispose();
}

void
PcieEndpoint::Setup(Ptr<PciePort> port, Ptr<PcieDmaEngine> dma, Ptr<PcieMemoryTarget> memory)
{
    NS_LOG_FUNCTION(this << port << dma << memory);
    m_port = port;
    m_dma = dma;
    m_memory = memory;
    dma->SetPort(port);
    memory->SetPort(port);
    port->SetReceiveCallback(MakeCallback(&PcieEndpoint::Receive, this));
    port->SetDequeueCallback(MakeCallback(&PcieDmaEngine::Dequeued, dma));
    port->SetAckedCallback(MakeCallback(&PcieDmaEngine::Acked, dma));
}

void
PcieEndpoint::Receive(const PcieTlp& tlp)
{
    Time freeAt = Simulator::Now() + m_processing;
    switch (tlp.kind)
    {
        case PcieTlp::Kind::MemWrite:
            freeAt = std::max(freeAt, m_memory->Write(tlp.payload));
            break;
        case PcieTlp::Kind::MemRead:
            m_memory->Read(tlp);
            break;
        case PcieTlp::Kind::Completion:
            m_dma->ReceiveCompletion(tlp);
            break;
    }
    if (freeAt <= Simulator::Now())
    {
        m_port->Release(tlp);
    }
    else
    {
        Simulator::Schedule(freeAt - Simulator::Now(), &PcieEndpoint::Release, this, tlp);
    }
}

void
PcieEndpoint::Release(PcieTlp tlp)
{
    m_port->Release(tlp);
}

} // namespace ns3
