#include "ns3/nvlink-node.h"

#include "ns3/simulator.h"

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(NvlinkNode);

TypeId
NvlinkNode::GetTypeId()
{
    static TypeId tid = TypeId("ns3::NvlinkNode").SetParent<Object>().SetGroupName("Nvlink");
    return tid;
}

void
NvlinkNode::DoDispose()
{
    for (auto& l : m_links)
    {
        l->GetPort(0)->Dispose();
        l->GetPort(1)->Dispose();
        l->Dispose();
    }
    for (auto& g : m_gpus)
    {
        g->Dispose();
    }
    for (auto& s : m_switches)
    {
        s->Dispose();
    }
    m_links.clear();
    m_gpus.clear();
    m_switches.clear();
    m_done.clear();
    Object::DoDispose();
}

void
NvlinkNode::AddGpu(Ptr<NvlinkGpu> gpu)
{
    gpu->SetId(static_cast<uint32_t>(m_gpus.size()));
    gpu->SetReceivedCallback(MakeCallback(&NvlinkNode::Received, this));
    m_gpus.push_back(gpu);
}

std::string
NvlinkNode::CheckTransfer(uint32_t src, uint32_t dst) const
{
    if (src >= m_gpus.size() || dst >= m_gpus.size())
    {
        return "no GPU " + std::to_string(src >= m_gpus.size() ? src : dst) + " (there are " +
               std::to_string(m_gpus.size()) + ")";
    }
    if (src == dst)
    {
        return "GPU " + std::to_string(src) + " cannot send to itself over NVLink";
    }
    if (!m_gpus[src]->Reaches(dst))
    {
        return "GPU " + std::to_string(src) + " has no NVLink to GPU " + std::to_string(dst);
    }
    return "";
}

uint64_t
NvlinkNode::Send(uint32_t src, uint32_t dst, uint64_t bytes,
                 Callback<void, const NvlinkTransfer&> done)
{
    if (!CheckTransfer(src, dst).empty())
    {
        return 0;
    }
    const uint64_t id = m_gpus[src]->Send(dst, bytes);
    m_done[{src, id}] = done;
    return id;
}

void
NvlinkNode::Received(const NvlinkTransfer& t)
{
    const auto it = m_done.find({t.src, t.id});
    if (it == m_done.end())
    {
        return;
    }
    NvlinkTransfer full = t;
    full.started = m_gpus[t.src]->GetStarted(t.id);
    auto done = it->second;
    m_done.erase(it);
    if (!done.IsNull())
    {
        done(full);
    }
}

uint64_t
NvlinkNode::GetDelivered(uint32_t src, uint32_t dst, uint64_t id) const
{
    return dst < m_gpus.size() ? m_gpus[dst]->GetReceived(src, id) : 0;
}

uint64_t
NvlinkNode::GetReplays() const
{
    uint64_t n = 0;
    for (const auto& l : m_links)
    {
        n += l->GetPort(0)->GetPacketsReplayed() + l->GetPort(1)->GetPacketsReplayed();
    }
    return n;
}

uint64_t
NvlinkNode::GetOverflows() const
{
    uint64_t n = 0;
    for (const auto& l : m_links)
    {
        n += l->GetPort(0)->GetOverflows() + l->GetPort(1)->GetOverflows();
    }
    return n;
}

Time
NvlinkNode::GetCreditStarvedTime() const
{
    Time t;
    for (const auto& l : m_links)
    {
        t += l->GetPort(0)->GetCreditStarvedTime() + l->GetPort(1)->GetCreditStarvedTime();
    }
    return t;
}

} // namespace ns3
