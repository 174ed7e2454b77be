#include "emulator/edge/roce-uplink.h"

#include "emulator/edge/frame-buffers.h"

#include "ns3/boolean.h"
#include "ns3/ib-opcode.h"
#include "ns3/node.h"
#include "ns3/pfc-header.h"
#include "ns3/roce-packet.h"
#include "ns3/simulator.h"

#include <array>
#include <cstring>

namespace fabemu
{

using namespace ns3;

namespace
{

uint32_t
Ipv4Of(const std::array<uint8_t, 16>& ip)
{
    return uint32_t(ip[0]) << 24 | uint32_t(ip[1]) << 16 | uint32_t(ip[2]) << 8 | ip[3];
}

/// RC/UC/UD requests that carry data (not ACKs, CNPs or read responses): what DCQCN paces.
bool
Paced(uint8_t opcode)
{
    const uint8_t op = opcode & 0x1f;
    return opcode != kIbOpcodeCnp && op <= static_cast<uint8_t>(IbOperation::ReadRequest);
}

/// Frames of one flow wait here at most this many bytes: the endpoint cannot be paused.
constexpr uint64_t kMaxPacedBytes = 16 << 20;

} // namespace

RoceUplink::RoceUplink(Ptr<RoceNetDevice> port, uint8_t rocePriority)
    : m_port(port),
      m_rocePriority(rocePriority),
      m_context(port->GetNode()->GetId())
{
    m_port->SetFrameCallback(MakeCallback(&RoceUplink::FromFabric, this));
    BooleanValue pfc; // fixed for the run: read once, not at every held frame
    m_port->GetAttribute("PfcEnabled", pfc);
    m_portPfc = pfc.Get();
}

RoceUplink::~RoceUplink()
{
    Stop();
    m_port->SetFrameCallback(RoceNetDevice::FrameCallback()); // nothing calls into us now
    for (auto& [key, flow] : m_flows)
    {
        flow.release.Cancel();
        flow.pacer->Dispose();
    }
}

void
RoceUplink::EnableDcqcn(DataRate lineRate)
{
    m_lineRate = lineRate;
    // CnpInterval, CnpPriority and CnpDscp as the scenario set them for the model's NICs.
    m_np = CreateObject<DcqcnNotificationPoint>();
}

void
RoceUplink::OnFlowRate(uint32_t dstIpv4, uint32_t destQp, uint64_t /* before */, uint64_t now)
{
    if (m_rateObserver)
    {
        m_rateObserver(dstIpv4, destQp, now);
    }
}

RoceUplink::Flow&
RoceUplink::FlowOf(uint32_t dstIpv4, uint32_t destQp)
{
    Flow& flow = m_flows[{dstIpv4, destQp}];
    if (!flow.pacer)
    {
        flow.pacer = CreateObject<FlowPacer>();
        flow.pacer->SetLineRate(m_lineRate);
        Ptr<DcqcnRateControl> cc = CreateObject<DcqcnRateControl>();
        cc->TraceConnectWithoutContext(
            "Rate", MakeCallback(&RoceUplink::OnFlowRate, this).Bind(dstIpv4, destQp));
        flow.pacer->SetRateControl(cc);
    }
    return flow;
}

void
RoceUplink::Send(uint8_t* frame, size_t len, const ParsedFrame& f, uint8_t prio)
{
    NS_ASSERT_MSG(len >= kEthernetHeaderSize, "RoceUplink::Send: a runt (the filter drops them)");
    if (m_np && f.kind == FrameKind::Roce && f.ipVersion == 4 && f.ecn == 0 && Paced(f.opcode))
    {
        // A NIC with DCQCN on sends its RoCEv2 data ECN-capable (as ConnectX does with
        // RoCE ECN enabled), whatever traffic class the application chose: rxe sends
        // Not-ECT unless told --tclass=2, and a switch may not mark those. The data
        // only, the frames DCQCN paces: a CE-marked ACK would slow the wrong sender.
        uint8_t* ip = frame + f.l3Offset;
        ip[1] = static_cast<uint8_t>((ip[1] & ~0x3) | 0x2); // ECT(0); the ICRC masks it
        FixIpv4Checksum(ip);
        ++m_counters.framesMadeEct;
    }
    // The frame's one copy: all but its addresses into the packet, then the addresses
    // and an 802.1Q tag in front (the fabric reads the priority from the PCP; the far
    // uplink removes the tag).
    std::array<uint8_t, 12 + kVlanTagSize> head;
    std::memcpy(head.data(), frame, 12);
    head[12] = 0x81;
    head[13] = 0x00;
    head[14] = static_cast<uint8_t>(prio << 5);
    head[15] = 0;
    Ptr<Packet> p = m_packets.Make(head.data(), static_cast<uint32_t>(head.size()), frame + 12,
                                   static_cast<uint32_t>(len - 12));
    if (!m_np || f.kind != FrameKind::Roce || f.ipVersion != 4 || !Paced(f.opcode))
    {
        m_port->Enqueue(p, prio);
        return;
    }
    Flow& flow = FlowOf(Ipv4Of(f.dstIp), f.destQp);
    if (flow.queuedBytes + p->GetSize() > kMaxPacedBytes)
    {
        ++m_counters.drops["dcqcn_queue_full"];
        return;
    }
    if (!flow.queue.empty() || flow.pacer->GetNextSend() > Simulator::Now())
    {
        ++m_counters.framesPaced;
    }
    flow.queue.push_back(p);
    flow.queuedBytes += p->GetSize();
    Pace(flow);
}

void
RoceUplink::Pace(Flow& flow)
{
    const Time now = Simulator::Now();
    while (!flow.queue.empty() && flow.pacer->GetNextSend() <= now)
    {
        Ptr<Packet> p = flow.queue.front();
        flow.queue.pop_front();
        flow.queuedBytes -= p->GetSize();
        const uint64_t bps = flow.pacer->GetRate().GetBitRate();
        m_counters.lowestRateBps =
            m_counters.lowestRateBps == 0 ? bps : std::min(m_counters.lowestRateBps, bps);
        flow.pacer->OnSent(p->GetSize());
        m_port->Enqueue(p, m_rocePriority);
    }
    if (!flow.queue.empty() && !flow.release.IsRunning())
    {
        flow.release = Simulator::Schedule(flow.pacer->GetNextSend() - now, &RoceUplink::Pace, this,
                                           std::ref(flow));
    }
}

void
RoceUplink::SendCnp(const ParsedFrame& f, const std::vector<uint8_t>& marked)
{
    // From the endpoint (this uplink plays its NIC) back to the sender of the marked frame.
    if (!m_np->OnMarked(uint64_t{Ipv4Of(f.srcIp)} << 32 | f.destQp))
    {
        return;
    }
    RoceFrameSpec cnp;
    std::copy(marked.begin() + 6, marked.begin() + 12, cnp.dstMac.begin());
    std::copy(marked.begin(), marked.begin() + 6, cnp.srcMac.begin());
    cnp.vlan = true;
    cnp.pcp = m_np->GetCnpPriority();
    cnp.dscp = m_np->GetCnpDscp();
    cnp.ecn = 0;
    cnp.srcIpv4 = Ipv4Of(f.dstIp);
    cnp.dstIpv4 = Ipv4Of(f.srcIp);
    cnp.srcPort = f.srcPort;
    cnp.transport.opcode = kIbOpcodeCnp;
    cnp.transport.destQp = f.destQp; // the flow's QP at the receiver: how the far uplink keys it
    cnp.transport.becn = true;
    cnp.transport.payload = 16; // reserved bytes (IBA annex A17.9.3)
    m_port->Enqueue(MakeRoceV2Packet(cnp), cnp.pcp);
    ++m_counters.cnpsSent;
}

void
RoceUplink::FromFabric(Ptr<RoceNetDevice>, Ptr<Packet> frame, const ParsedFrame& f)
{
    std::vector<uint8_t> bytes = FrameBuffers::Take(frame->GetSize());
    frame->CopyData(bytes.data(), static_cast<uint32_t>(bytes.size()));
    if (m_np && f.kind == FrameKind::Roce && f.ipVersion == 4)
    {
        if (f.opcode == kIbOpcodeCnp)
        {
            // For one of the endpoint's flows: the CNP names the receiver and its QP.
            auto it = m_flows.find({Ipv4Of(f.srcIp), f.destQp});
            if (it != m_flows.end())
            {
                it->second.pacer->OnCnp();
            }
            ++m_counters.cnpsConsumed;
            return; // rxe has no use for it
        }
        if (f.ecn == 3)
        {
            SendCnp(f, bytes);
        }
    }
    if (f.vlan && bytes.size() >= 18)
    {
        std::memmove(bytes.data() + 12, bytes.data() + 16, bytes.size() - 16);
        bytes.resize(bytes.size() - kVlanTagSize);
    }
    m_deliver(std::move(bytes));
}

void
RoceUplink::HoldFabric(bool hold)
{
    if (!m_portPfc || hold == m_pausing)
    {
        return; // without PFC the edge just holds, up to its limit
    }
    m_pausing = hold;
    if (hold)
    {
        RefreshPause();
        return;
    }
    m_pauseRefresh.Cancel();
    m_port->SendPause(m_rocePriority, 0); // resume at once
}

void
RoceUplink::RefreshPause()
{
    constexpr uint16_t kQuanta = 0xffff;
    m_port->SendPause(m_rocePriority, kQuanta);
    ++m_counters.pausesToFabric;
    // Renewed before it runs out, for as long as the edge holds more than XON.
    m_pauseRefresh =
        Simulator::Schedule(PfcHeader::QuantaToTime(kQuanta, m_port->GetDataRate()) / 2,
                            &RoceUplink::RefreshPause, this);
}

void
RoceUplink::Stop()
{
    m_pauseRefresh.Cancel();
    for (auto& [key, flow] : m_flows)
    {
        flow.release.Cancel();
    }
}

void
RoceUplink::AddCounters(EdgeCounters& c) const
{
    c.cnpsSent += m_counters.cnpsSent;
    c.cnpsConsumed += m_counters.cnpsConsumed;
    c.framesPaced += m_counters.framesPaced;
    c.framesMadeEct += m_counters.framesMadeEct;
    c.lowestRateBps = m_counters.lowestRateBps;
    c.pausesToFabric += m_counters.pausesToFabric;
    for (const auto& [reason, n] : m_counters.drops)
    {
        c.drops[reason] += n;
    }
}

} // namespace fabemu
