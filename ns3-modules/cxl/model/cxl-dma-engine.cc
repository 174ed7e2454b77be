#include "ns3/cxl-dma-engine.h"

#include "ns3/cxl-port.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

#include <algorithm>

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(CxlDmaEngine);

TypeId
CxlDmaEngine::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::CxlDmaEngine")
            .SetParent<Object>()
            .SetGroupName("Cxl")
            .AddConstructor<CxlDmaEngine>()
            .AddAttribute("MaxPayload", "Payload bytes of a TLP (the link's MPS)",
                          UintegerValue(256), MakeUintegerAccessor(&CxlDmaEngine::m_maxPayload),
                          MakeUintegerChecker<uint32_t>(16, 4096))
            .AddAttribute("Window", "TLPs sent and not yet written, at most", UintegerValue(64),
                          MakeUintegerAccessor(&CxlDmaEngine::m_window),
                          MakeUintegerChecker<uint32_t>(1))
            .AddAttribute("Id", "The requester its TLPs carry", UintegerValue(0),
                          MakeUintegerAccessor(&CxlDmaEngine::m_id),
                          MakeUintegerChecker<uint32_t>())
            .AddTraceSource("Tx", "A TLP was handed to the port",
                            MakeTraceSourceAccessor(&CxlDmaEngine::m_txTrace),
                            "ns3::CxlPort::MessageTracedCallback")
            .AddTraceSource("Done", "A write has landed whole: its bytes",
                            MakeTraceSourceAccessor(&CxlDmaEngine::m_doneTrace),
                            "ns3::TracedValueCallback::Uint64");
    return tid;
}

CxlDmaEngine::CxlDmaEngine() = default;
CxlDmaEngine::~CxlDmaEngine() = default;

void
CxlDmaEngine::SetPort(Ptr<CxlPort> port)
{
    m_port = port;
}

void
CxlDmaEngine::Write(uint64_t bytes, Callback<void> done)
{
    m_bytes = bytes;
    m_sent = 0;
    m_delivered = 0;
    m_inFlight = 0;
    m_start = Simulator::Now();
    m_done = done;
    if (bytes == 0)
    {
        Simulator::ScheduleNow(&CxlDmaEngine::Finish, this);
        return;
    }
    Send();
}

void
CxlDmaEngine::Send()
{
    while (m_sent < m_bytes && m_inFlight < m_window)
    {
        CxlMessage tlp;
        tlp.type = CxlMessageType::Io;
        tlp.requester = m_id;
        tlp.payload = static_cast<uint32_t>(std::min<uint64_t>(m_maxPayload, m_bytes - m_sent));
        tlp.tag = m_sent;
        tlp.issued = Simulator::Now();
        m_sent += tlp.payload;
        ++m_inFlight;
        m_txTrace(tlp);
        m_port->Enqueue(tlp);
    }
}

void
CxlDmaEngine::Delivered(const CxlMessage& tlp)
{
    if (tlp.type != CxlMessageType::Io || tlp.requester != m_id || m_inFlight == 0)
    {
        return;
    }
    --m_inFlight;
    m_delivered += tlp.payload;
    m_last = Simulator::Now();
    if (m_delivered >= m_bytes)
    {
        Finish();
        return;
    }
    Send();
}

void
CxlDmaEngine::Finish()
{
    m_doneTrace(m_delivered);
    if (!m_done.IsNull())
    {
        m_done();
    }
}

double
CxlDmaEngine::GetAchievedBytesPerSecond() const
{
    const double span = (m_last - m_start).GetSeconds();
    return span > 0 ? m_delivered / span : 0;
}

void
CxlDmaEngine::DoDispose()
{
    m_port = nullptr;
    m_done = MakeNullCallback<void>();
    Object::DoDispose();
}

} // namespace ns3
