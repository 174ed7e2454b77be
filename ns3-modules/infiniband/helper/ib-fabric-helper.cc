#include "ns3/ib-fabric-helper.h"

#include "ns3/abort.h"
#include "ns3/dispose-at-destroy.h"
#include "ns3/ib-recorders.h"
#include "ns3/link-errors.h"
#include "ns3/node.h"
#include "ns3/pointer.h"
#include "ns3/rank-sent-tag.h"
#include "ns3/remote-port-channel.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"
#include "ns3/wait-cycle.h"

#include <algorithm>
#include <map>

namespace ns3
{

IbFabricHelper::IbFabricHelper()
    : m_outages([this](uint32_t link) {
          return m_ports[2 * link]->GetBitErrorDrops() + m_ports[2 * link + 1]->GetBitErrorDrops();
      })
{
    m_portFactory.SetTypeId(IbPort::GetTypeId());
    m_hcaFactory.SetTypeId(IbHca::GetTypeId());
    m_switchFactory.SetTypeId(IbSwitch::GetTypeId());
}

void
IbFabricHelper::SetPortAttribute(const std::string& name, const AttributeValue& value)
{
    m_portFactory.Set(name, value);
}

void
IbFabricHelper::SetHcaAttribute(const std::string& name, const AttributeValue& value)
{
    m_hcaFactory.Set(name, value);
}

void
IbFabricHelper::SetSwitchAttribute(const std::string& name, const AttributeValue& value)
{
    m_switchFactory.Set(name, value);
}

IbFabricHelper::~IbFabricHelper() = default;

void
IbFabricHelper::EnablePcap(const std::string& path, uint32_t host)
{
    m_pcaps.push_back(Create<IbPcapWriter>(GetPort(host), path));
}

void
IbFabricHelper::DisablePcaps()
{
    m_pcaps.clear();
}

void
IbFabricHelper::SetLmc(uint8_t lmc)
{
    NS_ABORT_MSG_IF(lmc > 7, "IbFabricHelper: LMC must be 0..7, not " << +lmc);
    m_lmc = lmc;
}

void
IbFabricHelper::Install(const TopologySpec& spec)
{
    NS_ABORT_MSG_IF(((spec.Hosts().size() + 1) << m_lmc) > 0xbfff,
                    "IbFabricHelper: " << spec.Hosts().size() << " hosts with LMC " << +m_lmc
                                       << " need more unicast LIDs than there are");
    m_spec = spec;
    const auto& nodes = spec.Nodes();
    std::vector<std::map<uint32_t, Ptr<IbPort>>> portOf(nodes.size()); // node -> link -> port
    for (uint32_t l = 0; l < spec.Links().size(); ++l)
    {
        const auto& link = spec.Links()[l];
        Ptr<IbPort> a = m_portFactory.Create<IbPort>();
        Ptr<IbPort> b = m_portFactory.Create<IbPort>();
        for (const auto& port : {a, b})
        {
            port->SetAttribute("DataRate", DataRateValue(link.params.rate));
            DisposeAtDestroy(port);
            m_ports.push_back(port);
        }
        a->Attach(b, link.params.delay);
        b->Attach(a, link.params.delay);
        portOf[link.a][l] = a;
        portOf[link.b][l] = b;
    }
    for (uint32_t h = 0; h < spec.Hosts().size(); ++h)
    {
        const uint32_t node = spec.Hosts()[h];
        NS_ABORT_MSG_IF(portOf[node].size() != 1, nodes[node].name
                                                      << " has " << portOf[node].size()
                                                      << " links; a host has one HCA port");
        const Ptr<IbPort> port = portOf[node].begin()->second;
        m_hostPorts.push_back(port);
        if (std::find(m_external.begin(), m_external.end(), h) != m_external.end())
        {
            m_hcas.push_back(nullptr); // a real endpoint's: its gateway owns the port
            continue;
        }
        Ptr<IbHca> hca = m_hcaFactory.Create<IbHca>();
        hca->Setup(port, BaseLid(h));
        DisposeAtDestroy(hca);
        m_hcas.push_back(hca);
    }
    for (uint32_t u = 0; u < nodes.size(); ++u)
    {
        if (!nodes[u].isSwitch)
        {
            continue;
        }
        Ptr<IbSwitch> sw = m_switchFactory.Create<IbSwitch>();
        std::map<uint32_t, uint32_t> portOfLink;
        for (const auto& [link, port] : portOf[u])
        {
            portOfLink[link] = sw->AddPort(port);
        }
        DisposeAtDestroy(sw);
        m_switches.push_back(sw);
        m_switchNode.push_back(u);
        m_portOfLink.push_back(std::move(portOfLink));
    }
    m_sm = CreateObject<IbSubnetManager>();
    LoadForwardingTables(spec);
    if (!m_rankOf.empty())
    {
        JoinRanks(spec);
    }
    for (uint32_t i = 0; i < m_ports.size(); ++i)
    {
        const auto& link = spec.Links()[i / 2];
        if (Local(i % 2 == 0 ? link.a : link.b))
        {
            m_ports[i]->Start();
        }
    }
}

void
IbFabricHelper::JoinRanks(const TopologySpec& spec)
{
    const auto& nodes = spec.Nodes();
    NS_ABORT_MSG_IF(m_rankOf.size() != nodes.size(), "SetPartition: " << m_rankOf.size()
                                                                      << " ranks given for "
                                                                      << nodes.size() << " nodes");
    std::vector<Ptr<Node>> ns3Nodes;
    for (uint32_t i = 0; i < nodes.size(); ++i)
    {
        ns3Nodes.push_back(CreateObject<Node>(m_rankOf[i]));
    }
    for (uint32_t l = 0; l < spec.Links().size(); ++l)
    {
        const auto& link = spec.Links()[l];
        const Ptr<IbPort> a = m_ports[2 * l];
        const Ptr<IbPort> b = m_ports[2 * l + 1];
        a->SetContext(ns3Nodes[link.a]->GetId(), 2 * l);
        b->SetContext(ns3Nodes[link.b]->GetId(), 2 * l + 1);
        if (m_rankOf[link.a] == m_rankOf[link.b])
        {
            continue;
        }
        const std::string name = nodes[link.a].name + "-" + nodes[link.b].name;
        const auto [da, db] =
            RemotePortChannel::Cable(ns3Nodes[link.a], ns3Nodes[link.b], link.params.delay, name);
        a->SetToRank(MakeCallback(&RemotePortDevice::SendToRank, da));
        da->SetArrivalCallback(MakeCallback(&IbPort::ArriveFromRank, a));
        b->SetToRank(MakeCallback(&RemotePortDevice::SendToRank, db));
        db->SetArrivalCallback(MakeCallback(&IbPort::ArriveFromRank, b));
    }
}

RdmaFabric::Connection
IbFabricHelper::Connect(uint32_t a, uint32_t b)
{
    NS_ABORT_MSG_IF(!GetHca(a), "h" << a
                                    << " is an external host (a real endpoint): no simulated "
                                       "flow can start or end there");
    UintegerValue sl;
    GetHca(a)->GetAttribute("ServiceLevel", sl);
    return Connect(a, b, static_cast<uint8_t>(sl.Get()));
}

RdmaFabric::Connection
IbFabricHelper::Connect(uint32_t a, uint32_t b, uint8_t sl)
{
    Ptr<IbHca> ha = GetHca(a);
    Ptr<IbHca> hb = GetHca(b);
    NS_ABORT_MSG_IF(!ha || !hb, "h" << (ha ? b : a)
                                    << " is an external host (a real endpoint): no simulated "
                                       "flow can start or end there");
    Ptr<RdmaQueuePair> qa = ha->CreateQp();
    Ptr<RdmaQueuePair> qb = hb->CreateQp();
    // With LMC, each connection takes the next of the peer's LIDs: the next path.
    const uint16_t path = static_cast<uint16_t>(m_connections++ % (1u << m_lmc));
    ha->Connect(qa, static_cast<uint16_t>(hb->GetLid() + path), qb->GetQpn(), sl);
    hb->Connect(qb, static_cast<uint16_t>(ha->GetLid() + path), qa->GetQpn(), sl);
    m_qpHost[PeekPointer(qa)] = a;
    m_qpHost[PeekPointer(qb)] = b;
    // IB has no UDP ports; FCT files carry the QP numbers there.
    return Connection{qa, qb, static_cast<uint16_t>(qa->GetQpn()),
                      static_cast<uint16_t>(qb->GetQpn())};
}

void
IbFabricHelper::Disconnect(const Connection& c)
{
    for (const auto& qp : {c.requester, c.responder})
    {
        auto it = m_qpHost.find(PeekPointer(qp));
        if (it != m_qpHost.end())
        {
            m_goneRecovery += DynamicCast<RdmaQueuePair>(qp)->GetRecovery();
            GetHca(it->second)->DestroyQp(DynamicCast<RdmaQueuePair>(qp));
            m_qpHost.erase(it);
        }
    }
}

Time
IbFabricHelper::IdealFct(uint32_t a, uint32_t b, uint64_t bytes) const
{
    // Alone on the fabric with credits never short: packets leave back to back and
    // cut through every switch (head + switching latency), then the last ACK returns.
    const auto path = m_spec.PathLinks(a, b);
    TypeId::AttributeInformation info;
    TypeId::LookupByName("ns3::RdmaQueuePair").LookupAttributeByName("Mtu", &info);
    const uint64_t mtu = DynamicCast<const UintegerValue>(info.initialValue)->Get();
    TypeId::LookupByName("ns3::IbSwitch").LookupAttributeByName("SwitchingLatency", &info);
    const Time latency = DynamicCast<const TimeValue>(info.initialValue)->Get();
    const uint64_t packets = std::max<uint64_t>(1, (bytes + mtu - 1) / mtu);
    // LRH 8, BTH 12, ICRC 4, VCRC 2; RETH 16 on the first packet.
    const uint32_t headers = kIbLrhBytes + 12 + kIbIcrcBytes + kIbVcrcBytes;
    auto tx = [](uint64_t wire, DataRate rate) { return Seconds(wire * 8.0 / rate.GetBitRate()); };
    // A packet's time on each link depends on its size alone: three sizes at most (the
    // first with its RETH, the middle ones, the last), each computed once.
    auto txTimes = [&](uint64_t k) {
        const uint64_t payload = k + 1 < packets ? mtu : bytes - (packets - 1) * mtu;
        const uint64_t wire = payload + (4 - payload % 4) % 4 + headers + (k == 0 ? 16 : 0);
        std::vector<Time> t(path.size());
        for (size_t i = 0; i < path.size(); ++i)
        {
            t[i] = tx(wire, m_spec.Links()[path[i]].params.rate);
        }
        return t;
    };
    const std::vector<Time> firstTx = txTimes(0);
    const std::vector<Time> middleTx = packets > 2 ? txTimes(1) : firstTx;
    const std::vector<Time> lastTx = packets > 1 ? txTimes(packets - 1) : firstTx;
    std::vector<Time> linkFree(path.size());
    Time arrival;
    for (uint64_t k = 0; k < packets; ++k)
    {
        const std::vector<Time>& txk = k == 0 ? firstTx : k + 1 == packets ? lastTx : middleTx;
        Time head; // the packet's head at the start of link i
        for (size_t i = 0; i < path.size(); ++i)
        {
            const auto& p = m_spec.Links()[path[i]].params;
            const Time start = std::max(head, linkFree[i]);
            linkFree[i] = start + txk[i];
            head = start + p.delay + latency;
            arrival = linkFree[i] + p.delay;
        }
    }
    for (size_t i = path.size(); i-- > 0;)
    {
        const auto& p = m_spec.Links()[path[i]].params;
        arrival += tx(headers + 4, p.rate) + p.delay + (i > 0 ? latency : Time(0)); // ACK with AETH
    }
    return arrival;
}

std::vector<std::pair<uint32_t, uint8_t>>
IbFabricHelper::FindCreditLoop() const
{
    // Nodes: (port, VL) whose head packet waits for credit. (P, v) waits for the buffer
    // of P's peer on v, which packets queued at other ports hold: an edge to each such
    // (P', v') that is itself stalled. A cycle is a loop no credit can leave.
    using Node = std::pair<uint32_t, uint8_t>;
    std::map<std::pair<const IbPort*, uint8_t>, std::vector<Node>> heldAt; // buffer -> queues
    std::vector<Node> stalled;
    for (uint32_t i = 0; i < m_ports.size(); ++i)
    {
        for (uint8_t vl = 0; vl < m_ports[i]->GetNumDataVls(); ++vl)
        {
            if (!m_ports[i]->IsCreditStalled(vl))
            {
                continue;
            }
            stalled.emplace_back(i, vl);
            for (const auto& [holder, hvl] : m_ports[i]->GetHolders(vl))
            {
                heldAt[{PeekPointer(holder), hvl}].emplace_back(i, vl);
            }
        }
    }
    return FindWaitCycle(stalled, [&](const Node& n) {
        const auto it = heldAt.find({PeekPointer(m_ports[n.first]->GetPeer()), n.second});
        return it == heldAt.end() ? std::vector<Node>{} : it->second;
    });
}

uint64_t
IbFabricHelper::TotalCreditStalls() const
{
    uint64_t n = 0;
    for (const auto& p : m_ports)
    {
        n += p->GetCreditStalls();
    }
    return n;
}

uint64_t
IbFabricHelper::TotalOverflows() const
{
    uint64_t n = 0;
    for (const auto& p : m_ports)
    {
        n += p->GetOverflows();
    }
    return n;
}

uint64_t
IbFabricHelper::TotalFcps() const
{
    uint64_t n = 0;
    for (const auto& p : m_ports)
    {
        n += p->GetFcpsSent();
    }
    return n;
}

uint64_t
IbFabricHelper::TotalNoRouteDrops() const
{
    uint64_t n = 0;
    for (const auto& s : m_switches)
    {
        n += s->GetNoRouteDrops();
    }
    return n;
}

uint64_t
IbFabricHelper::TotalFecnMarks() const
{
    uint64_t n = 0;
    for (const auto& s : m_switches)
    {
        n += s->GetFecnMarks();
    }
    return n;
}

uint64_t
IbFabricHelper::TotalBecns() const
{
    uint64_t n = 0;
    for (const auto& h : m_hcas)
    {
        n += h ? h->GetBecnsReceived() : 0;
    }
    return n;
}

void
IbFabricHelper::LoadForwardingTables(const TopologySpec& spec)
{
    // The subnet manager's sweep: min-hop or up/down linear forwarding tables.
    const auto hops = m_routing == Routing::UpDown ? spec.UpDownNextHops() : spec.NextHops();
    for (size_t i = 0; i < m_switches.size(); ++i)
    {
        const Ptr<IbSwitch> sw = m_switches[i];
        sw->ClearRoutes();
        for (uint32_t h = 0; h < spec.Hosts().size(); ++h)
        {
            const auto& choices = hops[m_switchNode[i]][h];
            if (choices.empty())
            {
                continue; // another rail of a cluster without spines, or cut off: no entry
            }
            for (uint32_t path = 0; path < (1u << m_lmc); ++path)
            {
                // Equal next hops taken in turn: by host, then by the LID's path bits.
                const uint16_t dlid = static_cast<uint16_t>(BaseLid(h) + path);
                sw->SetRoute(dlid, m_portOfLink[i].at(choices[(h + 1 + path) % choices.size()]));
            }
        }
    }
}

void
IbFabricHelper::SetLinkUp(uint32_t link, bool up)
{
    NS_ABORT_MSG_IF(2 * link + 1 >= m_ports.size(), "IbFabricHelper: no link " << link);
    if (!m_outages.SetUp(link, {m_ports[2 * link], m_ports[2 * link + 1]}, up))
    {
        return; // already so: nothing for the subnet manager to see
    }
    Simulator::Schedule(m_sm->NextSweep(Simulator::Now()) - Simulator::Now(),
                        &IbFabricHelper::Sweep, this);
}

void
IbFabricHelper::Sweep()
{
    TopologySpec seen = m_spec;
    for (uint32_t l = 0; l < m_spec.Links().size(); ++l)
    {
        seen.SetLinkUp(l, !m_outages.IsDown(l));
    }
    LoadForwardingTables(seen);
    m_sm->NotifySweep();
}

uint64_t
IbFabricHelper::GetLinkDownDrops() const
{
    return m_outages.GetDrops();
}

void
IbFabricHelper::SetLinkBitErrorRate(uint32_t link, double ber)
{
    NS_ABORT_MSG_IF(2 * link + 1 >= m_ports.size(), "IbFabricHelper: no link " << link);
    for (uint32_t end = 0; end < 2; ++end)
    {
        m_outages.SetErrorModel(link, {m_ports[2 * link], m_ports[2 * link + 1]}, end,
                                BitErrorModel(link, end, ber));
    }
}

uint64_t
IbFabricHelper::GetBitErrorDrops() const
{
    uint64_t n = 0;
    for (const auto& port : m_ports)
    {
        n += port->GetBitErrorDrops();
    }
    return n - m_outages.GetDrops(); // the same drop counters: packets a down link lost
}

RdmaQueuePair::Recovery
IbFabricHelper::GetRecovery() const
{
    RdmaQueuePair::Recovery r = m_goneRecovery;
    for (const auto& [qp, host] : m_qpHost)
    {
        r += dynamic_cast<const RdmaQueuePair&>(*qp).GetRecovery();
    }
    return r;
}

void
IbFabricHelper::SetLinkRate(uint32_t link, DataRate rate)
{
    NS_ABORT_MSG_IF(2 * link + 1 >= m_ports.size(), "IbFabricHelper: no link " << link);
    m_ports[2 * link]->SetAttribute("DataRate", DataRateValue(rate)); // a link's two, in turn
    m_ports[2 * link + 1]->SetAttribute("DataRate", DataRateValue(rate));
}

uint64_t
IbFabricHelper::GetBytesReceived() const
{
    uint64_t n = 0;
    for (const auto& [qp, host] : m_qpHost)
    {
        n += qp->GetBytesReceived();
    }
    return n;
}

} // namespace ns3
