#include "ns3/roce-fabric-helper.h"

#include "ns3/abort.h"
#include "ns3/boolean.h"
#include "ns3/bth-header.h"
#include "ns3/host-address.h"
#include "ns3/link-errors.h"
#include "ns3/pointer.h"
#include "ns3/rank-exchange.h"
#include "ns3/rank-sent-tag.h"
#include "ns3/roce-channel.h"
#include "ns3/roce-recorders.h"
#include "ns3/roce-remote-channel.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"
#include "ns3/wait-cycle.h"

#include <algorithm>
#include <deque>
#include <map>
#include <stdexcept>
#include <unordered_map>

namespace ns3
{

namespace
{
/// Streams below this are left to workloads (FlowRunner users pick small ones).
constexpr int64_t kFirstStream = 1000;
} // namespace

RoceFabricHelper::RoceFabricHelper()
    : m_outages([this](uint32_t link) {
          return m_devices[2 * link]->GetBitErrorDrops() +
                 m_devices[2 * link + 1]->GetBitErrorDrops();
      })
{
    m_deviceFactory.SetTypeId(RoceNetDevice::GetTypeId());
    m_nicFactory.SetTypeId(RoceNic::GetTypeId());
    m_switchFactory.SetTypeId(RoceSwitch::GetTypeId());
}

void
RoceFabricHelper::SetDeviceAttribute(const std::string& name, const AttributeValue& value)
{
    m_deviceFactory.Set(name, value);
}

void
RoceFabricHelper::SetNicAttribute(const std::string& name, const AttributeValue& value)
{
    m_nicFactory.Set(name, value);
}

void
RoceFabricHelper::SetSwitchAttribute(const std::string& name, const AttributeValue& value)
{
    m_switchFactory.Set(name, value);
}

RoceFabricHelper::~RoceFabricHelper() = default;

void
RoceFabricHelper::EnablePcap(const std::string& path, uint32_t host)
{
    m_pcaps.push_back(Create<PcapWriter>(GetPort(host), path));
}

void
RoceFabricHelper::DisablePcaps()
{
    m_pcaps.clear();
}

Ipv4Address
RoceFabricHelper::GetHostAddress(uint32_t i) const
{
    return Ipv4Address(HostIpv4(i));
}

Ptr<RoceChannel>
RoceFabricHelper::NewCable(const TopologySpec::Link& link) const
{
    Ptr<RoceChannel> cable;
    if (!CrossesRanks(link))
    {
        cable = CreateObject<RoceChannel>();
    }
    else
    {
        const std::string name = m_spec.Nodes()[link.a].name + "-" + m_spec.Nodes()[link.b].name;
        const Time lookahead = RankSentTag::Lookahead(link.params.delay, name);
        // The far rank hears of a frame RankSentTag::Lead() before it arrives.
        cable = CreateObject<RoceRemoteChannel>();
        cable->SetAttribute("Delay", TimeValue(lookahead));
        return cable;
    }
    cable->SetAttribute("Delay", TimeValue(link.params.delay));
    return cable;
}

void
RoceFabricHelper::ReceiveFromOtherRanks(Ptr<RoceNetDevice> dev, const TopologySpec::Link& link)
{
    if (CrossesRanks(link))
    {
        RankExchange::Listen(dev, MakeBoundCallback(&RoceRemoteChannel::ArriveFromRank, dev));
    }
}

void
RoceFabricHelper::Install(const TopologySpec& spec)
{
    m_spec = spec;
    const auto& nodes = spec.Nodes();
    std::vector<Ptr<Node>> ns3Nodes(nodes.size());
    std::vector<uint32_t> hostIndex(nodes.size(), UINT32_MAX);
    for (uint32_t h = 0; h < spec.Hosts().size(); ++h)
    {
        hostIndex[spec.Hosts()[h]] = h;
    }
    NS_ABORT_MSG_IF(!m_rankOf.empty() && m_rankOf.size() != nodes.size(),
                    "SetPartition: " << m_rankOf.size() << " ranks given for " << nodes.size()
                                     << " nodes");
    for (uint32_t i = 0; i < nodes.size(); ++i)
    {
        ns3Nodes[i] = CreateObject<Node>(m_rankOf.empty() ? 0 : m_rankOf[i]);
    }
    for (uint32_t h : spec.Hosts())
    {
        m_hostNodes.Add(ns3Nodes[h]);
    }

    // One device per link end; remember which device of a node serves which link.
    std::vector<std::map<uint32_t, Ptr<RoceNetDevice>>> devOf(nodes.size());
    for (uint32_t l = 0; l < spec.Links().size(); ++l)
    {
        const auto& link = spec.Links()[l];
        Ptr<RoceChannel> cable = NewCable(link);
        for (uint32_t end : {link.a, link.b})
        {
            Ptr<RoceNetDevice> dev = m_deviceFactory.Create<RoceNetDevice>();
            dev->SetAddress(Mac48Address::Allocate());
            dev->SetDataRate(link.params.rate);
            ns3Nodes[end]->AddDevice(dev);
            dev->Attach(cable);
            ReceiveFromOtherRanks(dev, link);
            devOf[end][l] = dev;
            m_devices.push_back(dev);
        }
    }

    for (uint32_t h = 0; h < spec.Hosts().size(); ++h)
    {
        const uint32_t node = spec.Hosts()[h];
        NS_ABORT_MSG_IF(devOf[node].size() != 1, nodes[node].name
                                                     << " has " << devOf[node].size()
                                                     << " links; a host has exactly one NIC");
        const Ptr<RoceNetDevice> port = devOf[node].begin()->second;
        m_hostPorts.push_back(port);
        if (std::find(m_external.begin(), m_external.end(), h) != m_external.end())
        {
            m_nics.push_back(nullptr); // a real endpoint's: its edge owns the port
            continue;
        }
        Ptr<RoceNic> nic = m_nicFactory.Create<RoceNic>();
        nic->Setup(port, GetHostAddress(h));
        ns3Nodes[node]->AggregateObject(nic);
        m_nics.push_back(nic);
    }

    for (uint32_t u = 0; u < nodes.size(); ++u)
    {
        if (!nodes[u].isSwitch)
        {
            continue;
        }
        Ptr<RoceSwitch> sw = m_switchFactory.Create<RoceSwitch>();
        ns3Nodes[u]->AggregateObject(sw);
        m_switchNodes.Add(ns3Nodes[u]);
        std::map<uint32_t, uint32_t> portOfLink;
        for (const auto& [link, dev] : devOf[u])
        {
            portOfLink[link] = sw->AddPort(dev);
        }
        const std::string problem = sw->MmuProblem();
        if (!problem.empty())
        {
            // A set-up mistake the user can fix (scenario values), not a model bug.
            throw std::invalid_argument("switch " + spec.Nodes()[u].name + ": " + problem);
        }
        sw->ConfigureMmu();
        // Fixed streams: a run's random draws depend on its seed alone, not on
        // how many random variables the process made before (a second run).
        sw->AssignStreams(kFirstStream + static_cast<int64_t>(m_switches.size()));
        m_switches.push_back(sw);
        m_switchNode.push_back(u);
    }
    InstallRoutes(spec);
}

void
RoceFabricHelper::InstallRoutes(const TopologySpec& routed)
{
    // A host at a time: the whole table of next hops is never held.
    routed.ForEachHostNextHops([&](uint32_t h, const std::vector<std::vector<uint32_t>>& hops) {
        for (size_t i = 0; i < m_switches.size(); ++i)
        {
            const uint32_t u = m_switchNode[i];
            for (uint32_t link : hops[u])
            {
                const uint32_t end = m_spec.Links()[link].a == u ? 0 : 1;
                m_switches[i]->AddRoute(GetHostAddress(h),
                                        m_switches[i]->GetPortIndex(m_devices[2 * link + end]));
            }
        }
    });
    for (const auto& [host, address] : m_routes6)
    {
        for (size_t i = 0; i < m_switches.size(); ++i)
        {
            // The same ports as the host's IPv4 route.
            for (uint32_t port : m_switches[i]->GetRoute(GetHostAddress(host)))
            {
                m_switches[i]->AddRoute(address, port);
            }
        }
    }
}

void
RoceFabricHelper::SetLinkUp(uint32_t link, bool up)
{
    NS_ABORT_MSG_IF(2 * link + 1 >= m_devices.size(), "RoceFabricHelper: no link " << link);
    if (!m_outages.SetUp(link, {m_devices[2 * link], m_devices[2 * link + 1]}, up))
    {
        return; // already so: nothing for routing to see
    }
    // The routes change once the switches at its ends have seen it (the slower of them).
    Time detection;
    for (uint32_t end = 0; end < 2; ++end)
    {
        for (size_t i = 0; i < m_switches.size(); ++i)
        {
            const auto& l = m_spec.Links()[link];
            if (m_switchNode[i] == (end == 0 ? l.a : l.b))
            {
                detection = Max(detection, m_switches[i]->GetLinkDetectionTime());
            }
        }
    }
    Simulator::Schedule(detection, &RoceFabricHelper::Reroute, this);
}

void
RoceFabricHelper::Reroute()
{
    TopologySpec routed = m_spec;
    for (uint32_t l = 0; l < m_spec.Links().size(); ++l)
    {
        routed.SetLinkUp(l, !m_outages.IsDown(l));
    }
    for (const auto& sw : m_switches)
    {
        sw->ClearRoutes();
    }
    InstallRoutes(routed);
    ++m_reroutes;
}

uint64_t
RoceFabricHelper::GetLinkDownDrops() const
{
    return m_outages.GetDrops();
}

void
RoceFabricHelper::AddHostRoute(uint32_t host, Ipv6Address address)
{
    NS_ABORT_MSG_IF(host >= GetNHosts(), "no host h" << host);
    m_routes6.emplace_back(host, address); // again after each routing change
    for (size_t i = 0; i < m_switches.size(); ++i)
    {
        // The same ports as the host's IPv4 route.
        for (uint32_t port : m_switches[i]->GetRoute(GetHostAddress(host)))
        {
            m_switches[i]->AddRoute(address, port);
        }
    }
}

RdmaFabric::Connection
RoceFabricHelper::Connect(uint32_t a, uint32_t b)
{
    Ptr<RoceNic> na = GetNic(a);
    Ptr<RoceNic> nb = GetNic(b);
    NS_ABORT_MSG_IF(!na || !nb, "h" << (na ? b : a)
                                    << " is an external host (a real endpoint): no simulated "
                                       "flow can start or end there");
    Ptr<RdmaQueuePair> qa = na->CreateQp();
    Ptr<RdmaQueuePair> qb = nb->CreateQp();
    // Each connection its own UDP source port: the ECMP entropy rxe also gives.
    const uint16_t port = static_cast<uint16_t>(49152 + (m_connections++ % 16384));
    na->Connect(qa, nb->GetAddress(), Mac48Address::ConvertFrom(nb->GetDevice()->GetAddress()),
                qb->GetQpn(), port);
    nb->Connect(qb, na->GetAddress(), Mac48Address::ConvertFrom(na->GetDevice()->GetAddress()),
                qa->GetQpn(), port);
    m_qpHost[PeekPointer(qa)] = a;
    m_qpHost[PeekPointer(qb)] = b;
    return Connection{qa, qb, port, kRoceV2UdpPort};
}

void
RoceFabricHelper::Disconnect(const Connection& c)
{
    for (const auto& qp : {c.requester, c.responder})
    {
        auto it = m_qpHost.find(PeekPointer(qp));
        if (it != m_qpHost.end())
        {
            m_goneRecovery += DynamicCast<RdmaQueuePair>(qp)->GetRecovery();
            GetNic(it->second)->DestroyQp(DynamicCast<RdmaQueuePair>(qp));
            m_qpHost.erase(it);
        }
    }
}

RoceFabricHelper::Path
RoceFabricHelper::PathBetween(uint32_t a, uint32_t b) const
{
    Path p;
    for (uint32_t link : m_spec.PathLinks(a, b))
    {
        p.rates.push_back(m_spec.Links()[link].params.rate);
        p.delays.push_back(m_spec.Links()[link].params.delay);
    }
    return p;
}

Time
RoceFabricHelper::IdealFct(uint32_t a, uint32_t b, uint64_t bytes) const
{
    // The flow alone on the fabric: its frames leave back to back and are stored
    // and forwarded hop by hop (each frame leaves a link when it has fully arrived
    // and the link is free), then the ACK of the last one returns.
    const Path p = PathBetween(a, b);
    TypeId::AttributeInformation mtuInfo;
    TypeId::LookupByName("ns3::RdmaQueuePair").LookupAttributeByName("Mtu", &mtuInfo);
    const uint64_t mtu = DynamicCast<const UintegerValue>(mtuInfo.initialValue)->Get();
    BooleanValue vlan;
    GetNic(a)->GetAttribute("Vlan", vlan);
    const uint64_t packets = std::max<uint64_t>(1, (bytes + mtu - 1) / mtu);
    auto frameBytes = [&](uint64_t k) {
        const uint64_t payload = k + 1 < packets ? mtu : bytes - (packets - 1) * mtu;
        return RoceNetDevice::WireBytes(
            RoceV2WriteFrameBytes(static_cast<uint32_t>(payload), vlan.Get(), k == 0));
    };
    auto txTime = [](uint32_t wire, DataRate rate) {
        return Seconds(wire * 8.0 / rate.GetBitRate());
    };
    const size_t hops = p.rates.size();
    // A frame's time on each link depends on its size alone, and a flow's frames have
    // three sizes at most (the first carries the RETH, the last the rest): each size's
    // times are computed once, not once a frame.
    auto txTimes = [&](uint32_t wire) {
        std::vector<Time> t(hops);
        for (size_t i = 0; i < hops; ++i)
        {
            t[i] = txTime(wire, p.rates[i]);
        }
        return t;
    };
    const std::vector<Time> firstTx = txTimes(frameBytes(0));
    const std::vector<Time> middleTx = packets > 2 ? txTimes(frameBytes(1)) : firstTx;
    const std::vector<Time> lastTx = packets > 1 ? txTimes(frameBytes(packets - 1)) : firstTx;
    std::vector<Time> linkFree(hops); // when each link finishes its previous frame
    Time arrival;                     // when the last frame has fully arrived at b
    for (uint64_t k = 0; k < packets; ++k)
    {
        const std::vector<Time>& tx = k == 0 ? firstTx : k + 1 == packets ? lastTx : middleTx;
        Time at; // the frame is at the start of link i, whole
        for (size_t i = 0; i < hops; ++i)
        {
            linkFree[i] = std::max(at, linkFree[i]) + tx[i];
            at = linkFree[i] + p.delays[i];
        }
        arrival = at;
    }
    // The ACK: a payload-less frame's headers and ICRC, with an AETH (4) after the BTH.
    const uint32_t ack = RoceNetDevice::WireBytes(RoceV2WriteFrameBytes(0, vlan.Get(), false) + 4);
    for (size_t i = hops; i-- > 0;)
    {
        arrival += txTime(ack, p.rates[i]) + p.delays[i];
    }
    return arrival;
}

uint64_t
RoceFabricHelper::TotalDrops() const
{
    uint64_t n = 0;
    for (const auto& sw : m_switches)
    {
        n += sw->GetDrops();
    }
    return n;
}

uint64_t
RoceFabricHelper::TotalPfcFrames() const
{
    uint64_t n = 0;
    for (const auto& sw : m_switches)
    {
        n += sw->GetPausesSent();
    }
    return n;
}

void
RoceFabricHelper::StartPauseStorm(uint32_t host, Time duration)
{
    GetPort(host)->StartPauseStorm(duration);
}

uint64_t
RoceFabricHelper::GetPfcWatchdogTriggers() const
{
    uint64_t n = 0;
    for (const auto& sw : m_switches)
    {
        for (uint32_t p = 0; p < sw->GetNPorts(); ++p)
        {
            n += sw->GetPort(p)->GetPfcStorms();
        }
    }
    for (const auto& port : m_hostPorts)
    {
        n += port->GetPfcStorms();
    }
    return n;
}

uint64_t
RoceFabricHelper::TotalEcnMarks() const
{
    uint64_t n = 0;
    for (const auto& sw : m_switches)
    {
        n += sw->GetEcnMarks();
    }
    return n;
}

uint64_t
RoceFabricHelper::TotalCnps() const
{
    uint64_t n = 0;
    for (const auto& nic : m_nics)
    {
        n += nic ? nic->GetCnpsSent() : 0; // an external host's edge counts its own
    }
    return n;
}

uint64_t
RoceFabricHelper::CongestionDrops() const
{
    uint64_t n = 0;
    for (const auto& sw : m_switches)
    {
        n += sw->GetDrops(SwitchDropReason::BufferFull) +
             sw->GetDrops(SwitchDropReason::HeadroomOverflow);
    }
    return n;
}

std::vector<std::pair<uint32_t, uint8_t>>
RoceFabricHelper::FindPfcDeadlock() const
{
    // Nodes: switch egress queues (device, priority), paused with frames waiting. The
    // pause comes from the peer's ingress buffer, which waits for the egress queues of
    // the peer's switch that hold frames from it. Devices are 2 l + e: the peer of i is
    // i ^ 1.
    using Node = std::pair<uint32_t, uint8_t>;
    std::unordered_map<const RoceNetDevice*, uint32_t> index;
    for (uint32_t i = 0; i < m_devices.size(); ++i)
    {
        index[PeekPointer(m_devices[i])] = i;
    }
    std::vector<Node> paused;
    for (uint32_t i = 0; i < m_devices.size(); ++i)
    {
        for (uint8_t p = 0; p < RoceNetDevice::kPriorities; ++p)
        {
            if (m_devices[i]->IsPaused(p) && m_devices[i]->GetQueueBytes(p) > 0)
            {
                paused.emplace_back(i, p);
            }
        }
    }
    return FindWaitCycle(paused, [&](const Node& n) {
        std::vector<Node> next;
        const Ptr<const RoceNetDevice> ingress = m_devices[n.first ^ 1];
        for (const auto& sw : m_switches)
        {
            for (const auto& egress : sw->GetEgressHolding(ingress, n.second))
            {
                next.emplace_back(index.at(PeekPointer(egress)), n.second);
            }
        }
        return next;
    });
}

std::map<std::string, uint64_t>
RoceFabricHelper::DropsByReason() const
{
    std::map<std::string, uint64_t> out;
    for (const auto& sw : m_switches)
    {
        for (auto why : {SwitchDropReason::BufferFull, SwitchDropReason::HeadroomOverflow,
                         SwitchDropReason::NoRoute, SwitchDropReason::NotIp,
                         SwitchDropReason::Malformed, SwitchDropReason::PfcWatchdog})
        {
            if (sw->GetDrops(why) > 0)
            {
                out[SwitchDropReasonName(why)] += sw->GetDrops(why);
            }
        }
    }
    return out;
}

void
RoceFabricHelper::SetLinkBitErrorRate(uint32_t link, double ber)
{
    NS_ABORT_MSG_IF(2 * link + 1 >= m_devices.size(), "RoceFabricHelper: no link " << link);
    for (uint32_t end = 0; end < 2; ++end)
    {
        m_outages.SetErrorModel(link, {m_devices[2 * link], m_devices[2 * link + 1]}, end,
                                BitErrorModel(link, end, ber));
    }
}

uint64_t
RoceFabricHelper::GetBitErrorDrops() const
{
    uint64_t n = 0;
    for (const auto& dev : m_devices)
    {
        n += dev->GetBitErrorDrops();
    }
    return n - m_outages.GetDrops(); // the same drop counters: frames a down link lost
}

RdmaQueuePair::Recovery
RoceFabricHelper::GetRecovery() const
{
    RdmaQueuePair::Recovery r = m_goneRecovery;
    for (const auto& [qp, host] : m_qpHost)
    {
        r += dynamic_cast<const RdmaQueuePair&>(*qp).GetRecovery();
    }
    return r;
}

void
RoceFabricHelper::SetLinkRate(uint32_t link, DataRate rate)
{
    NS_ABORT_MSG_IF(2 * link + 1 >= m_devices.size(), "RoceFabricHelper: no link " << link);
    m_devices[2 * link]->SetDataRate(rate); // Install adds a link's two ends in turn
    m_devices[2 * link + 1]->SetDataRate(rate);
}

uint64_t
RoceFabricHelper::GetBytesReceived() const
{
    uint64_t n = 0;
    for (const auto& [qp, host] : m_qpHost)
    {
        n += qp->GetBytesReceived();
    }
    return n;
}

} // namespace ns3
