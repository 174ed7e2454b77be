#include "ns3/pcie-collective-transport.h"

#include "ns3/abort.h"
#include "ns3/pcie-spec.h"
#include "ns3/simulator.h"

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(PcieCollectiveTransport);

namespace
{

void
Written(CollectiveTransport::Done done, const PcieTransfer&)
{
    done(true, "");
}

} // namespace

TypeId
PcieCollectiveTransport::GetTypeId()
{
    static TypeId tid = TypeId("ns3::PcieCollectiveTransport")
                            .SetParent<CollectiveTransport>()
                            .SetGroupName("Collective")
                            .AddConstructor<PcieCollectiveTransport>();
    return tid;
}

void
PcieCollectiveTransport::Setup(Ptr<PcieTree> tree, const std::vector<Rank>& ranks, bool acs,
                               uint32_t mps, const std::vector<std::string>& names)
{
    for (const auto& r : ranks)
    {
        NS_ABORT_MSG_IF(!tree->GetEndpoint(r.device),
                        "PcieCollectiveTransport: the tree has no " << r.device);
        NS_ABORT_MSG_IF(r.parent != "root" && !tree->GetSwitch(r.parent),
                        "PcieCollectiveTransport: the tree has no " << r.parent);
    }
    m_tree = tree;
    m_ranks = ranks;
    m_acs = acs;
    m_mps = mps;
    SetRankNames(names);
}

std::string
PcieCollectiveTransport::DefaultRankName(uint32_t r) const
{
    return m_ranks.at(r).device;
}

void
PcieCollectiveTransport::Send(uint32_t from, uint32_t to, uint64_t bytes, Done done)
{
    const std::string& src = m_ranks.at(from).device;
    const std::string& dst = m_ranks.at(to).device;
    const std::string why =
        from == to ? src + " cannot send to itself" : m_tree->CheckTransfer(src, dst, 0, bytes);
    if (!why.empty())
    {
        Simulator::ScheduleNow([done, why] { done(false, why); });
        return;
    }
    m_tree->Write(src, dst, 0, bytes, MakeBoundCallback(&Written, done));
}

void
PcieCollectiveTransport::Path(uint32_t from, uint32_t to, std::vector<Ptr<PcieLink>>& links,
                              std::vector<Ptr<PcieSwitch>>& switches) const
{
    const Rank& a = m_ranks.at(from);
    const Rank& b = m_ranks.at(to);
    links = {m_tree->GetLink(a.device), m_tree->GetLink(b.device)};
    const bool underOne = a.parent == b.parent && a.parent != "root" && !m_acs;
    for (const Rank* r : {&a, &b})
    {
        if (r->parent == "root")
        {
            continue;
        }
        switches.push_back(m_tree->GetSwitch(r->parent));
        if (!underOne)
        {
            links.push_back(m_tree->GetLink(r->parent)); // up to the root complex, or down
        }
    }
    if (underOne)
    {
        switches.pop_back(); // one switch, counted once
    }
}

CollectiveTransport::PathCost
PcieCollectiveTransport::GetPathCost(uint32_t from, uint32_t to) const
{
    std::vector<Ptr<PcieLink>> links;
    std::vector<Ptr<PcieSwitch>> switches;
    Path(from, to, links, switches);
    PathCost c;
    for (const auto& link : links)
    {
        const uint8_t gen = link->GetGeneration();
        const double wire = PcieTlpWireBytes(gen, 12, m_mps, false);
        const double rate = PcieLinkBytesPerSecond(gen, link->GetWidth());
        const double payload = rate * m_mps / wire;
        c.bytesPerSecond = c.bytesPerSecond == 0 ? payload : std::min(c.bytesPerSecond, payload);
        c.alpha += link->GetDelay() + Seconds(wire / rate);
    }
    for (const auto& sw : switches)
    {
        TimeValue latency;
        sw->GetAttribute("Latency", latency);
        c.alpha += latency.Get();
    }
    return c;
}

void
PcieCollectiveTransport::DoDispose()
{
    m_tree = nullptr;
    CollectiveTransport::DoDispose();
}

} // namespace ns3
