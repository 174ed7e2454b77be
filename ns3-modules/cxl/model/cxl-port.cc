#include "ns3/cxl-port.h"

#include "ns3/cxl-link.h"
#include "ns3/simulator.h"

#include <cmath>

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
                            "ns3::CxlPort::MessageTracedCallback")
            .AddTraceSource("Replay", "A flit failed its CRC and goes again: the messages it ends",
                            MakeTraceSourceAccessor(&CxlPort::m_replayTrace),
                            "ns3::CxlPort::ReplayTracedCallback");
    return tid;
}

CxlPort::CxlPort() : m_error(CreateObject<UniformRandomVariable>())
{
}
CxlPort::~CxlPort() = default;

void
CxlPort::Attach(Ptr<const CxlLink> link, Ptr<CxlPort> peer)
{
    m_peer = peer;
    m_slots = link->GetSpec().Slots();
    m_flitTime = link->GetFlitTime();
    m_delay = link->GetDelay();
    m_creditLimit = link->GetRequestCredits();
    m_credits = m_creditLimit;
    const double bits = 8.0 * link->GetSpec().FlitBytes();
    m_errorProbability = -std::expm1(bits * std::log1p(-link->GetBitErrorRate()));
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
CxlPort::TakeSlots(std::deque<Pending>& q, uint32_t room, std::vector<CxlMessage>& done)
{
    Pending& p = q.front();
    const uint32_t n = std::min(p.slots, room);
    p.slots -= n;
    if (p.slots == 0)
    {
        done.push_back(p.message);
        q.pop_front();
    }
    return n;
}

uint32_t
CxlPort::FillMem(uint32_t slots, std::vector<CxlMessage>& done)
{
    uint32_t used = 0;
    while (used < slots && (!m_data.empty() || !m_queue.empty()))
    {
        if (!m_data.empty())
        {
            used += TakeSlots(m_data, slots - used, done); // data of headers already sent
            continue;
        }
        // A header slot: as many headers of the head's class as it holds (and, for
        // requests, as the receiver has credits for).
        const CxlMessageType type = m_queue.front().type;
        if (!HasCredit(type))
        {
            break;
        }
        ++used;
        for (uint32_t h = 0; h < CxlHeadersPerSlot(type) && !m_queue.empty() &&
                             m_queue.front().type == type && HasCredit(type);
             ++h)
        {
            const CxlMessage m = m_queue.front();
            m_queue.pop_front();
            if (NeedsCredit(type))
            {
                --m_credits;
            }
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
        used += TakeSlots(m_io, slots - used, done);
    }
    return used;
}

bool
CxlPort::NeedsCredit(CxlMessageType t) const
{
    return m_creditLimit > 0 && (t == CxlMessageType::M2sReq || t == CxlMessageType::M2sRwD);
}

bool
CxlPort::HasCredit(CxlMessageType t) const
{
    return !NeedsCredit(t) || m_credits > 0;
}

void
CxlPort::CreditBack()
{
    ++m_credits;
    if (!m_busy)
    {
        SendFlit();
    }
}

void
CxlPort::SendFlit()
{
    const bool memWaits = !m_data.empty() || (!m_queue.empty() && HasCredit(m_queue.front().type));
    const bool io = !m_io.empty() && (!memWaits || m_ioTurn);
    std::vector<CxlMessage> done;
    const uint32_t used = io ? FillIo(m_slots, done) : FillMem(m_slots, done);
    m_ioTurn = !io; // take turns when both protocols wait
    if (used == 0)
    {
        return;
    }
    if (io)
    {
        ++m_ioFlits;
    }
    m_busy = true;
    ++m_flits;
    m_slotsUsed += used;
    m_flitTrace(used, done.size());
    Transmit(done);
}

void
CxlPort::Transmit(const std::vector<CxlMessage>& done)
{
    // A flit hit by a bit error fails its CRC at the peer, which asks for a retry: the
    // flit goes again once that request is back (go-back-N costs the same round trip).
    if (m_errorProbability > 0 && m_error->GetValue() < m_errorProbability)
    {
        ++m_replays;
        m_replayTrace(done.size());
        Simulator::Schedule(m_flitTime + 2 * m_delay, &CxlPort::Transmit, this, done);
        return;
    }
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
        if (m_peer->NeedsCredit(m.type))
        {
            // Its buffer frees as the device takes it; the credit rides back in a flit's
            // header (no slot of its own).
            Simulator::Schedule(m_delay, &CxlPort::CreditBack, m_peer);
        }
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
