#include "ns3/nvlink-node.h"

#include "ns3/abort.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

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
    m_nvls.clear();
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

std::string
NvlinkNode::CheckNvls(const std::vector<uint32_t>& gpus) const
{
    if (m_switches.empty())
    {
        return "NVLS needs NVSwitches; this server's GPUs are joined directly";
    }
    for (const auto& sw : m_switches)
    {
        if (!sw->OffersNvls())
        {
            UintegerValue g;
            sw->GetAttribute("Generation", g);
            return "NVLS needs NVSwitch gen3 or later (NVLink SHARP); this server's are gen" +
                   std::to_string(g.Get());
        }
    }
    for (uint32_t g : gpus)
    {
        if (g >= m_gpus.size())
        {
            return "no GPU " + std::to_string(g) + " (there are " + std::to_string(m_gpus.size()) +
                   ")";
        }
        for (uint32_t s = 0; s < m_switches.size(); ++s)
        {
            const auto it = m_switchPorts.find({g, s});
            const auto first = m_switchPorts.find({gpus.front(), s});
            const auto link = [this](uint32_t gpu, uint32_t port) {
                return m_gpus[gpu]->GetPort(port)->GetLink();
            };
            // Alike: the same rate and packets, so the same bytes meet in the same switch.
            if (it == m_switchPorts.end() || first == m_switchPorts.end() ||
                link(g, it->second)->GetBytesPerSecond() !=
                    link(gpus.front(), first->second)->GetBytesPerSecond() ||
                link(g, it->second)->GetMaxPayload() !=
                    link(gpus.front(), first->second)->GetMaxPayload())
            {
                return "NVLS needs every GPU linked alike to every NVSwitch; GPU " +
                       std::to_string(g) + " and GPU " + std::to_string(gpus.front()) +
                       " differ at switch " + std::to_string(s);
            }
        }
    }
    return "";
}

std::vector<NvlinkGpu::Part>
NvlinkNode::NvlsParts(uint32_t gpu, uint64_t bytes) const
{
    std::vector<double> rates;
    double total = 0;
    for (uint32_t s = 0; s < m_switches.size(); ++s)
    {
        const uint32_t port = m_switchPorts.at({gpu, s});
        rates.push_back(m_gpus[gpu]->GetPort(port)->GetLink()->GetBytesPerSecond());
        total += rates.back();
    }
    std::vector<NvlinkGpu::Part> parts;
    uint64_t offset = 0;
    for (uint32_t s = 0; s < m_switches.size(); ++s)
    {
        const uint64_t share = s + 1 == m_switches.size()
                                   ? bytes - offset
                                   : static_cast<uint64_t>(bytes * (rates[s] / total));
        parts.push_back({m_switchPorts.at({gpu, s}), offset, share});
        offset += share;
    }
    return parts;
}

void
NvlinkNode::SendReduced(const std::vector<uint32_t>& sources, uint32_t dst, uint64_t bytes,
                        Callback<void, const NvlinkTransfer&> done)
{
    NS_ABORT_MSG_IF(sources.empty() || bytes == 0, "NvlinkNode::SendReduced: nothing to sum");
    const uint64_t id = m_nextNvls++;
    m_nvls[id] = Nvls{1, Simulator::Now(), done};
    for (uint32_t g : sources)
    {
        m_gpus.at(g)->SendParts(NvlinkKind::Reduce, dst, id, bytes,
                                static_cast<uint32_t>(sources.size()), NvlsParts(g, bytes));
    }
}

void
NvlinkNode::Multicast(uint32_t src, const std::vector<uint32_t>& targets, uint64_t bytes,
                      Callback<void, const NvlinkTransfer&> done)
{
    NS_ABORT_MSG_IF(targets.empty() || bytes == 0, "NvlinkNode::Multicast: nothing to copy");
    const uint64_t id = m_nextNvls++;
    m_nvls[id] = Nvls{static_cast<uint32_t>(targets.size()), Simulator::Now(), done};
    for (const auto& sw : m_switches)
    {
        sw->AddGroup(id, targets);
    }
    m_gpus.at(src)->SendParts(NvlinkKind::Multicast, src, id, bytes, 0, NvlsParts(src, bytes));
}

void
NvlinkNode::Received(const NvlinkTransfer& t)
{
    if (const auto nvls = m_nvls.find(t.id); nvls != m_nvls.end())
    {
        if (--nvls->second.waiting > 0)
        {
            return;
        }
        NvlinkTransfer full = t;
        full.started = nvls->second.started;
        auto done = nvls->second.done;
        m_nvls.erase(nvls);
        for (const auto& sw : m_switches)
        {
            sw->RemoveGroup(t.id);
        }
        if (!done.IsNull())
        {
            done(full);
        }
        return;
    }
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
