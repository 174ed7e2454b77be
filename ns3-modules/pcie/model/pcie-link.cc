#include "ns3/pcie-link.h"

#include "ns3/double.h"
#include "ns3/log.h"
#include "ns3/pcie-port.h"
#include "ns3/pcie-spec.h"
#include "ns3/uinteger.h"

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("PcieLink");
NS_OBJECT_ENSURE_REGISTERED(PcieLink);

TypeId
PcieLink::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::PcieLink")
            .SetParent<Object>()
            .SetGroupName("Pcie")
            .AddConstructor<PcieLink>()
            .AddAttribute("Generation", "PCIe generation 1-6 (2.5, 5, 8, 16, 32, 64 GT/s per lane)",
                          UintegerValue(4), MakeUintegerAccessor(&PcieLink::m_generation),
                          MakeUintegerChecker<uint32_t>())
            .AddAttribute("Width", "Lanes: 1, 2, 4, 8 or 16", UintegerValue(16),
                          MakeUintegerAccessor(&PcieLink::m_width), MakeUintegerChecker<uint32_t>())
            .AddAttribute("Delay", "Propagation delay one way (board trace, cable, retimers)",
                          TimeValue(NanoSeconds(2)), MakeTimeAccessor(&PcieLink::m_delay),
                          MakeTimeChecker(Time(0)))
            .AddAttribute("BitErrorRate",
                          "Probability that a wire bit is wrong; a TLP with a wrong bit fails "
                          "its LCRC and is replayed (0: error-free)",
                          DoubleValue(0.0), MakeDoubleAccessor(&PcieLink::m_ber),
                          MakeDoubleChecker<double>(0.0, 1.0));
    return tid;
}

PcieLink::PcieLink() = default;
PcieLink::~PcieLink() = default;

void
PcieLink::DoDispose()
{
    m_a = nullptr;
    m_b = nullptr;
    Object::DoDispose();
}

std::string
PcieLink::Check() const
{
    std::string problem = PcieCheckGeneration(m_generation);
    if (problem.empty())
    {
        problem = PcieCheckWidth(m_width);
    }
    return problem;
}

Ptr<PciePort>
PcieLink::GetPort(uint32_t i) const
{
    return i == 0 ? m_a : m_b;
}

void
PcieLink::Connect(Ptr<PciePort> a, Ptr<PciePort> b)
{
    NS_LOG_FUNCTION(this << a << b);
    m_bytePs = PcieBytePicoseconds(GetGeneration(), GetWidth());
    m_a = a;
    m_b = b;
    a->Attach(this, b);
    b->Attach(this, a);
}

} // namespace ns3
