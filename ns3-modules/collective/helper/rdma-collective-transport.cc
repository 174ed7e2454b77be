#include "ns3/rdma-collective-transport.h"

#include "ns3/abort.h"
#include "ns3/simulator.h"

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(RdmaCollectiveTransport);

TypeId
RdmaCollectiveTransport::GetTypeId()
{
    static TypeId tid = TypeId("ns3::RdmaCollectiveTransport")
                            .SetParent<CollectiveTransport>()
                            .SetGroupName("Collective")
                            .AddConstructor<RdmaCollectiveTransport>();
    return tid;
}

void
RdmaCollectiveTransport::Setup(RdmaFabric* fabric, const std::vector<uint32_t>& hosts,
                               const std::vector<std::string>& names)
{
    for (uint32_t h : hosts)
    {
        NS_ABORT_MSG_IF(h >= fabric->GetNHosts(),
                        "RdmaCollectiveTransport: the fabric has no host " << h);
    }
    m_fabric = fabric;
    m_hosts = hosts;
    SetRankNames(names);
}

void
RdmaCollectiveTransport::SetRankMemory(const std::vector<RdmaStagedWrite::End>& ends)
{
    NS_ABORT_MSG_IF(ends.size() != m_hosts.size(),
                    "RdmaCollectiveTransport: " << ends.size() << " memories for " << m_hosts.size()
                                                << " ranks");
    m_ends = ends;
}

std::string
RdmaCollectiveTransport::DefaultRankName(uint32_t r) const
{
    return "h" + std::to_string(m_hosts.at(r));
}

void
RdmaCollectiveTransport::Send(uint32_t from, uint32_t to, uint64_t bytes, Done done)
{
    if (!m_ends.empty())
    {
        // A staged WRITE owns its connection's completions, so each has its own.
        const uint64_t id = m_nextWr++;
        Staged& st = m_staged[id];
        st.connection = m_fabric->Connect(m_hosts.at(from), m_hosts.at(to));
        st.done = done;
        st.write = Create<RdmaStagedWrite>(
            st.connection, bytes, m_ends.at(from), m_ends.at(to),
            MakeCallback(&RdmaCollectiveTransport::StagedDone, this).Bind(id));
        st.write->Start();
        return;
    }
    const uint64_t pair = uint64_t{from} << 32 | to;
    auto it = m_connections.find(pair);
    if (it == m_connections.end())
    {
        it = m_connections.emplace(pair, m_fabric->Connect(m_hosts.at(from), m_hosts.at(to))).first;
        it->second.requester->SetCompletionCallback(
            MakeCallback(&RdmaCollectiveTransport::Completed, this));
    }
    RdmaWorkRequest wr;
    wr.op = RdmaWorkRequest::Op::Write;
    wr.bytes = bytes;
    wr.wrId = m_nextWr++;
    m_pending[wr.wrId] = done;
    it->second.requester->PostSend(wr);
}

void
RdmaCollectiveTransport::Completed(const RdmaCompletion& c)
{
    const auto it = m_pending.find(c.wrId);
    if (it == m_pending.end())
    {
        return;
    }
    const Done done = it->second;
    m_pending.erase(it);
    const bool ok = c.status == RdmaCompletion::Status::Success;
    done(ok, RdmaStatusReason(c.status));
}

void
RdmaCollectiveTransport::StagedDone(uint64_t id, const RdmaCompletion& c)
{
    const auto it = m_staged.find(id);
    if (it == m_staged.end())
    {
        return;
    }
    const Done done = it->second.done;
    // Its queue pairs go once the staged write has returned from this call (their late
    // packets, if any, are dropped as a real NIC drops them): a 128-GPU ring makes tens
    // of thousands of them.
    Simulator::ScheduleNow(&RdmaCollectiveTransport::Release, this, id);
    done(c.status == RdmaCompletion::Status::Success, RdmaStatusReason(c.status));
}

void
RdmaCollectiveTransport::Release(uint64_t id)
{
    const auto it = m_staged.find(id);
    if (it != m_staged.end())
    {
        m_fabric->Disconnect(it->second.connection);
        m_staged.erase(it);
    }
}

CollectiveTransport::PathCost
RdmaCollectiveTransport::GetPathCost(uint32_t from, uint32_t to) const
{
    const uint64_t pair = uint64_t{from} << 32 | to;
    if (const auto it = m_costs.find(pair); it != m_costs.end())
    {
        return it->second; // auto and every size of a sweep ask again for the same pairs
    }
    // Past the first frame the ideal FCT grows linearly with the bytes (one full frame per
    // bottleneck transmission time), so two sizes of whole frames (64 and 128 KiB: whole
    // at every MTU up to 4096) give the slope and the intercept exactly.
    const uint64_t s1 = 64 << 10;
    const uint64_t s2 = 128 << 10;
    const Time t1 = m_fabric->IdealFct(m_hosts.at(from), m_hosts.at(to), s1);
    const Time t2 = m_fabric->IdealFct(m_hosts.at(from), m_hosts.at(to), s2);
    PathCost c;
    c.bytesPerSecond = static_cast<double>(s2 - s1) / (t2 - t1).GetSeconds();
    c.alpha = t1 - Seconds(s1 / c.bytesPerSecond);
    if (!m_ends.empty())
    {
        // Staged: the first chunk fetched at the sender, the last placed at the receiver.
        for (const auto& end : {m_ends[from], m_ends[to]})
        {
            c.alpha += end.nic ? end.nic->GetStagingLatency(end.memory) / 2 : Time(0);
        }
    }
    m_costs[pair] = c;
    return c;
}

void
RdmaCollectiveTransport::DoDispose()
{
    for (const auto& [pair, c] : m_connections)
    {
        (void)pair;
        m_fabric->Disconnect(c);
    }
    m_connections.clear();
    for (const auto& [id, st] : m_staged)
    {
        (void)id;
        m_fabric->Disconnect(st.connection);
    }
    m_staged.clear();
    m_pending.clear();
    CollectiveTransport::DoDispose();
}

} // namespace ns3
