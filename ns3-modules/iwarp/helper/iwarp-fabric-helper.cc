#include "ns3/iwarp-fabric-helper.h"

#include "ns3/abort.h"
#include "ns3/boolean.h"
#include "ns3/double.h"
#include "ns3/enum.h"
#include "ns3/host-address.h"
#include "ns3/inet-socket-address.h"
#include "ns3/internet-stack-helper.h"
#include "ns3/ipv4-address-helper.h"
#include "ns3/ipv4-static-routing-helper.h"
#include "ns3/ipv4.h"
#include "ns3/link-errors.h"
#include "ns3/pcap-file-wrapper.h"
#include "ns3/point-to-point-helper.h"
#include "ns3/pointer.h"
#include "ns3/queue-size.h"
#include "ns3/red-queue-disc.h"
#include "ns3/simulator.h"
#include "ns3/string.h"
#include "ns3/tcp-l4-protocol.h"
#include "ns3/tcp-socket-factory.h"
#include "ns3/tcp-socket-state.h"
#include "ns3/trace-helper.h"
#include "ns3/traffic-control-helper.h"
#include "ns3/uinteger.h"

#include <algorithm>

namespace ns3
{

namespace
{

constexpr uint16_t kFirstPort = 10000;
constexpr uint32_t kTcpIpHeaderBytes = 52; // IPv4 20, TCP 20, timestamp option 12
constexpr uint32_t kPppHeaderBytes = 2;

void
Accepted(IwarpQp* qp, Socket* listener, Ptr<Socket> s, const Address&)
{
    qp->Attach(s, false);
    // One connection per listening socket; closing it from its own callback is not safe.
    Simulator::ScheduleNow([l = Ptr<Socket>(listener)]() { l->Close(); });
}

bool
EcnCapable(const IwarpFabricOptions& o)
{
    return o.red || o.congestionControl == "ns3::TcpDctcp";
}

uint32_t
Packets(uint64_t bytes, uint32_t mtu)
{
    return static_cast<uint32_t>(std::max<uint64_t>(1, (bytes + mtu - 1) / mtu));
}

} // namespace

void
IwarpFabricHelper::Install(const TopologySpec& spec, const IwarpFabricOptions& options)
{
    TypeId cc;
    NS_ABORT_MSG_IF(!TypeId::LookupByNameFailSafe(options.congestionControl, &cc),
                    "unknown TCP congestion control " << options.congestionControl);
    m_options = options;
    m_spec = spec;
    const auto& nodes = spec.Nodes();
    m_nodes.Create(static_cast<uint32_t>(nodes.size()));
    InternetStackHelper stack;
    Ipv4StaticRoutingHelper staticRouting;
    stack.SetRoutingHelper(staticRouting);
    stack.Install(m_nodes);
    // Fixed random streams: the same scenario gives the same run, however many ran before
    // in this process (ns-3 otherwise numbers streams in creation order).
    int64_t stream = 1000;
    stream += stack.AssignStreams(m_nodes, stream);

    for (uint32_t h : spec.Hosts())
    {
        m_nodes.Get(h)->GetObject<TcpL4Protocol>()->SetAttribute("SocketType", TypeIdValue(cc));
        m_hostNodes.push_back(h);
    }
    m_hostAddress.resize(m_hostNodes.size());
    m_hostDevices.resize(m_hostNodes.size());
    m_nextPort.assign(m_hostNodes.size(), kFirstPort);
    std::vector<int32_t> hostOf(nodes.size(), -1);
    for (uint32_t i = 0; i < m_hostNodes.size(); ++i)
    {
        hostOf[m_hostNodes[i]] = static_cast<int32_t>(i);
    }

    const uint32_t queuePackets = Packets(options.queueBytes, options.mtu);
    TrafficControlHelper switchQueue;
    if (options.red)
    {
        const double k = Packets(options.markBytes, options.mtu);
        switchQueue.SetRootQueueDisc(
            "ns3::RedQueueDisc", "UseEcn", BooleanValue(true), "UseHardDrop", BooleanValue(false),
            "MeanPktSize", UintegerValue(options.mtu), "QW", DoubleValue(1.0),
            // Marks every packet above K: DCTCP's step, not RED's ramp.
            "MinTh", DoubleValue(k), "MaxTh", DoubleValue(k + 1), "MaxSize",
            QueueSizeValue(QueueSize(QueueSizeUnit::PACKETS, queuePackets)));
    }
    else
    {
        switchQueue.SetRootQueueDisc(
            "ns3::FifoQueueDisc", "MaxSize",
            QueueSizeValue(QueueSize(QueueSizeUnit::PACKETS, queuePackets)));
    }
    // Hosts: fq_codel, Linux's default qdisc, so a short flow does not wait behind the
    // window of a long one from the same host (the host link is often the bottleneck,
    // and no switch marks there).
    TrafficControlHelper hostQueue;
    hostQueue.SetRootQueueDisc("ns3::FqCoDelQueueDisc", "UseEcn",
                               BooleanValue(EcnCapable(options)));

    struct End
    {
        Ptr<NetDevice> dev;
        Ipv4Address addr;
    };
    std::vector<std::pair<End, End>> ends;
    // Hosts get HostIpv4 (10.0.0.N+1, as on every fabric); the switches' ends of the
    // links are numbered apart, a /30 per link from 172.16.0.0.
    Ipv4AddressHelper addresses("172.16.0.0", "255.255.255.252");
    for (const auto& link : spec.Links())
    {
        PointToPointHelper p2p;
        p2p.SetDeviceAttribute("DataRate", DataRateValue(link.params.rate));
        p2p.SetDeviceAttribute("Mtu", UintegerValue(options.mtu));
        p2p.SetChannelAttribute("Delay", TimeValue(link.params.delay));
        // One packet in the device: the queueing (and ECN marking) happens in the queue disc.
        p2p.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", QueueSizeValue(QueueSize("1p")));
        NetDeviceContainer devs = p2p.Install(m_nodes.Get(link.a), m_nodes.Get(link.b));
        m_linkDevices.push_back(devs.Get(0));
        m_linkDevices.push_back(devs.Get(1));
        for (uint32_t side = 0; side < 2; ++side)
        {
            const uint32_t node = side == 0 ? link.a : link.b;
            QueueDiscContainer q =
                (nodes[node].isSwitch ? switchQueue : hostQueue).Install(devs.Get(side));
            if (nodes[node].isSwitch)
            {
                if (auto red = DynamicCast<RedQueueDisc>(q.Get(0)))
                {
                    red->AssignStreams(stream++);
                }
                m_switchPorts.push_back(
                    SwitchPort{m_nodes.Get(node)->GetId(), devs.Get(side)->GetIfIndex(), q.Get(0)});
                q.Get(0)->TraceConnectWithoutContext(
                    "BytesInQueue", MakeCallback(&IwarpFabricHelper::QueueBytes, this));
            }
        }
        Ipv4InterfaceContainer ifs = addresses.Assign(devs);
        addresses.NewNetwork();
        ends.push_back({End{devs.Get(0), ifs.GetAddress(0)}, End{devs.Get(1), ifs.GetAddress(1)}});
        for (uint32_t side = 0; side < 2; ++side)
        {
            const uint32_t node = side == 0 ? link.a : link.b;
            if (hostOf[node] >= 0 && m_hostDevices[hostOf[node]] == nullptr)
            {
                const auto h = static_cast<uint32_t>(hostOf[node]);
                Ptr<Ipv4> ip = m_nodes.Get(node)->GetObject<Ipv4>();
                const int32_t itf = ip->GetInterfaceForDevice(devs.Get(side));
                ip->RemoveAddress(itf, 0);
                ip->AddAddress(itf, Ipv4InterfaceAddress(Ipv4Address(HostIpv4(h)), "/32"));
                m_hostDevices[h] = devs.Get(side);
                m_hostAddress[h] = Ipv4Address(HostIpv4(h));
                (side == 0 ? ends.back().first : ends.back().second).addr = m_hostAddress[h];
            }
        }
    }

    // Static routes: a host sends everything down its link; a switch picks, among the
    // equal next hops toward a host, the one the host's number selects.
    const auto nextHops = spec.NextHops();
    for (uint32_t n = 0; n < nodes.size(); ++n)
    {
        Ptr<Ipv4> ip = m_nodes.Get(n)->GetObject<Ipv4>();
        Ptr<Ipv4StaticRouting> routes = staticRouting.GetStaticRouting(ip);
        auto via = [&](uint32_t linkIndex) {
            const auto& l = spec.Links()[linkIndex];
            const End& mine = l.a == n ? ends[linkIndex].first : ends[linkIndex].second;
            const End& peer = l.a == n ? ends[linkIndex].second : ends[linkIndex].first;
            return std::make_pair(peer.addr,
                                  static_cast<uint32_t>(ip->GetInterfaceForDevice(mine.dev)));
        };
        if (hostOf[n] >= 0)
        {
            for (uint32_t li = 0; li < spec.Links().size(); ++li)
            {
                if (spec.Links()[li].a == n || spec.Links()[li].b == n)
                {
                    auto [gw, itf] = via(li);
                    routes->SetDefaultRoute(gw, itf);
                    break;
                }
            }
            continue;
        }
        for (uint32_t h = 0; h < m_hostNodes.size(); ++h)
        {
            const auto& choices = nextHops[n][h];
            if (choices.empty())
            {
                continue;
            }
            auto [gw, itf] = via(choices[h % choices.size()]);
            routes->AddHostRouteTo(m_hostAddress[h], gw, itf);
        }
    }
}

void
IwarpFabricHelper::QueueBytes(uint32_t, uint32_t now)
{
    m_peakQueue = std::max<uint64_t>(m_peakQueue, now);
}

void
IwarpFabricHelper::ConfigureSocket(Ptr<Socket> s) const
{
    s->SetAttribute("SegmentSize", UintegerValue(GetMss()));
    s->SetAttribute("SndBufSize", UintegerValue(m_options.socketBuffer));
    s->SetAttribute("RcvBufSize", UintegerValue(m_options.socketBuffer));
    s->SetAttribute("MinRto", TimeValue(m_options.minRto));
    s->SetAttribute("ConnTimeout", TimeValue(m_options.connTimeout));
    s->SetAttribute("DelAckCount", UintegerValue(m_options.delayedAck ? 2 : 1));
    s->SetAttribute("UseEcn",
                    EnumValue(EcnCapable(m_options) ? TcpSocketState::On : TcpSocketState::Off));
}

RdmaFabric::Connection
IwarpFabricHelper::Connect(uint32_t a, uint32_t b)
{
    NS_ABORT_MSG_IF(a >= GetNHosts() || b >= GetNHosts() || a == b,
                    "iWARP connection between hosts " << a << " and " << b);
    uint16_t port = m_nextPort[b];
    m_nextPort[b] = port == 65535 ? kFirstPort : port + 1;

    Ptr<IwarpQp> qa = CreateObject<IwarpQp>();
    Ptr<IwarpQp> qb = CreateObject<IwarpQp>();
    m_qps.push_back(qa);
    m_qps.push_back(qb);

    Ptr<Socket> listener = Socket::CreateSocket(GetHostNode(b), TcpSocketFactory::GetTypeId());
    ConfigureSocket(listener);
    NS_ABORT_MSG_IF(listener->Bind(InetSocketAddress(Ipv4Address::GetAny(), port)) != 0,
                    "host " << b << " cannot listen on TCP port " << port);
    listener->Listen();
    listener->SetAcceptCallback(
        MakeNullCallback<bool, Ptr<Socket>, const Address&>(),
        // Raw pointers: the listener keeps this callback, and so
        // does every socket it forks; Ptrs would be cycles.
        MakeBoundCallback(&Accepted, PeekPointer(qb), PeekPointer(listener)));

    Ptr<Socket> s = Socket::CreateSocket(GetHostNode(a), TcpSocketFactory::GetTypeId());
    ConfigureSocket(s);
    s->Bind();
    qa->Attach(s, true);
    // Connect from an event: before the run starts the nodes' traffic-control layers
    // are not initialised yet, and a SYN sent now would find no queue.
    const InetSocketAddress peer(m_hostAddress[b], port);
    Simulator::ScheduleNow([s, peer]() { s->Connect(peer); });
    Address local;
    s->GetSockName(local);
    return Connection{qa, qb, InetSocketAddress::ConvertFrom(local).GetPort(), port};
}

void
IwarpFabricHelper::Disconnect(const Connection& c)
{
    for (const auto& qp : {c.requester, c.responder})
    {
        if (auto iw = DynamicCast<IwarpQp>(qp))
        {
            iw->Close();
        }
    }
}

Time
IwarpFabricHelper::IdealFct(uint32_t a, uint32_t b, uint64_t bytes) const
{
    Time oneWay;
    DataRate slowest;
    bool first = true;
    for (uint32_t li : m_spec.PathLinks(a, b))
    {
        const auto& p = m_spec.Links()[li].params;
        oneWay += p.delay;
        if (first || p.rate < slowest)
        {
            slowest = p.rate;
            first = false;
        }
    }
    // Each FPDU: tagged DDP/RDMAP header, MPA length and CRC, within one TCP segment.
    MpaFramer framer(false, true);
    const uint64_t perSegment = framer.MaxUlpdu(GetMss()) - kDdpTaggedHeaderBytes;
    const uint64_t segments = std::max<uint64_t>(1, (bytes + perSegment - 1) / perSegment);
    const uint64_t wire =
        bytes + segments * (kDdpTaggedHeaderBytes + kMpaLengthBytes + kMpaCrcBytes + 3 +
                            kTcpIpHeaderBytes + kPppHeaderBytes);
    return oneWay * 6 + slowest.CalculateBytesTxTime(
                            static_cast<uint32_t>(std::min<uint64_t>(wire, UINT32_MAX)));
}

namespace
{

/// What ns-3's PcapHelper::DefaultSink writes, here so that DisablePcaps can unhook it.
void
PcapSink(Ptr<PcapFileWrapper> file, Ptr<const Packet> p)
{
    file->Write(Simulator::Now(), p);
}

} // namespace

void
IwarpFabricHelper::EnablePcap(const std::string& path, uint32_t host)
{
    // As PointToPointHelper::EnablePcap, a PPP file fed by the device's PromiscSniffer, but
    // with nanosecond timestamps like the other fabrics' pcaps (a SYN and its SYN-ACK a few
    // hundred nanoseconds apart must not read alike).
    Ptr<NetDevice> dev = m_hostDevices.at(host);
    Ptr<PcapFileWrapper> file = CreateObject<PcapFileWrapper>();
    file->SetAttribute("NanosecMode", BooleanValue(true));
    file->Open(path, std::ios::out);
    NS_ABORT_MSG_IF(file->Fail(), "cannot write the pcap file " << path);
    file->Init(PcapHelper::DLT_PPP);
    dev->TraceConnectWithoutContext("PromiscSniffer", MakeBoundCallback(&PcapSink, file));
    m_pcaps.emplace_back(dev, file);
}

void
IwarpFabricHelper::DisablePcaps()
{
    for (auto& [dev, file] : m_pcaps)
    {
        dev->TraceDisconnectWithoutContext("PromiscSniffer", MakeBoundCallback(&PcapSink, file));
        file->Close();
    }
    m_pcaps.clear();
}

namespace
{

template <typename Items, typename F>
uint64_t
Sum(const Items& items, F f)
{
    uint64_t n = 0;
    for (const auto& x : items)
    {
        n += f(x);
    }
    return n;
}

} // namespace

uint64_t
IwarpFabricHelper::TotalTcpRetransmissions() const
{
    return Sum(m_qps, [](const Ptr<IwarpQp>& q) { return q->GetTcpRetransmissions(); });
}

uint64_t
IwarpFabricHelper::TotalEcnEchoes() const
{
    return Sum(m_qps, [](const Ptr<IwarpQp>& q) { return q->GetEcnEchoes(); });
}

uint64_t
IwarpFabricHelper::TotalTerminates() const
{
    return Sum(m_qps,
               [](const Ptr<IwarpQp>& q) { return uint64_t(q->GetTerminateSent().has_value()); });
}

uint64_t
IwarpFabricHelper::SwitchDrops() const
{
    return Sum(m_switchPorts,
               [](const SwitchPort& p) { return p.queue->GetStats().nTotalDroppedPackets; });
}

uint64_t
IwarpFabricHelper::SwitchEcnMarks() const
{
    return Sum(m_switchPorts,
               [](const SwitchPort& p) { return p.queue->GetStats().nTotalMarkedPackets; });
}

uint64_t
IwarpFabricHelper::PeakSwitchQueueBytes() const
{
    return m_peakQueue;
}

namespace
{

void
CountDrop(uint64_t* count, Ptr<const Packet>)
{
    ++*count;
}

} // namespace

void
IwarpFabricHelper::CountDrops(uint32_t link)
{
    if (m_linkDrops.size() < m_linkDevices.size() / 2)
    {
        m_linkDrops.resize(m_linkDevices.size() / 2); // once: the counters must not move
        m_dropsCounted.resize(m_linkDevices.size() / 2);
    }
    if (m_dropsCounted[link])
    {
        return;
    }
    m_dropsCounted[link] = true;
    for (uint32_t side = 0; side < 2; ++side)
    {
        m_linkDevices[2 * link + side]->TraceConnectWithoutContext(
            "PhyRxDrop", MakeBoundCallback(&CountDrop, &m_linkDrops[link]));
    }
}

void
IwarpFabricHelper::SetLinkBitErrorRate(uint32_t link, double ber)
{
    NS_ABORT_MSG_IF(2 * link + 1 >= m_linkDevices.size(), "IwarpFabricHelper: no link " << link);
    CountDrops(link);
    for (uint32_t side = 0; side < 2; ++side)
    {
        m_outages.SetErrorModel(link, {m_linkDevices[2 * link], m_linkDevices[2 * link + 1]}, side,
                                BitErrorModel(link, side, ber));
    }
}

void
IwarpFabricHelper::SetLinkUp(uint32_t link, bool up)
{
    NS_ABORT_MSG_IF(2 * link + 1 >= m_linkDevices.size(), "IwarpFabricHelper: no link " << link);
    CountDrops(link);
    m_outages.SetUp(link, {m_linkDevices[2 * link], m_linkDevices[2 * link + 1]}, up);
}

uint64_t
IwarpFabricHelper::GetBitErrorDrops() const
{
    uint64_t n = 0;
    for (uint64_t d : m_linkDrops)
    {
        n += d;
    }
    return n - m_outages.GetDrops();
}

void
IwarpFabricHelper::SetLinkRate(uint32_t link, DataRate rate)
{
    NS_ABORT_MSG_IF(2 * link + 1 >= m_linkDevices.size(), "IwarpFabricHelper: no link " << link);
    m_linkDevices[2 * link]->SetAttribute("DataRate", DataRateValue(rate));
    m_linkDevices[2 * link + 1]->SetAttribute("DataRate", DataRateValue(rate));
}

} // namespace ns3
