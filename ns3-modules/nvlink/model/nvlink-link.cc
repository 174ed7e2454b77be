#include "ns3/nvlink-link.h"

#include "ns3/double.h"
#include "ns3/nvlink-port.h"
#include "ns3/uinteger.h"

#include <algorithm>
#include <cmath>

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(NvlinkLink);

double
NvlinkLinkBytesPerSecond(uint32_t generation)
{
    // ref 2.2: NVLink1 20 GB/s per link per direction; NVLink2-4 25; NVLink5 50.
    static const double rates[] = {0, 20e9, 25e9, 25e9, 25e9, 50e9};
    return generation >= 1 && generation <= 5 ? rates[generation] : 0;
}

double
NvlinkNcclEfficiency(uint32_t generation)
{
    // NCCL src/graph/topo.h per-link GB/s (ref 2.2): SM60 18.0 (NVLink1), SM70 20.0
    // (NVLink2), SM80 20.0 (NVLink3), SM90 20.6 (NVLink4), SM100 40.1 (NVLink5).
    static const double usable[] = {0, 18.0e9, 20.0e9, 20.0e9, 20.6e9, 40.1e9};
    const double raw = NvlinkLinkBytesPerSecond(generation);
    return raw > 0 ? usable[generation] / raw : 0;
}

TypeId
NvlinkLink::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::NvlinkLink")
            .SetParent<Object>()
            .SetGroupName("Nvlink")
            .AddConstructor<NvlinkLink>()
            .AddAttribute("Generation",
                          "NVLink generation 1-5 (20, 25, 25, 25, 50 GB/s per link per direction)",
                          UintegerValue(4), MakeUintegerAccessor(&NvlinkLink::m_generation),
                          MakeUintegerChecker<uint32_t>())
            .AddAttribute("Links", "Links bundled in this connection (1..18 and more)",
                          UintegerValue(1), MakeUintegerAccessor(&NvlinkLink::m_links),
                          MakeUintegerChecker<uint32_t>())
            .AddAttribute("Delay", "Propagation delay one way", TimeValue(NanoSeconds(10)),
                          MakeTimeAccessor(&NvlinkLink::m_delay), MakeTimeChecker(Time(0)))
            .AddAttribute("BitErrorRate",
                          "Probability that a wire bit is wrong; a hit packet fails its CRC and "
                          "is replayed (0: error-free)",
                          DoubleValue(0.0), MakeDoubleAccessor(&NvlinkLink::m_ber),
                          MakeDoubleChecker<double>(0.0, 1.0))
            .AddAttribute("MaxPayload", "Largest payload of one packet, bytes", UintegerValue(256),
                          MakeUintegerAccessor(&NvlinkLink::m_maxPayload),
                          MakeUintegerChecker<uint32_t>(16, 1 << 20))
            .AddAttribute("HeaderBytes",
                          "Wire bytes each packet costs beyond its payload (header, CRC, flow "
                          "control; not public). Negative: the value that puts a full packet at "
                          "NCCL's usable per-link bandwidth for the generation",
                          DoubleValue(-1.0), MakeDoubleAccessor(&NvlinkLink::m_headerBytes),
                          MakeDoubleChecker<double>());
    return tid;
}

NvlinkLink::NvlinkLink() = default;
NvlinkLink::~NvlinkLink() = default;

void
NvlinkLink::DoDispose()
{
    m_a = nullptr;
    m_b = nullptr;
    Object::DoDispose();
}

std::string
NvlinkLink::Check() const
{
    if (m_generation < 1 || m_generation > 5)
    {
        return "Generation " + std::to_string(m_generation) +
               " is not an NVLink generation (1 to 5)";
    }
    if (m_links < 1 || m_links > 64)
    {
        return "Links " + std::to_string(m_links) + " is not a link count (1 to 64)";
    }
    return "";
}

void
NvlinkLink::Connect(Ptr<NvlinkPort> a, Ptr<NvlinkPort> b)
{
    m_a = a;
    m_b = b;
    a->Attach(this, b);
    b->Attach(this, a);
}

Ptr<NvlinkPort>
NvlinkLink::GetPort(uint32_t i) const
{
    return i == 0 ? m_a : m_b;
}

double
NvlinkLink::GetHeaderBytes() const
{
    return GetHeaderBytes(m_maxPayload);
}

double
NvlinkLink::GetHeaderBytes(uint32_t payload) const
{
    if (m_headerBytes >= 0)
    {
        return m_headerBytes;
    }
    // A full packet at NCCL's usable rate: payload / (payload + h) = efficiency; each real
    // packet (256 bytes at most) a coarse one stands for pays its own.
    const uint32_t unit = std::min<uint32_t>(m_maxPayload, 256);
    const uint32_t packets = std::max<uint32_t>(1, (payload + unit - 1) / unit);
    return packets * unit * (1.0 / NvlinkNcclEfficiency(m_generation) - 1.0);
}

double
NvlinkLink::GetBytesPerSecond() const
{
    return NvlinkLinkBytesPerSecond(m_generation) * m_links;
}

Time
NvlinkLink::WireTime(uint32_t payload, uint32_t extra) const
{
    return Time::FromDouble(
        (payload + extra + GetHeaderBytes(payload)) / GetBytesPerSecond() * 1e12, Time::PS);
}

} // namespace ns3
