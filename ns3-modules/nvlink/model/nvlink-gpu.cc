#include "ns3/nvlink-gpu.h"

#include "ns3/nvlink-link.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

#include <algorithm>

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(NvlinkGpu);

TypeId
NvlinkGpu::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::NvlinkGpu")
            .SetParent<Object>()
            .SetGroupName("Nvlink")
            .AddConstructor<NvlinkGpu>()
            .AddAttribute("QueueDepth", "Packets the GPU keeps queued at each port",
                          UintegerValue(4), MakeUintegerAccessor(&NvlinkGpu::m_queueDepth),
                          MakeUintegerChecker<uint32_t>(1, 1024));
    return tid;
}

void
NvlinkGpu::DoDispose()
{
    m_ports.clear();
    m_index.clear();
    m_received = MakeNullCallback<void, const NvlinkTransfer&>();
    Object::DoDispose();
}

uint32_t
NvlinkGpu::AddPort(Ptr<NvlinkPort> port)
{
    const auto i = static_cast<uint32_t>(m_ports.size());
    m_ports.push_back(port);
    m_index[PeekPointer(port)] = i;
    port->SetReceiveCallback(MakeCallback(&NvlinkGpu::Received, this));
    port->SetDequeuedCallback(MakeCallback(&NvlinkGpu::Refill, this));
    return i;
}

void
NvlinkGpu::AddRoute(uint32_t gpu, uint32_t port)
{
    m_routes[gpu].push_back(port);
}

bool
NvlinkGpu::Reaches(uint32_t gpu) const
{
    return m_routes.count(gpu) > 0;
}

std::vector<uint32_t>
NvlinkGpu::GetRoute(uint32_t gpu) const
{
    const auto it = m_routes.find(gpu);
    return it == m_routes.end() ? std::vector<uint32_t>{} : it->second;
}

uint64_t
NvlinkGpu::Send(uint32_t dst, uint64_t bytes)
{
    if (!Reaches(dst) || dst == m_id)
    {
        return 0;
    }
    const uint64_t id = m_nextId++;
    Outgoing o{dst, bytes, 0, Simulator::Now()};
    o.transfer = id;
    o.total = bytes;
    m_out[id] = o;
    m_started[id] = Simulator::Now();
    for (uint32_t port : m_routes.at(dst))
    {
        Refill(m_ports[port]);
    }
    return id;
}

void
NvlinkGpu::SendParts(NvlinkKind kind, uint32_t dst, uint64_t transfer, uint64_t bytes,
                     uint32_t fanout, const std::vector<Part>& parts)
{
    for (const Part& part : parts)
    {
        if (part.bytes == 0)
        {
            continue;
        }
        Outgoing o{dst, part.bytes, 0, Simulator::Now()};
        o.kind = kind;
        o.transfer = transfer;
        o.total = bytes;
        o.offset = part.offset;
        o.fanout = fanout;
        o.port = part.port;
        m_out[m_nextId++] = o;
    }
    for (const Part& part : parts)
    {
        Refill(m_ports.at(part.port));
    }
}

void
NvlinkGpu::Refill(Ptr<NvlinkPort> port)
{
    const uint32_t index = m_index.at(PeekPointer(port));
    const uint32_t max = port->GetLink()->GetMaxPayload();
    while (port->GetQueued() < m_queueDepth && !m_out.empty())
    {
        // The next transfer (round robin) that this port can carry.
        auto it = m_out.upper_bound(m_turn);
        bool found = false;
        for (size_t tried = 0; tried < m_out.size(); ++tried, ++it)
        {
            if (it == m_out.end())
            {
                it = m_out.begin();
            }
            if (it->second.port >= 0)
            {
                if (it->second.port == index)
                {
                    found = true;
                    break;
                }
                continue;
            }
            const auto& ports = m_routes.at(it->second.dst);
            if (std::find(ports.begin(), ports.end(), index) != ports.end())
            {
                found = true;
                break;
            }
        }
        if (!found)
        {
            return;
        }
        Outgoing& o = it->second;
        NvlinkPacket p;
        p.src = m_id;
        p.dst = o.dst;
        p.transfer = o.transfer;
        p.bytes = o.total;
        p.kind = o.kind;
        p.offset = o.offset + o.next;
        p.fanout = o.fanout;
        p.payload = static_cast<uint32_t>(std::min<uint64_t>(max, o.bytes - o.next));
        o.next += p.payload;
        m_turn = it->first;
        if (o.next >= o.bytes)
        {
            m_out.erase(it);
        }
        port->Enqueue(p);
    }
}

void
NvlinkGpu::Received(const NvlinkPacket& p, Ptr<NvlinkPort> port)
{
    port->Release(); // HBM takes it at once
    uint64_t& got = m_in[{p.src, p.transfer}];
    got += p.payload;
    if (got >= p.bytes)
    {
        m_in.erase({p.src, p.transfer});
        if (!m_received.IsNull())
        {
            NvlinkTransfer t;
            t.src = p.src;
            t.dst = m_id;
            t.id = p.transfer;
            t.bytes = p.bytes;
            t.completed = Simulator::Now();
            m_received(t);
        }
    }
}

uint64_t
NvlinkGpu::GetReceived(uint32_t src, uint64_t id) const
{
    const auto it = m_in.find({src, id});
    return it == m_in.end() ? 0 : it->second;
}

Time
NvlinkGpu::GetStarted(uint64_t id) const
{
    const auto it = m_started.find(id);
    return it == m_started.end() ? Time(0) : it->second;
}

} // namespace ns3
