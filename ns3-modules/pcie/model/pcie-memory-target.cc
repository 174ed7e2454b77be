#include "ns3/pcie-memory-target.h"

#include "ns3/boolean.h"
#include "ns3/log.h"
#include "ns3/pcie-port.h"
#include "ns3/pcie-spec.h"
#include "ns3/simulator.h"
#include "ns3/trace-source-accessor.h"
#include "ns3/uinteger.h"

#include <algorithm>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("PcieMemoryTarget");
NS_OBJECT_ENSURE_REGISTERED(PcieMemoryTarget);

TypeId
PcieMemoryTarget::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::PcieMemoryTarget")
            .SetParent<Object>()
            .SetGroupName("Pcie")
            .AddConstructor<PcieMemoryTarget>()
            .AddAttribute("Latency",
                          "From a read's data being served to its first completion leaving",
                          TimeValue(NanoSeconds(100)),
                          MakeTimeAccessor(&PcieMemoryTarget::m_latency), MakeTimeChecker(Time(0)))
            .AddAttribute("Bandwidth",
                          "Rate at which the memory serves reads and writes, one after the "
                          "other (0bps: at once)",
                          DataRateValue(DataRate(0)),
                          MakeDataRateAccessor(&PcieMemoryTarget::m_bandwidth),
                          MakeDataRateChecker())
            .AddAttribute("ReadCompletionBoundary",
                          "RCB in bytes (64 or 128): completions other than the last end on it",
                          UintegerValue(64), MakeUintegerAccessor(&PcieMemoryTarget::m_rcb),
                          MakeUintegerChecker<uint32_t>())
            .AddAttribute("SplitAtRcb",
                          "Return one completion per RCB instead of up to Max Payload Size",
                          BooleanValue(false), MakeBooleanAccessor(&PcieMemoryTarget::m_splitAtRcb),
                          MakeBooleanChecker())
            .AddTraceSource("Written",
                            "A write TLP was taken by the memory (the TLP, when it was taken)",
                            MakeTraceSourceAccessor(&PcieMemoryTarget::m_writtenTrace),
                            "ns3::PcieMemoryTarget::WrittenTracedCallback");
    return tid;
}

PcieMemoryTarget::PcieMemoryTarget() = default;

void
PcieMemoryTarget::DoDispose()
{
    m_port = nullptr;
    m_send = Callback<void, const PcieTlp&, Ptr<PciePort>>();
    Object::DoDispose();
}

std::string
PcieMemoryTarget::Check() const
{
    return PcieCheckRcb(m_rcb);
}

Time
PcieMemoryTarget::Serve(uint32_t bytes)
{
    const Time start = std::max(Simulator::Now(), m_busyUntil);
    m_busyUntil =
        m_bandwidth.GetBitRate() == 0 ? start : start + m_bandwidth.CalculateBytesTxTime(bytes);
    return m_busyUntil;
}

Time
PcieMemoryTarget::Write(uint32_t bytes)
{
    m_written += bytes;
    return Serve(bytes);
}

Time
PcieMemoryTarget::Write(const PcieTlp& tlp)
{
    const Time taken = Write(tlp.payload);
    m_writtenTrace(tlp, taken);
    return taken;
}

void
PcieMemoryTarget::Read(const PcieTlp& request)
{
    Read(request, m_port);
}

void
PcieMemoryTarget::Read(const PcieTlp& request, Ptr<PciePort> via)
{
    NS_LOG_FUNCTION(this << request.address << request.length << request.tag);
    const Time served = Serve(request.length);
    Simulator::Schedule(served - Simulator::Now() + m_latency, &PcieMemoryTarget::SendCompletions,
                        this, request, via);
}

void
PcieMemoryTarget::SendCompletions(PcieTlp request, Ptr<PciePort> via)
{
    // Without a port (a root complex with no root ports) completions carry 256 bytes.
    const uint32_t mps = via ? via->GetMaxPayloadSize() : 256;
    uint64_t addr = request.address;
    uint32_t left = request.length;
    while (left > 0)
    {
        const uint32_t offset = static_cast<uint32_t>(addr % m_rcb);
        const uint32_t size = std::min(left, (m_splitAtRcb ? m_rcb : mps) - offset);
        PcieTlp cpl;
        cpl.kind = PcieTlp::Kind::Completion;
        cpl.headerBytes = 12; // completion headers are always 3DW
        cpl.ecrc = request.ecrc;
        cpl.payload = size;
        cpl.address = addr;
        cpl.tag = request.tag;
        cpl.requester = request.requester;
        cpl.transfer = request.transfer;
        addr += size;
        left -= size;
        cpl.last = left == 0;
        ++m_completions;
        if (m_send.IsNull())
        {
            via->Enqueue(cpl);
        }
        else
        {
            m_send(cpl, via);
        }
    }
}

} // namespace ns3
