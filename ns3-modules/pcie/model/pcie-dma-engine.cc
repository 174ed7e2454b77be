#include "ns3/pcie-dma-engine.h"

#include "ns3/boolean.h"
#include "ns3/log.h"
#include "ns3/pcie-port.h"
#include "ns3/pcie-spec.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

#include <algorithm>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("PcieDmaEngine");
NS_OBJECT_ENSURE_REGISTERED(PcieDmaEngine);

TypeId
PcieDmaEngine::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::PcieDmaEngine")
            .SetParent<Object>()
            .SetGroupName("Pcie")
            .AddConstructor<PcieDmaEngine>()
            .AddAttribute("MaxReadRequestSize",
                          "Largest read request in bytes (128 << n, up to 4096)",
                          UintegerValue(512), MakeUintegerAccessor(&PcieDmaEngine::m_mrrs),
                          MakeUintegerChecker<uint32_t>())
            .AddAttribute("Tags",
                          "Read requests outstanding at once (5-bit tags: 32; 8-bit: 256; "
                          "10-bit: 768)",
                          UintegerValue(32), MakeUintegerAccessor(&PcieDmaEngine::m_maxTags),
                          MakeUintegerChecker<uint32_t>(1, 1024))
            .AddAttribute("WriteQueueDepth", "Write TLPs the engine keeps queued at its port",
                          UintegerValue(4), MakeUintegerAccessor(&PcieDmaEngine::m_queueDepth),
                          MakeUintegerChecker<uint32_t>(1, 1024))
            .AddAttribute("Use64BitAddress",
                          "4DW headers (16 B, 64-bit addresses) instead of 3DW (12 B)",
                          BooleanValue(false), MakeBooleanAccessor(&PcieDmaEngine::m_addr64),
                          MakeBooleanChecker())
            .AddAttribute("Ecrc", "Append the optional 4-byte end-to-end CRC to requests",
                          BooleanValue(false), MakeBooleanAccessor(&PcieDmaEngine::m_ecrc),
                          MakeBooleanChecker())
            .AddTraceSource("TransferDone",
                            "A DMA transfer completed (id, write or read, bytes, start and end)",
                            MakeTraceSourceAccessor(&PcieDmaEngine::m_doneTrace),
                            "ns3::PcieDmaEngine::TransferTracedCallback");
    return tid;
}

PcieDmaEngine::PcieDmaEngine() = default;

void
PcieDmaEngine::DoDispose()
{
    m_port = nullptr;
    m_done = Callback<void, const PcieTransfer&>();
    Object::DoDispose();
}

std::string
PcieDmaEngine::Check() const
{
    return PcieCheckSizeEncoding("MaxReadRequestSize", m_mrrs);
}

void
PcieDmaEngine::SetPort(Ptr<PciePort> port)
{
    m_port = port;
    m_freeTags.clear();
    for (uint32_t t = m_maxTags; t > 0; --t)
    {
        m_freeTags.push_back(static_cast<uint16_t>(m_tagBase + t - 1));
    }
}

uint64_t
PcieDmaEngine::Write(uint64_t address, uint64_t bytes)
{
    NS_LOG_FUNCTION(this << address << bytes);
    const uint64_t id = m_nextId++;
    Job& j = m_jobs[id];
    j.t = {id, true, address, bytes, Simulator::Now(), Time(0)};
    if (bytes == 0)
    {
        Finish(id);
        return id;
    }
    m_writes.push_back(id);
    PumpWrites();
    return id;
}

uint64_t
PcieDmaEngine::Read(uint64_t address, uint64_t bytes)
{
    NS_LOG_FUNCTION(this << address << bytes);
    const uint64_t id = m_nextId++;
    Job& j = m_jobs[id];
    j.t = {id, false, address, bytes, Simulator::Now(), Time(0)};
    if (bytes == 0)
    {
        Finish(id);
        return id;
    }
    m_reads.push_back(id);
    PumpReads();
    return id;
}

void
PcieDmaEngine::PumpWrites()
{
    const uint32_t mps = m_port->GetMaxPayloadSize();
    while (!m_writes.empty() && m_port->GetQueued(PcieFcType::Posted) < m_queueDepth)
    {
        Job& j = m_jobs[m_writes.front()];
        const uint64_t addr = j.t.address + j.issued;
        // A TLP never crosses an MPS-aligned boundary (so never a 4 KB one either).
        const uint32_t size =
            static_cast<uint32_t>(std::min<uint64_t>(mps - addr % mps, j.t.bytes - j.issued));
        PcieTlp tlp;
        tlp.kind = PcieTlp::Kind::MemWrite;
        tlp.headerBytes = HeaderBytes();
        tlp.ecrc = m_ecrc;
        tlp.payload = size;
        tlp.address = addr;
        tlp.transfer = j.t.id;
        tlp.requester = m_requester;
        j.issued += size;
        tlp.last = j.issued == j.t.bytes;
        if (tlp.last)
        {
            m_writes.pop_front();
        }
        m_port->Enqueue(tlp);
    }
}

void
PcieDmaEngine::PumpReads()
{
    while (!m_reads.empty() && !m_freeTags.empty())
    {
        Job& j = m_jobs[m_reads.front()];
        const uint64_t addr = j.t.address + j.issued;
        const uint32_t size =
            static_cast<uint32_t>(std::min<uint64_t>(m_mrrs - addr % m_mrrs, j.t.bytes - j.issued));
        const uint16_t tag = m_freeTags.back();
        m_freeTags.pop_back();
        m_tags[tag] = {j.t.id, size};
        PcieTlp tlp;
        tlp.kind = PcieTlp::Kind::MemRead;
        tlp.headerBytes = HeaderBytes();
        tlp.ecrc = m_ecrc;
        tlp.length = size;
        tlp.address = addr;
        tlp.tag = tag;
        tlp.transfer = j.t.id;
        tlp.requester = m_requester;
        j.issued += size;
        if (j.issued == j.t.bytes)
        {
            m_reads.pop_front();
        }
        ++m_requests;
        m_port->Enqueue(tlp);
    }
}

void
PcieDmaEngine::Dequeued(PcieFcType type)
{
    if (type == PcieFcType::Posted)
    {
        PumpWrites();
    }
}

void
PcieDmaEngine::Acked(const PcieTlp& tlp)
{
    if (tlp.kind == PcieTlp::Kind::MemWrite && tlp.last)
    {
        Finish(tlp.transfer);
    }
}

void
PcieDmaEngine::ReceiveCompletion(const PcieTlp& cpl)
{
    auto tag = m_tags.find(cpl.tag);
    if (tag == m_tags.end())
    {
        NS_LOG_WARN("completion for tag " << cpl.tag << " not outstanding: dropped");
        return;
    }
    tag->second.remaining -= std::min(tag->second.remaining, cpl.payload);
    auto job = m_jobs.find(tag->second.transfer);
    if (tag->second.remaining == 0)
    {
        m_tags.erase(tag);
        m_freeTags.push_back(cpl.tag);
    }
    if (job != m_jobs.end())
    {
        job->second.received += cpl.payload;
        if (job->second.received >= job->second.t.bytes)
        {
            Finish(job->first);
        }
    }
    PumpReads();
}

void
PcieDmaEngine::Finish(uint64_t id)
{
    auto it = m_jobs.find(id);
    if (it == m_jobs.end())
    {
        return;
    }
    PcieTransfer t = it->second.t;
    t.completed = Simulator::Now();
    NS_LOG_FUNCTION(this << id << t.write << t.bytes);
    m_jobs.erase(it);
    m_doneTrace(t);
    if (!m_done.IsNull())
    {
        m_done(t);
    }
}

} // namespace ns3
