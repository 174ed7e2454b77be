#include "edge-port.h"

#include "ib-opcode.h"
#include "pfc-header.h"
#include "realtime-simulator.h"
#include "roce-packet.h"

#include "ns3/abort.h"
#include "ns3/boolean.h"
#include "ns3/node.h"
#include "ns3/simulator.h"
#include "ns3/nstime.h"

#include <cstring>

namespace fabemu
{

using namespace ns3;

uint8_t
EdgePriority(const ParsedFrame& f, uint8_t rocePriority)
{
    switch (f.kind)
    {
    case FrameKind::Roce:
        return rocePriority;
    case FrameKind::Ip:
        return static_cast<uint8_t>(f.dscp >> 3);
    default:
        return 0;
    }
}

std::array<uint8_t, 16>
EndpointAddress::LinkLocal() const
{
    return {
        0xfe,   0x80,   0,    0,    0,      0,      0,     0, static_cast<uint8_t>(mac[0] ^ 0x02),
        mac[1], mac[2], 0xff, 0xfe, mac[3], mac[4], mac[5]};
}

namespace
{

/// The ICMPv6 checksum (RFC 4443 2.3) over the pseudo-header and \p msg.
uint16_t
Icmpv6Checksum(const uint8_t* src, const uint8_t* dst, const uint8_t* msg, size_t len)
{
    uint32_t sum = 0;
    auto add = [&sum](const uint8_t* p, size_t n) {
        for (size_t i = 0; i + 1 < n; i += 2)
        {
            sum += static_cast<uint32_t>(p[i] << 8 | p[i + 1]);
        }
        if (n % 2)
        {
            sum += static_cast<uint32_t>(p[n - 1] << 8);
        }
    };
    add(src, 16);
    add(dst, 16);
    sum += static_cast<uint32_t>(len);
    sum += 58; // next header: ICMPv6
    add(msg, len);
    while (sum >> 16)
    {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    return static_cast<uint16_t>(~sum);
}

} // namespace

EdgePort::EdgePort(std::string name, Ptr<RoceNetDevice> port, std::unique_ptr<TapPort> tap,
                   uint32_t mtu, uint8_t rocePriority, std::vector<EndpointAddress> directory)
    : m_name(std::move(name)),
      m_port(port),
      m_tap(std::move(tap)),
      m_rocePriority(rocePriority),
      m_directory(std::move(directory)),
      m_context(port->GetNode()->GetId()),
      m_filter(mtu)
{
    m_port->SetFrameCallback(MakeCallback(&EdgePort::FromFabric, this));
    BooleanValue pfc; // fixed for the run: read once, not at every held frame
    m_port->GetAttribute("PfcEnabled", pfc);
    m_portPfc = pfc.Get();
}

EdgePort::EdgePort(std::string name, std::unique_ptr<EdgeUplink> uplink,
                   std::unique_ptr<TapPort> tap, uint32_t mtu, uint8_t rocePriority,
                   std::vector<EndpointAddress> directory)
    : m_name(std::move(name)),
      m_uplink(std::move(uplink)),
      m_tap(std::move(tap)),
      m_rocePriority(rocePriority),
      m_directory(std::move(directory)),
      m_context(m_uplink->Context()),
      m_filter(mtu)
{
    m_uplink->SetDeliver([this](const std::vector<uint8_t>& frame) { WriteToEndpoint(frame); });
}

EdgePort::~EdgePort()
{
    Stop();
    for (auto& [key, flow] : m_flows)
    {
        flow.release.Cancel();
        if (flow.cc)
        {
            flow.cc->Dispose();
        }
    }
}

void
EdgePort::Start()
{
    // The reader begins on the simulation thread once Run is under way: frames it
    // schedules from its own thread earlier could be lost by the real-time
    // simulator while Run starts (seen: 1 frame in 600, now and then). Until
    // then frames wait in the socket, which is open already.
    Simulator::ScheduleWithContext(m_context, Time(0), &EdgePort::StartReading, this);
}

void
EdgePort::StartReading()
{
    auto handler = [this](const uint8_t* frame, size_t len) { OnTapFrame(frame, len); };
    if (auto sim = DynamicCast<FabemuRealtimeSimulatorImpl>(Simulator::GetImplementation()))
    {
        // The simulation thread reads the tap itself: no hand-over per frame.
        m_watching = sim;
        sim->Watch(m_tap->Fd(), [this, handler] { m_tap->ReadAvailable(handler); });
        // And writes what a burst of events produced with one system call.
        m_idleHook = sim->AddIdleHook([this] { FlushQueued(); });
        return;
    }
    m_tap->Start(handler);
}

void
EdgePort::Stop()
{
    m_tap->Stop();
    if (m_watching)
    {
        m_watching->Unwatch(m_tap->Fd());
        m_watching->RemoveIdleHook(m_idleHook);
        m_watching = nullptr;
        FlushQueued(); // what the last burst produced
    }
    m_retry.Cancel();
    m_pauseRefresh.Cancel();
    m_counters.heldAtStop = m_held.size();
}

void
EdgePort::EnableDcqcn(DataRate lineRate)
{
    NS_ABORT_MSG_IF(!m_port,
                    "EdgePort " << m_name << ": DCQCN at the edge needs the RoCEv2 fabric");
    m_dcqcn = true;
    m_lineRate = lineRate;
    // The notification point's CNP spacing, as the scenario set it for the model's NICs.
    TypeId::AttributeInformation info;
    TypeId::LookupByName("ns3::RoceNic").LookupAttributeByName("CnpInterval", &info);
    m_cnpInterval = DynamicCast<const TimeValue>(info.initialValue)->Get();
}

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

} // namespace

void
EdgePort::SetRateObserver(RateObserver observer)
{
    m_rateObserver = std::move(observer);
}

void
EdgePort::OnFlowRate(uint32_t dstIpv4, uint32_t destQp, uint64_t /* before */, uint64_t now)
{
    m_rateObserver(dstIpv4, destQp, now);
}

void
EdgePort::Pace(Flow& flow)
{
    const Time now = Simulator::Now();
    while (!flow.queue.empty() && flow.nextSend <= now)
    {
        Ptr<Packet> p = flow.queue.front();
        flow.queue.pop_front();
        flow.queuedBytes -= p->GetSize();
        const DataRate rate = flow.cc->GetRate();
        flow.nextSend = std::max(now, flow.nextSend) +
                        rate.CalculateBytesTxTime(RoceNetDevice::WireBytes(p->GetSize()));
        flow.cc->OnBytesSent(p->GetSize());
        const uint64_t bps = rate.GetBitRate();
        m_counters.lowestRateBps =
            m_counters.lowestRateBps == 0 ? bps : std::min(m_counters.lowestRateBps, bps);
        m_port->Enqueue(p, m_rocePriority);
    }
    if (!flow.queue.empty() && !flow.release.IsRunning())
    {
        flow.release =
            Simulator::Schedule(flow.nextSend - now, &EdgePort::Pace, this, std::ref(flow));
    }
}

void
EdgePort::SendCnp(const ParsedFrame& f, const std::vector<uint8_t>& frame)
{
    // From the endpoint (this edge plays its NIC) back to the sender of the marked frame.
    const FlowKey key{Ipv4Of(f.srcIp), f.destQp};
    auto it = m_np.find(key);
    if (it != m_np.end() && Simulator::Now() - it->second < m_cnpInterval)
    {
        return;
    }
    m_np[key] = Simulator::Now();
    RoceFrameSpec cnp;
    std::copy(frame.begin() + 6, frame.begin() + 12, cnp.dstMac.begin());
    std::copy(frame.begin(), frame.begin() + 6, cnp.srcMac.begin());
    cnp.vlan = true;
    cnp.pcp = 6; // ns3::RoceNic's CNP priority and DSCP
    cnp.dscp = 48;
    cnp.ecn = 0;
    cnp.srcIpv4 = Ipv4Of(f.dstIp);
    cnp.dstIpv4 = Ipv4Of(f.srcIp);
    cnp.srcPort = f.srcPort;
    cnp.transport.opcode = kIbOpcodeCnp;
    cnp.transport.destQp = f.destQp; // the flow's QP at the receiver: how the far edge keys it
    cnp.transport.becn = true;
    cnp.transport.payload = 16;
    m_port->Enqueue(MakeRoceV2Packet(cnp), 6);
    ++m_counters.cnpsSent;
}

void
EdgePort::OnTapFrame(const uint8_t* frame, size_t len)
{
    {
        std::lock_guard<std::mutex> lock(m_filterMutex);
        if (!m_filter.Classify(frame, len).admit)
        {
            return;
        }
    }
    auto copy = std::make_shared<std::vector<uint8_t>>(frame, frame + len);
    // Thread-safe in the real-time simulator: runs "now" on the simulation thread.
    Simulator::ScheduleWithContext(m_context, Time(0), &EdgePort::Inject, this, copy);
}

void
EdgePort::Inject(std::shared_ptr<std::vector<uint8_t>> frame)
{
    const ParsedFrame f = ParseEthernetFrame(frame->data(), frame->size(), false);
    if (f.kind == FrameKind::Arp)
    {
        AnswerArp(*frame);
        return;
    }
    if (f.vlan)
    {
        ++m_counters.drops["tagged_from_endpoint"];
        return;
    }
    if (HandleNeighbourDiscovery(*frame, f))
    {
        return;
    }
    const uint8_t prio = EdgePriority(f, m_rocePriority);
    if (m_uplink)
    {
        ++m_counters.fromTap;
        m_uplink->Send(*frame, f, prio);
        return;
    }
    // 802.1Q: the fabric reads the priority from the PCP; the far edge removes it.
    std::vector<uint8_t> tagged(frame->size() + kVlanTagSize);
    std::memcpy(tagged.data(), frame->data(), 12);
    tagged[12] = 0x81;
    tagged[13] = 0x00;
    tagged[14] = static_cast<uint8_t>(prio << 5);
    tagged[15] = 0;
    std::memcpy(tagged.data() + 16, frame->data() + 12, frame->size() - 12);
    ++m_counters.fromTap;
    Ptr<Packet> p = Create<Packet>(tagged.data(), static_cast<uint32_t>(tagged.size()));
    if (m_dcqcn && f.kind == FrameKind::Roce && f.ipVersion == 4 && Paced(f.opcode))
    {
        Flow& flow = m_flows[{Ipv4Of(f.dstIp), f.destQp}];
        if (!flow.cc)
        {
            flow.cc = CreateObject<DcqcnRateControl>();
            if (m_rateObserver)
            {
                flow.cc->TraceConnectWithoutContext(
                    "Rate",
                    MakeCallback(&EdgePort::OnFlowRate, this).Bind(Ipv4Of(f.dstIp), f.destQp));
            }
            flow.cc->Start(m_lineRate);
        }
        // The endpoint cannot be paused: frames wait here, up to a bound.
        constexpr uint64_t kMaxHeld = 16 << 20;
        if (flow.queuedBytes + p->GetSize() > kMaxHeld)
        {
            ++m_counters.drops["dcqcn_queue_full"];
            return;
        }
        if (!flow.queue.empty() || flow.nextSend > Simulator::Now())
        {
            ++m_counters.framesPaced;
        }
        flow.queue.push_back(p);
        flow.queuedBytes += p->GetSize();
        Pace(flow);
        return;
    }
    m_port->Enqueue(p, prio);
}

void
EdgePort::FromFabric(Ptr<RoceNetDevice>, Ptr<Packet> frame, const ParsedFrame& f)
{
    std::vector<uint8_t> bytes(frame->GetSize());
    frame->CopyData(bytes.data(), static_cast<uint32_t>(bytes.size()));
    if (m_dcqcn && f.kind == FrameKind::Roce && f.ipVersion == 4)
    {
        if (f.opcode == kIbOpcodeCnp)
        {
            // For one of this endpoint's flows: the CNP names the receiver and its QP.
            auto it = m_flows.find({Ipv4Of(f.srcIp), f.destQp});
            if (it != m_flows.end())
            {
                it->second.cc->OnCnp();
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
    WriteToEndpoint(std::move(bytes));
}

void
EdgePort::WriteToEndpoint(std::vector<uint8_t> bytes)
{
    if (m_held.empty())
    {
        if (m_watching)
        {
            m_tap->Queue(std::move(bytes)); // written by FlushQueued when the burst is over
            return;
        }
        switch (m_tap->Write(bytes.data(), bytes.size()))
        {
        case TapPort::WriteStatus::Written:
            ++m_counters.toTap;
            m_counters.bytesToTap += bytes.size();
            return;
        case TapPort::WriteStatus::Failed:
            return; // counted by the tap
        case TapPort::WriteStatus::Full:
            break;
        }
    }
    Hold(std::move(bytes));
}

void
EdgePort::FlushQueued()
{
    if (!m_tap->HasQueued())
    {
        return;
    }
    std::vector<std::vector<uint8_t>> refused;
    const auto [frames, bytes] = m_tap->Flush(refused);
    m_counters.toTap += frames;
    m_counters.bytesToTap += bytes;
    for (auto& frame : refused)
    {
        Hold(std::move(frame));
    }
}

void
EdgePort::Hold(std::vector<uint8_t> bytes)
{
    // Behind a full tap, or behind frames already waiting: keep the order.
    if (m_heldBytes + bytes.size() > kHoldLimit)
    {
        ++m_counters.drops["edge_hold_full"];
        return;
    }
    ++m_counters.framesHeld;
    m_heldBytes += bytes.size();
    m_counters.peakHeldBytes = std::max(m_counters.peakHeldBytes, m_heldBytes);
    m_held.push_back(std::move(bytes));
    UpdatePause();
    if (!m_retry.IsRunning())
    {
        // The VM's reads cannot be waited on from here; try again shortly.
        m_retry = Simulator::Schedule(MicroSeconds(20), &EdgePort::DrainHeld, this);
    }
}

void
EdgePort::DrainHeld()
{
    while (!m_held.empty())
    {
        const std::vector<uint8_t>& bytes = m_held.front();
        const auto status = m_tap->Write(bytes.data(), bytes.size());
        if (status == TapPort::WriteStatus::Full)
        {
            break;
        }
        if (status == TapPort::WriteStatus::Written)
        {
            ++m_counters.toTap;
            m_counters.bytesToTap += bytes.size();
        }
        m_heldBytes -= bytes.size();
        m_held.pop_front();
    }
    UpdatePause();
    if (!m_held.empty())
    {
        m_retry = Simulator::Schedule(MicroSeconds(20), &EdgePort::DrainHeld, this);
    }
}

void
EdgePort::UpdatePause()
{
    // Only a RoCEv2 port with PFC on can ask the switch to wait; elsewhere the
    // edge just holds, up to kHoldLimit.
    if (!m_port)
    {
        return;
    }
    if (!m_portPfc)
    {
        return;
    }
    if (!m_pausing && m_heldBytes > kHoldXoff)
    {
        m_pausing = true;
        RefreshPause();
    }
    else if (m_pausing && m_heldBytes <= kHoldXon)
    {
        m_pausing = false;
        m_pauseRefresh.Cancel();
        m_port->SendPause(m_rocePriority, 0); // resume at once
    }
}

void
EdgePort::RefreshPause()
{
    constexpr uint16_t kQuanta = 0xffff;
    m_port->SendPause(m_rocePriority, kQuanta);
    ++m_counters.pausesToFabric;
    // Renewed before it runs out, for as long as the edge holds more than XON.
    m_pauseRefresh = Simulator::Schedule(
        PfcHeader::QuantaToTime(kQuanta, m_port->GetDataRate()) / 2, &EdgePort::RefreshPause, this);
}

void
EdgePort::AnswerArp(const std::vector<uint8_t>& req)
{
    // Ethernet(14) + ARP(28): htype 1, ptype 0x0800, hlen 6, plen 4, op 1 = request.
    if (req.size() < 42 || req[14] != 0 || req[15] != 1 || req[16] != 0x08 || req[17] != 0 ||
        req[20] != 0 || req[21] != 1)
    {
        ++m_counters.drops["arp_not_a_request"];
        return;
    }
    const uint32_t target =
        static_cast<uint32_t>(req[38]) << 24 | req[39] << 16 | req[40] << 8 | req[41];
    for (const auto& e : m_directory)
    {
        if (e.ipv4 != target)
        {
            continue;
        }
        std::vector<uint8_t> reply(42, 0);
        std::memcpy(reply.data(), req.data() + 6, 6);   // to the asker
        std::memcpy(reply.data() + 6, e.mac.data(), 6); // from the target
        reply[12] = 0x08;
        reply[13] = 0x06;
        std::memcpy(reply.data() + 14, req.data() + 14, 6); // htype, ptype, hlen, plen
        reply[21] = 2;                                      // reply
        std::memcpy(reply.data() + 22, e.mac.data(), 6);    // sender: the target
        std::memcpy(reply.data() + 28, req.data() + 38, 4);
        std::memcpy(reply.data() + 32, req.data() + 22, 10); // target: the asker's MAC and IP
        if (m_tap->Write(reply.data(), reply.size()) == TapPort::WriteStatus::Written)
        {
            ++m_counters.arpReplies;
        }
        return;
    }
    ++m_counters.drops["arp_unknown_target"];
}

bool
EdgePort::HandleNeighbourDiscovery(const std::vector<uint8_t>& req, const ParsedFrame& f)
{
    constexpr uint8_t kIcmpv6 = 58;
    if (f.ipVersion != 6 || f.ipProtocol != kIcmpv6 || req.size() < f.l4Offset + 24)
    {
        return false;
    }
    const uint8_t type = req[f.l4Offset];
    if (type < 133 || type > 137)
    {
        return false; // echo and the rest are routed like any IPv6
    }
    // Router/neighbour discovery stays at the edge: a routed fabric does not flood.
    const uint8_t* ip = req.data() + f.l3Offset;
    static const std::array<uint8_t, 16> kUnspecified{};
    if (type != 135 || std::memcmp(ip + 8, kUnspecified.data(), 16) == 0)
    {
        // Not a solicitation, or duplicate address detection (from ::), which must go
        // unanswered or the endpoint would give up its own address.
        ++m_counters.drops["neighbour_discovery_kept_at_edge"];
        return true;
    }
    const uint8_t* target = req.data() + f.l4Offset + 8;
    for (const auto& e : m_directory)
    {
        const auto ll = e.LinkLocal();
        if (std::memcmp(ll.data(), target, 16) != 0 ||
            std::memcmp(e.mac.data(), req.data() + 6, 6) == 0)
        {
            continue; // not this one, or the asker itself
        }
        std::vector<uint8_t> na(14 + 40 + 32, 0);
        std::memcpy(na.data(), req.data() + 6, 6); // to the asker
        std::memcpy(na.data() + 6, e.mac.data(), 6);
        na[12] = 0x86;
        na[13] = 0xdd;
        uint8_t* v6 = na.data() + 14;
        v6[0] = 0x60;
        v6[5] = 32; // payload: NA 24 + target link-layer option 8
        v6[6] = kIcmpv6;
        v6[7] = 255; // hop limit 255, as RFC 4861 requires
        std::memcpy(v6 + 8, ll.data(), 16);
        std::memcpy(v6 + 24, ip + 8, 16); // to the solicitation's source
        uint8_t* icmp = v6 + 40;
        icmp[0] = 136;  // neighbour advertisement
        icmp[4] = 0x60; // solicited, override
        std::memcpy(icmp + 8, ll.data(), 16);
        icmp[24] = 2; // option: target link-layer address
        icmp[25] = 1; // 8 bytes
        std::memcpy(icmp + 26, e.mac.data(), 6);
        const uint16_t sum = Icmpv6Checksum(v6 + 8, v6 + 24, icmp, 32);
        icmp[2] = sum >> 8;
        icmp[3] = sum & 0xff;
        if (m_tap->Write(na.data(), na.size()) == TapPort::WriteStatus::Written)
        {
            ++m_counters.neighbourAdverts;
        }
        return true;
    }
    ++m_counters.drops["neighbour_unknown_target"];
    return true;
}

EdgePort::Counters
EdgePort::GetCounters() const
{
    Counters c = m_counters;
    c.tapWriteFailures = m_tap->WriteFailures();
    if (c.tapWriteFailures > 0)
    {
        c.drops["tap_write_error"] = c.tapWriteFailures;
    }
    c.framesRead = m_tap->FramesRead();
    c.heldBytesNow = m_heldBytes;
    if (m_tap->Truncated() > 0)
    {
        c.drops["oversize"] += m_tap->Truncated();
    }
    if (const uint64_t lost = m_tap->SocketDrops())
    {
        c.drops["socket_overflow"] = lost; // from the endpoint, before the edge saw them
    }
    std::lock_guard<std::mutex> lock(m_filterMutex);
    for (const auto& [reason, n] : m_filter.DropsByReason())
    {
        c.drops[reason] += n;
    }
    if (m_uplink)
    {
        for (const auto& [reason, n] : m_uplink->Drops())
        {
            c.drops[reason] += n;
        }
    }
    return c;
}

} // namespace fabemu
