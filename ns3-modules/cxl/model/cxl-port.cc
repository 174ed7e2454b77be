#include "ns3/cxl-port.h"

#include "ns3/cxl-link.h"
#include "ns3/simulator.h"

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(CxlPort);

TypeId
CxlPort::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::CxlPort")
            .SetParent<Object>()
            .SetGroupName("Cxl")
            .AddConstructor<CxlPort>()
            .AddTraceSource("Flit", "A flit left: the slots it filled and the messages it ended",
                            MakeTraceSourceAccessor(&CxlPort::m_flitTrace),
                            "ns3::CxlPort::FlitTracedCallback")
            .AddTraceSource("Rx", "A message from the peer arrived whole",
                            MakeTraceSourceAccessor(&CxlPort::m_rxTrace),
                            "ns3::CxlPort::MessageTracedCallback");
    return tid;
}

CxlPort::CxlPort() = default;
CxlPort::~CxlPort() = default;

void
CxlPort::Attach(Ptr<const CxlLink> link, Ptr<CxlPort> peer)
{
    m_peer = peer;
    m_slots = link->GetSpec().Slots();
    m_flitTime = link->GetFlitTime();
    m_delay = link->GetDelay();
}

void
CxlPort::Enqueue(const CxlMessage& m)
{
    if (m.type == CxlMessageType::Io)
    {
        m_io.push_back({m, CxlIoSlots(m.payload)});
    }
    else
    {
        m_queue.push_back(m);
    }
    if (!m_busy)
    {
        SendFlit();
    }
}

uint32_t
CxlPort::FillMem(uint32_t slots, std::vector<CxlMessage>& done)
{
    uint32_t used = 0;
    while (used < slots && (!m_data.empty() || !m_queue.empty()))
    {
        if (!m_data.empty())
        {
            // Data of headers already sent goes first, in their order.
            Pending& p = m_data.front();
            const uint32_t n = std::min(p.slots, slots - used);
            p.slots -= n;
            used += n;
            if (p.slots == 0)
            {
                done.push_back(p.message);
                m_data.pop_front();
            }
            continue;
        }
        // A header slot: as many headers of the head's class as it holds.
        const CxlMessageType type = m_queue.front().type;
        ++used;
        for (uint32_t h = 0;
             h < CxlHeadersPerSlot(type) && !m_queue.empty() && m_queue.front().type == type; ++h)
        {
            const CxlMessage m = m_queue.front();
            m_queue.pop_front();
            if (CxlDataSlots(type) == 0)
            {
                done.push_back(m);
            }
            else
            {
                m_data.push_back({m, CxlDataSlots(type)});
            }
        }
    }
    return used;
}

uint32_t
CxlPort::FillIo(uint32_t slots, std::vector<CxlMessage>& done)
{
    uint32_t used = 0;
    while (used < slots && !m_io.empty())
    {
        Pending& p = m_io.front();
        const uint32_t n = std::min(p.slots, slots - used);
        p.slots -= n;
        used += n;
        if (p.slots == 0)
        {
            done.push_back(p.message);
            m_io.pop_front();
        }
    }
    return used;
}

void
CxlPort::SendFlit()
{
    const bool memWaits = !m_data.empty() || !m_queue.empty();
    const bool io = !m_io.empty() && (!memWaits || m_ioTurn);
    std::vector<CxlMessage> done;
    const uint32_t used = io ? FillIo(m_slots, done) : FillMem(m_slots, done);
    m_ioTurn = !io; // take turns when both protocols wait
    if (io)
    {
        ++m_ioFlits;
    }
    if (used == 0)
    {
        return;
    }
    m_busy = true;
    ++m_flits;
    m_slotsUsed += used;
    m_flitTrace(used, done.size());
    Simulator::Schedule(m_flitTime, &CxlPort::FlitSent, this);
    if (!done.empty())
    {
        Simulator::Schedule(m_flitTime + m_delay, &CxlPort::Deliver, m_peer, done);
    }
}

void
CxlPort::FlitSent()
{
    m_busy = false;
    SendFlit();
}

void
CxlPort::Deliver(const std::vector<CxlMessage>& done)
{
    for (const CxlMessage& m : done)
    {
        m_rxTrace(m);
        if (!m_receive.IsNull())
        {
            m_receive(m);
        }
    }
}

void
CxlPort::DoDispose()
{
    m_peer = nullptr;
    m_receive = MakeNullCallback<void, const CxlMessage&>();
    Object::DoDispose();
}

} // namespace ns3
