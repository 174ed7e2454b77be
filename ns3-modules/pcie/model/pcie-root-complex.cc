#include "ns3/pcie-root-complex.h"

#include "ns3/boolean.h"
#include "ns3/log.h"
#include "ns3/pcie-spec.h"
#include "ns3/simulator.h"
#include "ns3/trace-source-accessor.h"
#include "ns3/uinteger.h"

#include <algorithm>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("PcieRootComplex");
NS_OBJECT_ENSURE_REGISTERED(PcieRootComplex);

TypeId
PcieRootComplex::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::PcieRootComplex")
            .SetParent<Object>()
            .SetGroupName("Pcie")
            .AddConstructor<PcieRootComplex>()
            .AddAttribute("ForwardLatency",
                          "Root port to root port, first bit in to first bit out (placeholder: "
                          "a Gen3 switch's 150 ns; not measured)",
                          TimeValue(NanoSeconds(150)),
                          MakeTimeAccessor(&PcieRootComplex::m_latency), MakeTimeChecker(Time(0)))
            .AddAttribute("IntelP2p",
                          "Split peer-to-peer writes and completions into P2pTlpBytes TLPs, as "
                          "Intel CPUs do (NCCL INTEL_P2P_OVERHEAD)",
                          BooleanValue(false), MakeBooleanAccessor(&PcieRootComplex::m_intelP2p),
                          MakeBooleanChecker())
            .AddAttribute("P2pTlpBytes", "Payload of the TLPs IntelP2p splits into",
                          UintegerValue(64), MakeUintegerAccessor(&PcieRootComplex::m_p2pTlpBytes),
                          MakeUintegerChecker<uint32_t>(4))
            .AddTraceSource("TlpRx", "A TLP arrived at a root port (TLP, port)",
                            MakeTraceSourceAccessor(&PcieRootComplex::m_rxTrace),
                            "ns3::PcieRootComplex::TlpRxTracedCallback")
            .AddTraceSource("Forward",
                            "A TLP (piece) left a root port peer-to-peer (TLP, ingress, egress)",
                            MakeTraceSourceAccessor(&PcieRootComplex::m_forwardTrace),
                            "ns3::PcieRootComplex::ForwardTracedCallback")
            .AddTraceSource("Unroutable", "A TLP nothing claims was dropped (TLP, ingress port)",
                            MakeTraceSourceAccessor(&PcieRootComplex::m_unroutableTrace),
                            "ns3::PcieRootComplex::TlpRxTracedCallback");
    return tid;
}

PcieRootComplex::PcieRootComplex() = default;

void
PcieRootComplex::DoDispose()
{
    m_ports.clear();
    if (m_memory)
    {
        m_memory->SetCompletionCallback(Callback<void, const PcieTlp&, Ptr<PciePort>>());
    }
    m_memory = nullptr;
    m_socket = nullptr;
    Object::DoDispose();
}

uint32_t
PcieRootComplex::AddRootPort(Ptr<PciePort> port)
{
    const auto i = static_cast<uint32_t>(m_ports.size());
    m_ports.push_back({port, {}});
    port->SetReceiveCallback(
        Callback<void, const PcieTlp&>([this, i](const PcieTlp& tlp) { Receive(i, tlp); }));
    port->SetDequeueCallback(
        Callback<void, PcieFcType>([this, i](PcieFcType type) { Dequeued(i, type); }));
    return i;
}

void
PcieRootComplex::AddAddressRange(uint32_t port, uint64_t base, uint64_t size)
{
    m_table.AddAddressRange(int(port), base, size);
}

void
PcieRootComplex::AddRequesterRange(uint32_t port, uint16_t first, uint16_t last)
{
    m_table.AddRequesterRange(int(port), first, last);
}

void
PcieRootComplex::SetHostMemory(Ptr<PcieMemoryTarget> memory, uint64_t base, uint64_t size)
{
    m_memory = memory;
    memory->SetCompletionCallback(Callback<void, const PcieTlp&, Ptr<PciePort>>(
        [this](const PcieTlp& cpl, Ptr<PciePort>) { SendCompletion(cpl); }));
    m_table.AddAddressRange(kHostMemory, base, size);
}

void
PcieRootComplex::SetSocketLink(Ptr<PcieSocketLink> link, uint32_t side)
{
    m_socket = link;
    m_side = side;
    link->SetReceiveCallback(
        side, Callback<void, const PcieTlp&>([this](const PcieTlp& tlp) { ReceiveRemote(tlp); }));
}

void
PcieRootComplex::AddRemoteAddressRange(uint64_t base, uint64_t size)
{
    m_table.AddAddressRange(kRemote, base, size);
}

void
PcieRootComplex::AddRemoteRequesterRange(uint16_t first, uint16_t last)
{
    m_table.AddRequesterRange(kRemote, first, last);
}

void
PcieRootComplex::SendCompletion(const PcieTlp& cpl)
{
    // Host memory's own completions, routed by requester ID; nothing to release when
    // they leave.
    const int out = m_table.Route(cpl);
    if (out == kRemote && m_socket)
    {
        m_socket->Send(m_side, cpl);
    }
    else if (out >= 0)
    {
        m_ports[out].held[int(cpl.Type())].push_back({kFromRemote, false, cpl});
        m_ports[out].port->Enqueue(cpl);
    }
    else
    {
        ++m_unroutable;
    }
}

void
PcieRootComplex::ReceiveRemote(const PcieTlp& tlp)
{
    ++m_fromSocket;
    const int out = m_table.Route(tlp);
    if (out == kHostMemory && m_memory && tlp.kind != PcieTlp::Kind::Completion)
    {
        if (tlp.kind == PcieTlp::Kind::MemWrite)
        {
            m_memory->Write(tlp);
        }
        else
        {
            m_memory->Read(tlp, m_ports.empty() ? nullptr : m_ports.front().port);
        }
        return;
    }
    if (out < 0)
    {
        ++m_unroutable;
        m_unroutableTrace(tlp, kFromRemote);
        return;
    }
    Forward(kFromRemote, uint32_t(out), tlp);
}

void
PcieRootComplex::Receive(uint32_t in, const PcieTlp& tlp)
{
    ++m_received;
    m_rxTrace(tlp, in);
    const int out = m_table.Route(tlp);
    if (out == kHostMemory && m_memory && tlp.kind != PcieTlp::Kind::Completion)
    {
        if (tlp.kind == PcieTlp::Kind::MemWrite)
        {
            const Time taken = m_memory->Write(tlp);
            if (taken > Simulator::Now())
            {
                Simulator::Schedule(taken - Simulator::Now(), &PcieRootComplex::Release, this, in,
                                    tlp);
                return;
            }
        }
        else
        {
            m_memory->Read(tlp, m_ports[in].port);
        }
        m_ports[in].port->Release(tlp);
        return;
    }
    if (out == kRemote && m_socket)
    {
        // Its credits go back when it has left on the socket link.
        const Time left = m_socket->Send(m_side, tlp);
        Simulator::Schedule(left - Simulator::Now(), &PcieRootComplex::Release, this, in, tlp);
        return;
    }
    if (out < 0)
    {
        NS_LOG_WARN("unroutable TLP at root port " << in << " address " << tlp.address);
        ++m_unroutable;
        m_unroutableTrace(tlp, in);
        m_ports[in].port->Release(tlp);
        return;
    }
    const Ptr<PcieLink> link = m_ports[in].port->GetLink();
    const Time wire = link->WireTime(
        PcieTlpWireBytes(link->GetGeneration(), tlp.headerBytes, tlp.payload, tlp.ecrc));
    const Time wait = m_latency - wire;
    if (wait.IsStrictlyPositive())
    {
        Simulator::Schedule(wait, &PcieRootComplex::Forward, this, in, uint32_t(out), tlp);
    }
    else
    {
        Forward(in, uint32_t(out), tlp);
    }
}

void
PcieRootComplex::Forward(uint32_t in, uint32_t out, PcieTlp tlp)
{
    Port& egress = m_ports[out];
    auto& held = egress.held[int(tlp.Type())];
    if (!m_intelP2p || tlp.payload <= m_p2pTlpBytes)
    {
        ++m_p2pSent;
        m_forwardTrace(tlp, in, out);
        held.push_back({in, true, tlp});
        egress.port->Enqueue(tlp);
        return;
    }
    // Split at P2pTlpBytes-aligned addresses; only the last piece keeps the `last` flag.
    uint64_t addr = tlp.address;
    uint32_t left = tlp.payload;
    while (left > 0)
    {
        PcieTlp piece = tlp;
        piece.address = addr;
        piece.payload =
            std::min<uint32_t>(left, m_p2pTlpBytes - static_cast<uint32_t>(addr % m_p2pTlpBytes));
        addr += piece.payload;
        left -= piece.payload;
        piece.last = tlp.last && left == 0;
        ++m_p2pSent;
        m_forwardTrace(piece, in, out);
        held.push_back({in, left == 0, tlp});
        egress.port->Enqueue(piece);
    }
}

void
PcieRootComplex::Dequeued(uint32_t out, PcieFcType type)
{
    auto& held = m_ports[out].held[int(type)];
    const Held h = held.front();
    held.pop_front();
    if (h.release && h.in != kFromRemote)
    {
        m_ports[h.in].port->Release(h.tlp);
    }
}

void
PcieRootComplex::Release(uint32_t in, PcieTlp tlp)
{
    m_ports[in].port->Release(tlp);
}

} // namespace ns3
