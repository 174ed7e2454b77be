#include "ns3/rdma-workload.h"

#include "ns3/abort.h"
#include "ns3/simulator.h"

#include <cstdio>

namespace ns3
{
namespace workload
{

std::vector<FlowSpec>
Bulk(uint32_t src, uint32_t dst, uint64_t bytes, Time start)
{
    return {FlowSpec{src, dst, bytes, start}};
}

std::vector<FlowSpec>
Incast(uint32_t dst, const std::vector<uint32_t>& srcs, uint64_t bytes, Time start)
{
    std::vector<FlowSpec> flows;
    for (uint32_t s : srcs)
    {
        NS_ABORT_MSG_IF(s == dst, "incast: h" << dst << " cannot send to itself");
        flows.push_back(FlowSpec{s, dst, bytes, start});
    }
    return flows;
}

std::vector<FlowSpec>
Permutation(const std::vector<uint32_t>& hosts, uint64_t bytes, Time start,
            Ptr<UniformRandomVariable> rng)
{
    NS_ABORT_MSG_IF(hosts.size() < 2, "permutation: needs at least two hosts");
    // Sattolo's algorithm: a uniformly random single cycle, so no host sends to itself.
    std::vector<uint32_t> dst = hosts;
    for (size_t i = dst.size() - 1; i > 0; --i)
    {
        const size_t j = rng->GetInteger(0, static_cast<uint32_t>(i - 1));
        std::swap(dst[i], dst[j]);
    }
    std::vector<FlowSpec> flows;
    for (size_t i = 0; i < hosts.size(); ++i)
    {
        flows.push_back(FlowSpec{hosts[i], dst[i], bytes, start});
    }
    return flows;
}

std::vector<FlowSpec>
AllToAll(const std::vector<uint32_t>& hosts, uint64_t bytes, Time start)
{
    std::vector<FlowSpec> flows;
    for (uint32_t s : hosts)
    {
        for (uint32_t d : hosts)
        {
            if (s != d)
            {
                flows.push_back(FlowSpec{s, d, bytes, start});
            }
        }
    }
    return flows;
}

std::vector<FlowSpec>
Poisson(const std::vector<uint32_t>& hosts, double load, const FlowSizeCdf& cdf, DataRate hostRate,
        Time start, Time stop, Ptr<UniformRandomVariable> rng)
{
    NS_ABORT_MSG_IF(hosts.size() < 2, "poisson: needs at least two hosts");
    NS_ABORT_MSG_IF(load <= 0 || load > 1, "poisson: load must be in (0, 1], not " << load);
    const double flowsPerSecond = load * hostRate.GetBitRate() / (cdf.Mean() * 8);
    std::vector<FlowSpec> flows;
    for (uint32_t s : hosts)
    {
        double t = start.GetSeconds();
        for (;;)
        {
            t += -std::log(1 - rng->GetValue()) / flowsPerSecond;
            if (t >= stop.GetSeconds())
            {
                break;
            }
            uint32_t d = s;
            while (d == s)
            {
                d = hosts[rng->GetInteger(0, static_cast<uint32_t>(hosts.size() - 1))];
            }
            flows.push_back(
                FlowSpec{s, d, std::max<uint64_t>(1, cdf.Sample(rng->GetValue())), Seconds(t)});
        }
    }
    return flows;
}

} // namespace workload

const char*
FlowStateName(FlowState s)
{
    switch (s)
    {
    case FlowState::Completed:
        return "completed";
    case FlowState::Failed:
        return "failed";
    case FlowState::Pending:
        return "pending";
    }
    return "unknown";
}

FlowRunner::FlowRunner(RdmaFabric& fabric) : m_fabric(fabric)
{
}

void
FlowRunner::Add(const std::vector<FlowSpec>& flows)
{
    for (const auto& f : flows)
    {
        NS_ABORT_MSG_IF(f.src >= m_fabric.GetNHosts() || f.dst >= m_fabric.GetNHosts(),
                        "flow h" << f.src << " -> h" << f.dst << ": the fabric has "
                                 << m_fabric.GetNHosts() << " hosts");
        m_flows.push_back(f);
    }
}

void
FlowRunner::Start()
{
    m_connections.resize(m_flows.size());
    m_staged.resize(m_flows.size());
    m_finished.assign(m_flows.size(), false);
    m_deliveredAtEnd.assign(m_flows.size(), 0);
    for (uint32_t id = 0; id < m_flows.size(); ++id)
    {
        const FlowSpec& f = m_flows[id];
        const Time late = m_startDelay.IsNull() ? Time(0) : m_startDelay(f.src, f.start);
        Simulator::Schedule(m_flows[id].start + late - Simulator::Now(), &FlowRunner::Launch, this,
                            id);
    }
}

void
FlowRunner::Launch(uint32_t id)
{
    const FlowSpec& f = m_flows[id];
    m_connections[id] = m_fabric.Connect(f.src, f.dst, f.serviceLevel);
    const auto& c = m_connections[id];
    if (!m_local.IsNull() && !m_local(f.src))
    {
        return; // another rank posts it; its destination's QP here answers
    }
    Ptr<RdmaHostInterface> src = HostInterface(f.src);
    Ptr<RdmaHostInterface> dst = HostInterface(f.dst);
    if (src || dst)
    {
        NS_ABORT_MSG_IF(f.op != RdmaWorkRequest::Op::Write,
                        "flow h" << f.src << " -> h" << f.dst << ": only a WRITE is staged "
                                 << "through a host interface, not " << RdmaOpName(f.op));
        m_staged[id] = Create<RdmaStagedWrite>(c, f.bytes, RdmaStagedWrite::End{src, f.srcMemory},
                                               RdmaStagedWrite::End{dst, f.dstMemory},
                                               MakeCallback(&FlowRunner::Finished, this).Bind(id));
        m_staged[id]->Start();
        return;
    }
    c.requester->SetCompletionCallback(MakeCallback(&FlowRunner::Finished, this).Bind(id));
    RdmaWorkRequest wr;
    wr.op = f.op;
    wr.bytes = f.bytes;
    wr.wrId = id;
    c.requester->PostSend(wr);
}

void
FlowRunner::SetHostInterface(uint32_t host, Ptr<RdmaHostInterface> nic)
{
    m_hostInterfaces[host] = nic;
}

Ptr<RdmaHostInterface>
FlowRunner::HostInterface(uint32_t host) const
{
    const auto it = m_hostInterfaces.find(host);
    return it == m_hostInterfaces.end() ? nullptr : it->second;
}

void
FlowRunner::Finished(uint32_t id, const RdmaCompletion& done)
{
    const FlowSpec& f = m_flows[id];
    const RdmaFabric::Connection c = m_connections[id];
    FlowRecord r;
    r.id = id;
    r.spec = f;
    r.srcPort = c.srcPort;
    r.dstPort = c.dstPort;
    r.idealFct = m_fabric.IdealFct(f.src, f.dst, f.bytes);
    r.ended = Simulator::Now();
    if (done.status == RdmaCompletion::Status::Success)
    {
        r.state = FlowState::Completed;
        r.fct = done.completed - f.start; // from its start: a straggler's wait counts
        r.delivered = f.bytes;
    }
    else
    {
        r.state = FlowState::Failed;
        r.reason = RdmaStatusReason(done.status);
        r.delivered = Delivered(id);
        ++m_failed;
    }
    m_deliveredAtEnd[id] = r.delivered;
    m_records.push_back(r);
    m_finished[id] = true;
    if (m_releaseOnEnd)
    {
        // Not from inside the QP's own completion: release it once this event is over.
        Simulator::ScheduleNow(&RdmaFabric::Disconnect, &m_fabric, c);
    }
    if (Pending() == 0 && !m_allDone.IsNull())
    {
        m_allDone();
    }
}

uint64_t
FlowRunner::Delivered(uint32_t id) const
{
    if (id >= m_connections.size() || !m_connections[id].requester)
    {
        return 0; // not started
    }
    if (m_finished[id])
    {
        return m_deliveredAtEnd[id]; // a failed flow keeps what it had delivered
    }
    // In-order payload at the receiving QP: the responder, or for READ the requester.
    const auto& c = m_connections[id];
    return m_flows[id].op == RdmaWorkRequest::Op::Read ? c.requester->GetBytesReceived()
                                                       : c.responder->GetBytesReceived();
}

std::vector<FlowRecord>
FlowRunner::Outcomes() const
{
    std::vector<FlowRecord> all(m_flows.size());
    for (uint32_t id = 0; id < m_flows.size(); ++id)
    {
        FlowRecord& r = all[id];
        r.id = id;
        r.spec = m_flows[id];
        r.idealFct = m_fabric.IdealFct(r.spec.src, r.spec.dst, r.spec.bytes);
        if (id < m_connections.size() && m_connections[id].requester)
        {
            r.srcPort = m_connections[id].srcPort;
            r.dstPort = m_connections[id].dstPort;
        }
        r.delivered = Delivered(id);
    }
    for (const auto& r : m_records)
    {
        all[r.id] = r;
    }
    return all;
}

void
FlowRunner::WriteFct(std::ostream& os,
                     const std::function<uint16_t(const FlowRecord&)>& dport) const
{
    char line[160];
    for (const auto& r : m_records)
    {
        if (!r.Completed())
        {
            continue;
        }
        std::snprintf(line, sizeof(line), "%08x %08x %u %u %llu %lld %lld %lld\n",
                      m_fabric.GetHostIpv4(r.spec.src), m_fabric.GetHostIpv4(r.spec.dst), r.srcPort,
                      dport ? dport(r) : r.dstPort, static_cast<unsigned long long>(r.spec.bytes),
                      static_cast<long long>(r.spec.start.GetNanoSeconds()),
                      static_cast<long long>(r.fct.GetNanoSeconds()),
                      static_cast<long long>(r.idealFct.GetNanoSeconds()));
        os << line;
    }
}

} // namespace ns3
