#include "ib-hca.h"

#include "bth-header.h"
#include "ib-opcode.h"

#include "ns3/simulator.h"
#include "ns3/uinteger.h"

#include <vector>

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(IbHca);

TypeId
IbHca::GetTypeId()
{
    static TypeId tid = TypeId("ns3::IbHca")
                            .SetParent<Object>()
                            .SetGroupName("Infiniband")
                            .AddConstructor<IbHca>()
                            .AddAttribute("ServiceLevel",
                                          "SL of the QPs the fabric helper connects",
                                          UintegerValue(0),
                                          MakeUintegerAccessor(&IbHca::m_defaultSl),
                                          MakeUintegerChecker<uint8_t>(0, 15));
    return tid;
}

IbHca::IbHca() = default;

void
IbHca::DoDispose()
{
    for (auto& c : m_conns)
    {
        c.qp->Dispose();
    }
    m_conns.clear();
    m_port = nullptr;
    Object::DoDispose();
}

void
IbHca::Setup(Ptr<IbPort> port, uint16_t lid)
{
    m_port = port;
    m_lid = lid;
    port->SetReceiveCallback(MakeCallback(&IbHca::Receive, this));
    port->SetDequeueCallback(MakeCallback(&IbHca::Dequeued, this));
}

Ptr<RdmaQueuePair>
IbHca::CreateQp()
{
    Ptr<RdmaQueuePair> qp = CreateObject<RdmaQueuePair>();
    qp->SetQpn(m_nextQpn++);
    qp->SetWakeCallback(MakeCallback(&IbHca::Wake, this));
    m_byQpn[qp->GetQpn()] = m_conns.size();
    m_conns.push_back(Conn{qp, 0, m_defaultSl});
    return qp;
}

void
IbHca::Connect(Ptr<RdmaQueuePair> qp, uint16_t remoteLid, uint32_t remoteQpn, uint8_t sl)
{
    Conn& c = m_conns.at(m_byQpn.at(qp->GetQpn()));
    c.remoteLid = remoteLid;
    c.sl = sl;
    qp->SetRemoteQpn(remoteQpn);
}

void
IbHca::DestroyQp(Ptr<RdmaQueuePair> qp)
{
    auto it = m_byQpn.find(qp->GetQpn());
    if (it == m_byQpn.end())
    {
        return;
    }
    const size_t idx = it->second;
    m_byQpn.erase(it);
    m_conns[idx].qp->Dispose();
    if (idx + 1 != m_conns.size())
    {
        m_conns[idx] = m_conns.back();
        m_byQpn[m_conns[idx].qp->GetQpn()] = idx;
    }
    m_conns.pop_back();
    m_rr = m_conns.empty() ? 0 : m_rr % m_conns.size();
}

uint32_t
IbHca::WireBytes(const TransportPacket& p)
{
    return kIbLrhBytes + p.TransportBytes() + kIbIcrcBytes + kIbVcrcBytes;
}

void
IbHca::Dequeued(uint8_t)
{
    Wake(); // a VL queue has room again
}

void
IbHca::Wake()
{
    if (!m_sendScheduled)
    {
        m_sendScheduled = true;
        Simulator::ScheduleNow(&IbHca::TrySend, this);
    }
}

Ptr<Packet>
IbHca::Build(const Conn& c, const TransportPacket& p) const
{
    const uint8_t pad = static_cast<uint8_t>((4 - p.payload % 4) % 4);
    std::vector<uint8_t> head(kIbLrhBytes + kMaxTransportHeaderBytes);
    const uint32_t transport = WriteTransportHeaders(p, pad, head.data() + kIbLrhBytes);
    head.resize(kIbLrhBytes + transport);
    LrhHeader lrh;
    lrh.vl = c.sl % m_port->GetNumDataVls();
    lrh.sl = c.sl;
    lrh.dlid = c.remoteLid;
    lrh.slid = m_lid;
    lrh.pktLen = static_cast<uint16_t>((kIbLrhBytes + transport + p.payload + pad + kIbIcrcBytes) / 4);
    lrh.Write(head.data());
    Ptr<Packet> packet = Create<Packet>(head.data(), static_cast<uint32_t>(head.size()));
    // Payload, pad, ICRC and VCRC: zero bytes of the right length.
    packet->AddAtEnd(Create<Packet>(p.payload + pad + kIbIcrcBytes + kIbVcrcBytes));
    return packet;
}

void
IbHca::TrySend()
{
    m_sendScheduled = false;
    if (!m_port)
    {
        return;
    }
    const size_t n = m_conns.size();
    const size_t first = m_rr;
    for (size_t k = 0; k < n; ++k)
    {
        const size_t idx = (first + k) % n;
        Conn& c = m_conns[idx];
        const uint8_t vl = c.sl % m_port->GetNumDataVls();
        if (m_port->GetQueuePackets(vl) > 0 || !c.qp->HasPacket())
        {
            continue;
        }
        const auto p = c.qp->NextPacket();
        m_port->Enqueue(Build(c, *p), vl, Simulator::Now());
        m_rr = (idx + 1) % n;
    }
}

void
IbHca::Receive(Ptr<IbPort>, Ptr<Packet> p, uint8_t vl, Time tail)
{
    // The head is here; the packet is whole (and its buffer drained) when the tail is.
    Simulator::Schedule(tail - Simulator::Now(), &IbHca::Deliver, this, p, vl);
}

void
IbHca::Deliver(Ptr<Packet> p, uint8_t vl)
{
    m_port->Release(vl, IbPort::Blocks(p->GetSize()));
    const uint32_t size = p->GetSize();
    std::vector<uint8_t> bytes(std::min<uint32_t>(size, kIbLrhBytes + kMaxTransportHeaderBytes));
    p->CopyData(bytes.data(), static_cast<uint32_t>(bytes.size()));
    TransportPacket t;
    if (!ReadTransportHeaders(bytes.data() + kIbLrhBytes,
                              static_cast<uint32_t>(bytes.size()) - kIbLrhBytes, t))
    {
        return;
    }
    // Payload: what is left after the headers, the pad (BTH PadCnt), ICRC and VCRC.
    const auto info = LookupIbOpcode(t.opcode);
    const uint32_t headers = kIbLrhBytes + BthHeader::kSize + info->ExtensionBytes();
    const uint32_t pad = (bytes[kIbLrhBytes + 1] >> 4) & 0x3;
    if (size < headers + pad + kIbIcrcBytes + kIbVcrcBytes)
    {
        return;
    }
    t.payload = size - headers - pad - kIbIcrcBytes - kIbVcrcBytes;
    const auto it = m_byQpn.find(t.destQp);
    if (it == m_byQpn.end())
    {
        ++m_unknownQp; // a QP already destroyed: its late packets go nowhere
        return;
    }
    m_conns[it->second].qp->Receive(t);
}

} // namespace ns3
