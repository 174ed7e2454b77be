#include "emulator/runner/node-fabric.h"

#include "ns3/simulator.h"

#include <fmt/format.h>

namespace fabemu
{

using namespace ns3;

std::unique_ptr<NodeFabric> MakePcieNodeFabric();
std::unique_ptr<NodeFabric> MakeNvlinkNodeFabric();
std::unique_ptr<NodeFabric> MakeCxlNodeFabric();

std::vector<std::unique_ptr<NodeFabric>>
NodeFabricsOf(const Scenario& s)
{
    std::vector<std::unique_ptr<NodeFabric>> fabrics;
    if (s.topology.node.hasPcie)
    {
        fabrics.push_back(MakePcieNodeFabric());
    }
    if (s.topology.node.hasNvlink)
    {
        fabrics.push_back(MakeNvlinkNodeFabric());
    }
    if (s.topology.node.hasCxl)
    {
        fabrics.push_back(MakeCxlNodeFabric());
    }
    return fabrics;
}

size_t
NodeFabricFlows::StartFlows(const Scenario& s, uint32_t firstId)
{
    m_firstId = firstId;
    for (const auto& w : s.workloads)
    {
        if (!Takes(s, w))
        {
            continue;
        }
        FlowRecord r;
        r.id = firstId + static_cast<uint32_t>(m_flows.size());
        r.spec.src = w.src;
        r.spec.dst = w.dst;
        r.spec.bytes = w.bytes;
        r.spec.start = PicoSeconds(w.startPs);
        r.spec.op = w.op == "read" ? RdmaWorkRequest::Op::Read : RdmaWorkRequest::Op::Write;
        r.spec.tag = WorkloadLabel(w);
        r.spec.srcName = fmt::format("h{}.{}", w.src, w.srcDevice);
        r.spec.dstName = fmt::format("h{}.{}", w.dst, w.dstDevice);
        r.idealFct = IdealFct(w);
        m_flows.push_back(r);
        m_transfers.push_back(0);
        m_devices.emplace_back(w.srcDevice, w.dstDevice);
        Simulator::Schedule(r.spec.start, &NodeFabricFlows::LaunchAt, this, m_flows.size() - 1);
    }
    return m_flows.size();
}

void
NodeFabricFlows::LaunchAt(size_t i)
{
    std::string why;
    m_transfers[i] = Launch(i, m_flows[i], m_devices[i].first, m_devices[i].second, why);
    if (m_transfers[i] == 0)
    {
        m_flows[i].state = FlowState::Failed;
        m_flows[i].reason = why;
        Ended();
    }
}

void
NodeFabricFlows::Completed(size_t i, Time at, uint64_t bytes)
{
    FlowRecord& r = m_flows[i];
    if (bytes > 0)
    {
        r.spec.bytes = bytes;
    }
    r.state = FlowState::Completed;
    r.fct = at - r.spec.start;
    r.delivered = r.spec.bytes;
    Ended();
}

void
NodeFabricFlows::Ended()
{
    if (++m_ended == m_flows.size() && !m_allDone.IsNull())
    {
        m_allDone();
    }
}

uint64_t
NodeFabricFlows::Delivered(uint32_t id) const
{
    const size_t i = id - m_firstId;
    const FlowRecord& r = m_flows.at(i);
    if (r.state != FlowState::Pending || m_transfers[i] == 0)
    {
        return r.delivered; // ended, or not started
    }
    return Progress(r, m_devices[i].first, m_devices[i].second, m_transfers[i]);
}

bool
NodeFabricFlows::Ended(uint32_t id) const
{
    return m_flows.at(id - m_firstId).state != FlowState::Pending;
}

} // namespace fabemu
