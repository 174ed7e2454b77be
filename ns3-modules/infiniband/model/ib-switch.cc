#include "ns3/ib-switch.h"

#include "ns3/boolean.h"
#include "ns3/byte-header.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(IbSwitch);

TypeId
IbSwitch::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::IbSwitch")
            .SetParent<Object>()
            .SetGroupName("Infiniband")
            .AddConstructor<IbSwitch>()
            .AddAttribute("SwitchingLatency",
                          "From a packet's head arriving to its leaving (cut-through)",
                          TimeValue(NanoSeconds(100)), MakeTimeAccessor(&IbSwitch::m_latency),
                          MakeTimeChecker(Time(0)))
            .AddAttribute("CcEnabled",
                          "IB congestion control: mark FECN on packets into a "
                          "congested output VL (off by default, as on real fabrics)",
                          BooleanValue(false), MakeBooleanAccessor(&IbSwitch::m_ccEnabled),
                          MakeBooleanChecker())
            .AddAttribute("CcThreshold",
                          "Bytes queued for an output VL above which it is congested",
                          UintegerValue(16 * 1024), MakeUintegerAccessor(&IbSwitch::m_ccThreshold),
                          MakeUintegerChecker<uint32_t>())
            .AddAttribute("CcMarkingRate",
                          "Packets left unmarked between two FECN marks (IBA Marking_Rate)",
                          UintegerValue(0), MakeUintegerAccessor(&IbSwitch::m_markingRate),
                          MakeUintegerChecker<uint32_t>())
            .AddTraceSource("Fecn", "A packet marked FECN: (output port, VL)",
                            MakeTraceSourceAccessor(&IbSwitch::m_fecnTrace),
                            "ns3::IbSwitch::FecnTracedCallback");
    return tid;
}

IbSwitch::IbSwitch() = default;

void
IbSwitch::DoDispose()
{
    m_ports.clear();
    Object::DoDispose();
}

uint32_t
IbSwitch::AddPort(Ptr<IbPort> port)
{
    const uint32_t index = static_cast<uint32_t>(m_ports.size());
    m_ports.push_back(port);
    port->SetReceiveCallback(MakeCallback(&IbSwitch::Receive, this).Bind(index));
    return index;
}

void
IbSwitch::SetRoute(uint16_t dlid, uint32_t port)
{
    if (m_lft.size() <= dlid)
    {
        m_lft.resize(dlid + 1, -1);
    }
    m_lft[dlid] = static_cast<int32_t>(port);
}

void
IbSwitch::SetSl2Vl(uint32_t in, uint32_t out, uint8_t sl, uint8_t vl)
{
    m_sl2vl[{in, out, sl}] = vl;
}

bool
IbSwitch::MarkFecn(Ptr<IbPort> out, uint8_t vl)
{
    if (out->GetQueueBytes(vl) < m_ccThreshold || out->IsCreditStalled(vl))
    {
        return false;
    }
    if (m_sinceMark < m_markingRate)
    {
        ++m_sinceMark;
        return false;
    }
    m_sinceMark = 0;
    ++m_fecnMarks;
    return true;
}

void
IbSwitch::Receive(uint32_t in, Ptr<IbPort> port, Ptr<Packet> p, uint8_t vl, Time tail)
{
    uint8_t lrhBytes[kIbLrhBytes];
    p->CopyData(lrhBytes, kIbLrhBytes);
    LrhHeader lrh = LrhHeader::Read(lrhBytes);
    const uint32_t blocks = IbPort::Blocks(p->GetSize());
    if (lrh.dlid >= m_lft.size() || m_lft[lrh.dlid] < 0)
    {
        ++m_noRoute;
        Simulator::Schedule(tail - Simulator::Now(), &IbPort::Release, port, vl, blocks);
        return;
    }
    const uint32_t out = static_cast<uint32_t>(m_lft[lrh.dlid]);
    Ptr<IbPort> outPort = m_ports[out];
    const auto it = m_sl2vl.find({in, out, lrh.sl});
    const uint8_t outVl = it != m_sl2vl.end() ? it->second : lrh.sl % outPort->GetNumDataVls();
    // An output VL is the root of congestion when it has a queue and credit to send
    // it (IBA A10.2.1.1): a VL waiting for credit is a victim and is not marked.
    const bool fecn = m_ccEnabled && MarkFecn(outPort, outVl);
    if (outVl != lrh.vl || fecn)
    {
        // The LRH names the VL of each hop; FECN is the top bit of BTH byte 4 (the BTH
        // follows the GRH when there is one).
        const uint32_t bth = kIbLrhBytes + (lrh.lnh == kIbLnhGlobal ? kIbGrhBytes : 0);
        const uint32_t headBytes = bth + 12;
        uint8_t head[kIbLrhBytes + kIbGrhBytes + 12];
        p->CopyData(head, headBytes);
        lrh.vl = outVl;
        lrh.Write(head);
        if (fecn)
        {
            head[bth + 4] |= 0x80;
            m_fecnTrace(out, outVl);
        }
        p = p->Copy(); // the payload's zero area stays virtual
        p->RemoveAtStart(headBytes);
        p->AddHeader(ByteHeader(head, headBytes));
    }
    // Cut-through: not before the latency, and not so early that a faster output
    // would catch up with a tail still arriving.
    const Time wireOut = outPort->WireTime(p->GetSize());
    const Time notBefore = std::max(Simulator::Now() + m_latency, tail - wireOut);
    outPort->Enqueue(p, outVl, notBefore, port, vl);
}

} // namespace ns3
