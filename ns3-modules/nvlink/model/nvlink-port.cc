#include "ns3/nvlink-port.h"

#include "ns3/nvlink-link.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

#include <cmath>

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(NvlinkPort);

TypeId
NvlinkPort::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::NvlinkPort")
            .SetParent<Object>()
            .SetGroupName("Nvlink")
            .AddConstructor<NvlinkPort>()
            .AddAttribute("BufferPackets",
                          "Receive buffer in packets: the credits this port advertises to its peer "
                          "(not public; large enough not to limit a board-length link)",
                          UintegerValue(256), MakeUintegerAccessor(&NvlinkPort::m_bufferPackets),
                          MakeUintegerChecker<uint32_t>(1, 1 << 20))
            .AddTraceSource("PacketTx", "A packet went on the wire: (packet, whether a replay)",
                            MakeTraceSourceAccessor(&NvlinkPort::m_txTrace),
                            "ns3::NvlinkPort::PacketTxTracedCallback")
            .AddTraceSource("PacketRx", "A packet was delivered, once and in order",
                            MakeTraceSourceAccessor(&NvlinkPort::m_rxTrace),
                            "ns3::NvlinkPort::PacketTracedCallback")
            .AddTraceSource("CrcError", "A packet failed its CRC and was dropped (then replayed)",
                            MakeTraceSourceAccessor(&NvlinkPort::m_crcTrace),
                            "ns3::NvlinkPort::PacketTracedCallback")
            .AddTraceSource("Replay", "A Nak sent the sender back: (first sequence, packets)",
                            MakeTraceSourceAccessor(&NvlinkPort::m_replayTrace),
                            "ns3::NvlinkPort::ReplayTracedCallback")
            .AddTraceSource("CreditStarved", "The head of the queue waited this long for a credit",
                            MakeTraceSourceAccessor(&NvlinkPort::m_starvedTrace),
                            "ns3::NvlinkPort::StarvedTracedCallback");
    return tid;
}

NvlinkPort::NvlinkPort() : m_rng(CreateObject<UniformRandomVariable>())
{
}

void
NvlinkPort::DoDispose()
{
    m_link = nullptr;
    m_peer = nullptr;
    m_receive = MakeNullCallback<void, const NvlinkPacket&, Ptr<NvlinkPort>>();
    m_dequeued = MakeNullCallback<void, Ptr<NvlinkPort>>();
    Object::DoDispose();
}

void
NvlinkPort::Attach(Ptr<NvlinkLink> link, Ptr<NvlinkPort> peer)
{
    m_link = link;
    m_peer = peer;
    m_credits = peer->GetBufferPackets();
}

Ptr<NvlinkLink>
NvlinkPort::GetLink() const
{
    return m_link;
}

int64_t
NvlinkPort::AssignStreams(int64_t stream)
{
    m_rng->SetStream(stream);
    return 1;
}

void
NvlinkPort::Enqueue(const NvlinkPacket& p)
{
    m_queue.push_back(p);
    TrySend();
}

void
NvlinkPort::Starve(bool starved)
{
    if (starved && m_starvedSince == Time::Max())
    {
        m_starvedSince = Simulator::Now();
    }
    else if (!starved && m_starvedSince != Time::Max())
    {
        const Time d = Simulator::Now() - m_starvedSince;
        m_starvedTotal += d;
        m_starvedSince = Time::Max();
        m_starvedTrace(d);
    }
}

void
NvlinkPort::TrySend()
{
    if (m_busy)
    {
        return;
    }
    if (m_nextReplay < m_replay.size())
    {
        ++m_replayed;
        Send(m_replay[m_nextReplay++], true);
        return;
    }
    if (m_queue.empty())
    {
        return;
    }
    if (m_credits == 0)
    {
        Starve(true);
        return;
    }
    Starve(false);
    NvlinkPacket p = m_queue.front();
    m_queue.pop_front();
    --m_credits;
    p.seq = m_nextSeq++;
    m_replay.push_back(p);
    m_nextReplay = m_replay.size();
    ++m_sent;
    m_payloadBytes += p.payload;
    Send(p, false);
    if (!m_dequeued.IsNull())
    {
        m_dequeued(this);
    }
}

void
NvlinkPort::Send(const NvlinkPacket& p, bool replay)
{
    m_txTrace(p, replay);
    const double bytes = p.payload + p.extra + m_link->GetHeaderBytes(p.payload);
    m_wireBytes += bytes;
    const Time wire = m_link->WireTime(p.payload, p.extra);
    bool corrupted = false;
    const double ber = m_link->GetBitErrorRate();
    if (ber > 0)
    {
        // P(at least one wrong bit) = 1 - (1 - BER)^bits.
        corrupted = m_rng->GetValue() < -std::expm1(8.0 * bytes * std::log1p(-ber));
    }
    m_busy = true;
    Simulator::Schedule(wire, &NvlinkPort::TxDone, this);
    Simulator::Schedule(wire + m_link->GetDelay(), &NvlinkPort::Receive, m_peer, p, corrupted);
}

void
NvlinkPort::TxDone()
{
    m_busy = false;
    TrySend();
}

void
NvlinkPort::Receive(NvlinkPacket p, bool corrupted)
{
    if (corrupted)
    {
        ++m_crcErrors;
        m_crcTrace(p);
        if (p.seq == m_expected)
        {
            // The one we wait for is bad: send the sender back to it.
            Simulator::Schedule(m_link->GetDelay(), &NvlinkPort::ReceiveNak, m_peer, p.seq);
        }
        return;
    }
    if (p.seq != m_expected)
    {
        return; // after a bad one: the sender comes back to it
    }
    ++m_expected;
    if (++m_held > m_bufferPackets)
    {
        ++m_overflows;
    }
    ++m_unreleased;
    ++m_delivered;
    m_rxTrace(p);
    m_receive(p, this);
}

void
NvlinkPort::Release()
{
    NS_ASSERT_MSG(m_unreleased > 0, "Release without a delivered packet");
    --m_unreleased;
    --m_held;
    Simulator::Schedule(m_link->GetDelay(), &NvlinkPort::ReceiveCredit, m_peer, m_expected);
}

void
NvlinkPort::ReceiveCredit(uint64_t deliveredBelow)
{
    ++m_credits;
    while (!m_replay.empty() && m_replay.front().seq < deliveredBelow)
    {
        m_replay.pop_front();
        m_nextReplay = m_nextReplay > 0 ? m_nextReplay - 1 : 0;
    }
    TrySend();
}

void
NvlinkPort::ReceiveNak(uint64_t seq)
{
    if (m_replay.empty() || seq < m_replay.front().seq)
    {
        return;
    }
    const size_t at = static_cast<size_t>(seq - m_replay.front().seq);
    if (at < m_nextReplay)
    {
        m_replayTrace(seq, static_cast<uint32_t>(m_nextReplay - at));
        m_nextReplay = at;
    }
    TrySend();
}

} // namespace ns3
