#include "ns3/pcie-endpoint.h"

#include "ns3/dispose-at-destroy.h"
#include "ns3/log.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

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
                          MakeTimeChecker(Time(0)))
            .AddAttribute("DmaEngines",
                          "DMA engines behind the port (a GPU's copy engines), each with its "
                          "own tags; they take turns at the port's posted queue",
                          UintegerValue(1), MakeUintegerAccessor(&PcieEndpoint::m_engines),
                          MakeUintegerChecker<uint32_t>(1, 64));
    return tid;
}

PcieEndpoint::PcieEndpoint() = default;

void
PcieEndpoint::DoDispose()
{
    m_port = nullptr;
    m_dmas.clear();
    m_memory = nullptr;
    Object::DoDispose();
}

void
PcieEndpoint::Setup(Ptr<PciePort> port, Ptr<PcieDmaEngine> dma, Ptr<PcieMemoryTarget> memory)
{
    NS_LOG_FUNCTION(this << port << dma << memory);
    m_port = port;
    m_dmas = {dma};
    m_memory = memory;
    dma->SetPort(port);
    memory->SetPort(port);
    port->SetReceiveCallback(MakeCallback(&PcieEndpoint::Receive, this));
    port->SetDequeueCallback(MakeCallback(&PcieEndpoint::Dequeued, this));
    port->SetAckedCallback(MakeCallback(&PcieEndpoint::Acked, this));
    const TypeId tid = dma->GetInstanceTypeId();
    for (uint32_t n = 1; n < m_engines; ++n)
    {
        Ptr<PcieDmaEngine> copy = CreateObject<PcieDmaEngine>();
        DisposeAtDestroy(copy); // made here: nothing else would dispose it
        for (uint32_t i = 0; i < tid.GetAttributeN(); ++i)
        {
            const TypeId::AttributeInformation info = tid.GetAttribute(i);
            Ptr<AttributeValue> value = info.checker->Create();
            dma->GetAttribute(info.name, *value);
            copy->SetAttribute(info.name, *value);
        }
        AddDma(copy);
    }
}

uint32_t
PcieEndpoint::AddDma(Ptr<PcieDmaEngine> dma)
{
    const auto i = static_cast<uint32_t>(m_dmas.size());
    const Ptr<PcieDmaEngine> prev = m_dmas.back();
    // Tags follow the previous engine's; transfer ids carry the engine in their top bits.
    dma->SetBases(static_cast<uint16_t>(prev->GetTagBase() + prev->GetMaxTags()),
                  uint64_t(i) << kEngineShift);
    dma->SetRequesterId(m_dmas.front()->GetRequesterId());
    dma->SetPort(m_port);
    m_dmas.push_back(dma);
    return i;
}

Ptr<PcieDmaEngine>
PcieEndpoint::GetIdlestDma() const
{
    Ptr<PcieDmaEngine> best = m_dmas.front();
    for (const auto& d : m_dmas)
    {
        if (d->GetTransfersInProgress() < best->GetTransfersInProgress())
        {
            best = d;
        }
    }
    return best;
}

void
PcieEndpoint::Dequeued(PcieFcType type)
{
    const auto n = static_cast<uint32_t>(m_dmas.size());
    const uint32_t first = m_nextPump;
    m_nextPump = (m_nextPump + 1) % n;
    for (uint32_t k = 0; k < n; ++k)
    {
        m_dmas[(first + k) % n]->Dequeued(type);
    }
}

void
PcieEndpoint::Acked(const PcieTlp& tlp)
{
    const uint64_t engine = tlp.transfer >> kEngineShift;
    if (engine < m_dmas.size())
    {
        m_dmas[engine]->Acked(tlp);
    }
}

void
PcieEndpoint::Receive(const PcieTlp& tlp)
{
    Time freeAt = Simulator::Now() + m_processing;
    switch (tlp.kind)
    {
    case PcieTlp::Kind::MemWrite:
        freeAt = std::max(freeAt, m_memory->Write(tlp));
        break;
    case PcieTlp::Kind::MemRead:
        m_memory->Read(tlp);
        break;
    case PcieTlp::Kind::Completion:
        for (const auto& d : m_dmas)
        {
            if (d->OwnsTag(tlp.tag))
            {
                d->ReceiveCompletion(tlp);
                break;
            }
        }
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
