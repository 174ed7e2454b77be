#include "ns3/nvlink-collective-transport.h"

#include "ns3/abort.h"
#include "ns3/double.h"
#include "ns3/simulator.h"

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(NvlinkCollectiveTransport);

namespace
{

void
Arrived(CollectiveTransport::Done done, const NvlinkTransfer&)
{
    done(true, "");
}

} // namespace

TypeId
NvlinkCollectiveTransport::GetTypeId()
{
    static TypeId tid = TypeId("ns3::NvlinkCollectiveTransport")
                            .SetParent<CollectiveTransport>()
                            .SetGroupName("Collective")
                            .AddConstructor<NvlinkCollectiveTransport>();
    return tid;
}

void
NvlinkCollectiveTransport::Setup(Ptr<NvlinkNode> node, const std::vector<uint32_t>& gpus,
                                 const std::vector<std::string>& names)
{
    for (uint32_t g : gpus)
    {
        NS_ABORT_MSG_IF(g >= node->GetNGpus(),
                        "NvlinkCollectiveTransport: the node has no GPU " << g);
    }
    m_node = node;
    m_gpus = gpus;
    SetRankNames(names);
}

std::string
NvlinkCollectiveTransport::DefaultRankName(uint32_t r) const
{
    return "gpu" + std::to_string(m_gpus.at(r));
}

void
NvlinkCollectiveTransport::Send(uint32_t from, uint32_t to, uint64_t bytes, Done done)
{
    const std::string why = m_node->CheckTransfer(m_gpus.at(from), m_gpus.at(to));
    if (!why.empty())
    {
        Simulator::ScheduleNow([done, why] { done(false, why); });
        return;
    }
    m_node->Send(m_gpus[from], m_gpus[to], bytes, MakeBoundCallback(&Arrived, done));
}

CollectiveTransport::PathCost
NvlinkCollectiveTransport::GetPathCost(uint32_t from, uint32_t to) const
{
    Ptr<NvlinkGpu> gpu = m_node->GetGpu(m_gpus.at(from));
    PathCost c;
    const uint32_t hops = m_node->GetNSwitches() > 0 ? 2 : 1;
    for (uint32_t port : gpu->GetRoute(m_gpus.at(to)))
    {
        Ptr<NvlinkLink> link = gpu->GetPort(port)->GetLink();
        const double payload = link->GetMaxPayload();
        c.bytesPerSecond +=
            link->GetBytesPerSecond() * payload / (payload + link->GetHeaderBytes());
        c.alpha = std::max(c.alpha, (link->GetDelay() + link->WireTime(link->GetMaxPayload())) *
                                        static_cast<int64_t>(hops));
    }
    if (hops == 2)
    {
        TimeValue latency;
        m_node->GetSwitch(0)->GetAttribute("Latency", latency);
        c.alpha += latency.Get();
    }
    return c;
}

bool
NvlinkCollectiveTransport::Reaches(uint32_t from, uint32_t to) const
{
    return m_node->CheckTransfer(m_gpus.at(from), m_gpus.at(to)).empty();
}

bool
NvlinkCollectiveTransport::IsSwitched() const
{
    return m_node->GetNSwitches() > 0;
}

std::vector<uint32_t>
NvlinkCollectiveTransport::GpusOf(const std::vector<uint32_t>& ranks) const
{
    std::vector<uint32_t> gpus;
    for (uint32_t r : ranks)
    {
        gpus.push_back(m_gpus.at(r));
    }
    return gpus;
}

std::string
NvlinkCollectiveTransport::CheckInSwitch(const std::vector<uint32_t>& ranks) const
{
    return m_node->CheckNvls(GpusOf(ranks));
}

void
NvlinkCollectiveTransport::SendInSwitch(CollectiveVia via, uint32_t from, uint32_t to,
                                        const std::vector<uint32_t>& group, uint64_t bytes,
                                        Done done)
{
    const std::string why =
        via == CollectiveVia::Rank ? "not a transfer in the switch" : CheckInSwitch(group);
    if (!why.empty())
    {
        Simulator::ScheduleNow([done, why] { done(false, why); });
        return;
    }
    if (via == CollectiveVia::SwitchReduce)
    {
        m_node->SendReduced(GpusOf(group), m_gpus.at(to), bytes, MakeBoundCallback(&Arrived, done));
    }
    else
    {
        m_node->Multicast(m_gpus.at(from), GpusOf(group), bytes, MakeBoundCallback(&Arrived, done));
    }
}

CollectiveTransport::PathCost
NvlinkCollectiveTransport::GetInSwitchCost(uint32_t r) const
{
    if (!m_node->CheckNvls({m_gpus.at(r)}).empty())
    {
        return {};
    }
    DoubleValue efficiency;
    m_node->GetSwitch(0)->GetAttribute("NvlsEfficiency", efficiency);
    Ptr<NvlinkGpu> gpu = m_node->GetGpu(m_gpus.at(r));
    PathCost c = GetPathCost(r, r == 0 ? 1 : 0); // the same ports, the same hops
    c.bytesPerSecond = 0;
    for (const auto& part : m_node->NvlsParts(m_gpus.at(r), 0))
    {
        Ptr<NvlinkLink> link = gpu->GetPort(part.port)->GetLink();
        const double payload = link->GetMaxPayload();
        c.bytesPerSecond += link->GetBytesPerSecond() * payload /
                            (payload / efficiency.Get() + link->GetHeaderBytes());
    }
    return c;
}

void
NvlinkCollectiveTransport::DoDispose()
{
    m_node = nullptr;
    CollectiveTransport::DoDispose();
}

} // namespace ns3
