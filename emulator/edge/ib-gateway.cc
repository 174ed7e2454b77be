#include "emulator/edge/ib-gateway.h"

#include "ns3/ib-headers.h"
#include "ns3/simulator.h"

#include <cstring>

namespace fabemu
{

using namespace ns3;

namespace
{

constexpr uint8_t kUdSendOnly = 0x64;
constexpr uint32_t kIpoibQp = 1;
constexpr uint32_t kIpoibQkey = 0x0000000b;
constexpr uint32_t kIpoibHeaderBytes = 4;
constexpr uint32_t kDethBytes = 8;
constexpr uint32_t kBthBytes = 12;

std::array<uint8_t, 16>
Gid(const ParsedFrame& f, const std::array<uint8_t, 16>& ip)
{
    if (f.ipVersion == 6)
    {
        return ip;
    }
    // IPv4-mapped, as rxe's GID 1 for an IPv4 address.
    return {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, ip[0], ip[1], ip[2], ip[3]};
}

/// Where the IP packet ends: Ethernet padding of short frames is not part of it.
size_t
IpEnd(const std::vector<uint8_t>& frame, const ParsedFrame& f)
{
    const uint8_t* ip = frame.data() + f.l3Offset;
    const size_t end = f.ipVersion == 4 ? f.l3Offset + (size_t(ip[2]) << 8 | ip[3])
                                        : f.l3Offset + 40 + (size_t(ip[4]) << 8 | ip[5]);
    return std::min(end, frame.size());
}

void
Put32(uint8_t* p, uint32_t v)
{
    p[0] = static_cast<uint8_t>(v >> 24);
    p[1] = static_cast<uint8_t>(v >> 16);
    p[2] = static_cast<uint8_t>(v >> 8);
    p[3] = static_cast<uint8_t>(v);
}

} // namespace

void
IbTunnel::Push(uint16_t slid, uint16_t dlid, uint8_t sl, std::vector<uint8_t> frame)
{
    m_queues[{slid, dlid, sl}].push_back(std::move(frame));
}

std::optional<std::vector<uint8_t>>
IbTunnel::Pop(uint16_t slid, uint16_t dlid, uint8_t sl)
{
    auto it = m_queues.find({slid, dlid, sl});
    if (it == m_queues.end() || it->second.empty())
    {
        return std::nullopt;
    }
    std::vector<uint8_t> frame = std::move(it->second.front());
    it->second.pop_front();
    return frame;
}

size_t
IbTunnel::InFlight() const
{
    size_t n = 0;
    for (const auto& [key, q] : m_queues)
    {
        n += q.size();
    }
    return n;
}

IbGateway::IbGateway(Ptr<IbPort> port, uint32_t context, uint16_t lid,
                     std::shared_ptr<IbTunnel> tunnel, std::vector<EndpointAddress> directory,
                     std::vector<uint16_t> lids)
    : m_port(port),
      m_context(context),
      m_lid(lid),
      m_tunnel(std::move(tunnel)),
      m_directory(std::move(directory)),
      m_lids(std::move(lids))
{
    // The gateway takes the place of the host's HCA on its port.
    m_port->SetReceiveCallback(MakeCallback(&IbGateway::Receive, this));
}

IbGateway::~IbGateway()
{
    m_port->SetReceiveCallback(IbPort::ReceiveCallback()); // nothing calls into us now
}

uint16_t
IbGateway::LidFor(const ParsedFrame& f) const
{
    for (size_t i = 0; i < m_directory.size() && i < m_lids.size(); ++i)
    {
        const EndpointAddress& e = m_directory[i];
        if (f.ipVersion == 4)
        {
            const uint32_t ip = uint32_t(f.dstIp[0]) << 24 | uint32_t(f.dstIp[1]) << 16 |
                                uint32_t(f.dstIp[2]) << 8 | f.dstIp[3];
            if (ip == e.ipv4)
            {
                return m_lids[i];
            }
        }
        else if (f.ipVersion == 6 && f.dstIp == e.LinkLocal())
        {
            return m_lids[i];
        }
    }
    return 0;
}

std::vector<uint8_t>
IbGateway::Encapsulate(const std::vector<uint8_t>& frame, const ParsedFrame& f, uint8_t sl,
                       uint16_t dlid) const
{
    const size_t end = IpEnd(frame, f);
    std::vector<uint8_t> pkt;
    LrhHeader lrh;
    lrh.vl = sl % m_port->GetNumDataVls();
    lrh.sl = sl;
    lrh.dlid = dlid;
    lrh.slid = m_lid;
    if (f.kind == FrameKind::Roce)
    {
        // LRH, GRH, then the frame's BTH through its ICRC, then the VCRC.
        if (f.bthOffset == 0 || f.bthOffset >= end || (end - f.bthOffset) % 4 != 0)
        {
            return {};
        }
        const size_t transport = end - f.bthOffset;
        pkt.resize(kIbLrhBytes + kIbGrhBytes + transport + kIbVcrcBytes);
        lrh.lnh = kIbLnhGlobal;
        lrh.pktLen = static_cast<uint16_t>((kIbLrhBytes + kIbGrhBytes + transport) / 4);
        lrh.Write(pkt.data());
        const uint8_t* ip = frame.data() + f.l3Offset;
        GrhHeader g;
        g.tClass = f.ipVersion == 4 ? ip[1] : static_cast<uint8_t>((ip[0] & 0xf) << 4 | ip[1] >> 4);
        g.flowLabel =
            f.ipVersion == 4 ? 0 : (uint32_t(ip[1] & 0xf) << 16 | uint32_t(ip[2]) << 8 | ip[3]);
        g.payLen = static_cast<uint16_t>(transport);
        g.hopLmt = f.ipVersion == 4 ? ip[8] : ip[7];
        g.sgid = Gid(f, f.srcIp);
        g.dgid = Gid(f, f.dstIp);
        g.Write(pkt.data() + kIbLrhBytes);
        std::memcpy(pkt.data() + kIbLrhBytes + kIbGrhBytes, frame.data() + f.bthOffset, transport);
    }
    else
    {
        // IPoIB: a UD SEND Only to the IPoIB QP, the IP packet after a 4-byte header.
        const size_t ipBytes = end - f.l3Offset;
        const size_t pad = (4 - ipBytes % 4) % 4;
        const size_t headers = kIbLrhBytes + kBthBytes + kDethBytes + kIpoibHeaderBytes;
        pkt.resize(headers + ipBytes + pad + kIbIcrcBytes + kIbVcrcBytes);
        lrh.lnh = kIbLnhLocal;
        lrh.pktLen = static_cast<uint16_t>((headers + ipBytes + pad + kIbIcrcBytes) / 4);
        lrh.Write(pkt.data());
        uint8_t* bth = pkt.data() + kIbLrhBytes;
        bth[0] = kUdSendOnly;
        bth[1] = static_cast<uint8_t>(pad << 4);
        bth[2] = 0xff; // default P_Key
        bth[3] = 0xff;
        Put32(bth + 4, kIpoibQp); // resv8a 0, destination QP
        Put32(bth + 8, 0);        // PSN
        uint8_t* deth = bth + kBthBytes;
        Put32(deth, kIpoibQkey);
        Put32(deth + 4, kIpoibQp);
        uint8_t* ipoib = deth + kDethBytes;
        ipoib[0] = static_cast<uint8_t>(f.etherType >> 8);
        ipoib[1] = static_cast<uint8_t>(f.etherType);
        std::memcpy(ipoib + kIpoibHeaderBytes, frame.data() + f.l3Offset, ipBytes);
    }
    IbFillCrcs(pkt.data(), pkt.size());
    return pkt;
}

void
IbGateway::Send(uint8_t* bytes, size_t len, const ParsedFrame& f, uint8_t prio)
{
    if (f.ipVersion != 4 && f.ipVersion != 6)
    {
        ++m_drops["ib_not_ip"];
        return;
    }
    const uint16_t dlid = LidFor(f);
    if (dlid == 0)
    {
        ++m_drops[f.ipVersion == 6 && f.dstIp[0] == 0xff ? "ib_multicast"
                                                         : "ib_no_lid_for_address"];
        return;
    }
    const uint8_t sl = prio & 0xf;
    std::vector<uint8_t> frame(bytes, bytes + len); // the tunnel keeps it, bit-exact
    std::vector<uint8_t> pkt = Encapsulate(frame, f, sl, dlid);
    if (pkt.empty())
    {
        ++m_drops["ib_malformed_roce"];
        return;
    }
    m_tunnel->Push(m_lid, dlid, sl, std::move(frame));
    ++m_sent;
    m_port->Enqueue(Create<Packet>(pkt.data(), static_cast<uint32_t>(pkt.size())),
                    sl % m_port->GetNumDataVls(), Simulator::Now());
}

void
IbGateway::Receive(Ptr<IbPort>, Ptr<Packet> p, uint8_t vl, Time tail)
{
    // The head is here; the packet is whole, and its buffer free, when the tail is.
    Simulator::Schedule(tail - Simulator::Now(), &IbGateway::Deliver, this, p, vl);
}

void
IbGateway::Deliver(Ptr<Packet> p, uint8_t vl)
{
    m_port->Release(vl, IbPort::Blocks(p->GetSize()));
    uint8_t head[kIbLrhBytes];
    p->CopyData(head, kIbLrhBytes);
    const LrhHeader lrh = LrhHeader::Read(head);
    auto frame = m_tunnel->Pop(lrh.slid, m_lid, lrh.sl);
    if (!frame)
    {
        ++m_drops["ib_tunnel_out_of_step"];
        return;
    }
    ++m_received;
    if (m_deliver)
    {
        m_deliver(std::move(*frame));
    }
}

void
IbGateway::AddCounters(EdgeCounters& c) const
{
    for (const auto& [reason, n] : m_drops)
    {
        c.drops[reason] += n;
    }
}

} // namespace fabemu
