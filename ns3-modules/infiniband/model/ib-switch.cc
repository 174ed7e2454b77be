#include "ib-switch.h"

#include "ns3/simulator.h"

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(IbSwitch);

TypeId
IbSwitch::GetTypeId()
{
    static TypeId tid = TypeId("ns3::IbSwitch")
                            .SetParent<Object>()
                            .SetGroupName("Infiniband")
                            .AddConstructor<IbSwitch>()
                            .AddAttribute("SwitchingLatency",
                                          "From a packet's head arriving to its leaving (cut-through)",
                                          TimeValue(NanoSeconds(100)),
                                          MakeTimeAccessor(&IbSwitch::m_latency),
                                          MakeTimeChecker(Time(0)));
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
    if (outVl != lrh.vl)
    {
        // The LRH names the VL of each hop.
        lrh.vl = outVl;
        uint8_t rewritten[kIbLrhBytes];
        lrh.Write(rewritten);
        Ptr<Packet> head = Create<Packet>(rewritten, kIbLrhBytes);
        head->AddAtEnd(p->CreateFragment(kIbLrhBytes, p->GetSize() - kIbLrhBytes));
        p = head;
    }
    // Cut-through: not before the latency, and not so early that a faster output
    // would catch up with a tail still arriving.
    const Time wireOut = outPort->GetDataRate().CalculateBytesTxTime(p->GetSize());
    const Time notBefore = std::max(Simulator::Now() + m_latency, tail - wireOut);
    outPort->Enqueue(p, outVl, notBefore, port, vl);
}

} // namespace ns3
