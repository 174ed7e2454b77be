#include "ns3/switch-mmu.h"

#include "ns3/abort.h"
#include "ns3/boolean.h"
#include "ns3/double.h"
#include "ns3/uinteger.h"

#include <algorithm>

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(SwitchMmu);

TypeId
SwitchMmu::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::SwitchMmu")
            .SetParent<Object>()
            .SetGroupName("Roce")
            .AddConstructor<SwitchMmu>()
            .AddAttribute("BufferSize",
                          "Total packet buffer of the switch, bytes (reserve + headroom + shared)",
                          UintegerValue(12 * 1024 * 1024),
                          MakeUintegerAccessor(&SwitchMmu::m_bufferSize),
                          MakeUintegerChecker<uint64_t>(1))
            .AddAttribute("ReservePerPg", "Guaranteed bytes per ingress (port, priority group)",
                          UintegerValue(4096), MakeUintegerAccessor(&SwitchMmu::m_reservePerPg),
                          MakeUintegerChecker<uint64_t>())
            .AddAttribute("Alpha", "Dynamic threshold: a PG may hold alpha x free shared bytes",
                          DoubleValue(1.0 / 8), MakeDoubleAccessor(&SwitchMmu::m_alpha),
                          MakeDoubleChecker<double>(1.0 / 1024, 64))
            .AddAttribute("EgressAlpha", "Dynamic threshold of lossy egress queues",
                          DoubleValue(1.0), MakeDoubleAccessor(&SwitchMmu::m_egressAlpha),
                          MakeDoubleChecker<double>(1.0 / 1024, 64))
            .AddAttribute("StaticThreshold", "Use StaticXoff instead of the dynamic threshold",
                          BooleanValue(false), MakeBooleanAccessor(&SwitchMmu::m_staticThreshold),
                          MakeBooleanChecker())
            .AddAttribute("StaticXoff",
                          "Shared bytes per PG at which PFC pauses, with StaticThreshold",
                          UintegerValue(200 * 1024), MakeUintegerAccessor(&SwitchMmu::m_staticXoff),
                          MakeUintegerChecker<uint64_t>())
            .AddAttribute("ResumeOffset",
                          "XON once a PG's shared count is this far below its XOFF threshold, "
                          "bytes (scenarios set two frames of the path MTU)",
                          UintegerValue(2 * 1086), MakeUintegerAccessor(&SwitchMmu::m_resumeOffset),
                          MakeUintegerChecker<uint64_t>())
            .AddAttribute("PfcEnabled",
                          "Send PFC for lossless priorities (else every priority is lossy)",
                          BooleanValue(true), MakeBooleanAccessor(&SwitchMmu::m_pfcEnabled),
                          MakeBooleanChecker())
            .AddAttribute("LosslessPriorities", "Bit mask of the priorities PFC protects",
                          UintegerValue(0x08), MakeUintegerAccessor(&SwitchMmu::m_losslessMask),
                          MakeUintegerChecker<uint8_t>())
            .AddAttribute("EcnEnabled", "RED/ECN marking on egress queues", BooleanValue(true),
                          MakeBooleanAccessor(&SwitchMmu::m_ecnEnabled), MakeBooleanChecker())
            .AddAttribute("Kmin", "Egress queue bytes where marking starts",
                          UintegerValue(5 * 1024), MakeUintegerAccessor(&SwitchMmu::m_kMin),
                          MakeUintegerChecker<uint64_t>())
            .AddAttribute("Kmax", "Egress queue bytes above which every ECT frame is marked",
                          UintegerValue(200 * 1024), MakeUintegerAccessor(&SwitchMmu::m_kMax),
                          MakeUintegerChecker<uint64_t>())
            .AddAttribute("Pmax", "Marking probability at Kmax", DoubleValue(0.01),
                          MakeDoubleAccessor(&SwitchMmu::m_pMax), MakeDoubleChecker<double>(0, 1));
    return tid;
}

SwitchMmu::SwitchMmu() = default;

std::string
SwitchMmu::PortsProblem(const std::vector<uint64_t>& headroom) const
{
    if (m_kMax < m_kMin)
    {
        return "Kmax " + std::to_string(m_kMax) + " is below Kmin " + std::to_string(m_kMin);
    }
    uint64_t lossless = 0;
    for (uint8_t p = 0; p < kPriorities; ++p)
    {
        lossless += IsLossless(p);
    }
    uint64_t headroomTotal = 0;
    for (uint64_t h : headroom)
    {
        headroomTotal += h * lossless;
    }
    const uint64_t reserveTotal = m_reservePerPg * kPriorities * headroom.size();
    if (reserveTotal + headroomTotal >= m_bufferSize)
    {
        return "BufferSize " + std::to_string(m_bufferSize) + " bytes cannot hold reserve " +
               std::to_string(reserveTotal) + " + headroom " + std::to_string(headroomTotal) +
               " bytes for " + std::to_string(headroom.size()) + " ports";
    }
    return "";
}

void
SwitchMmu::ConfigurePorts(const std::vector<uint64_t>& headroom)
{
    const std::string problem = PortsProblem(headroom);
    NS_ABORT_MSG_IF(!problem.empty(), "SwitchMmu: " << problem);
    m_ingress.assign(headroom.size(), {});
    m_egress.assign(headroom.size(), {});
    m_headroomPerPg = headroom;
    m_headroomTotal = 0;
    uint64_t lossless = 0;
    for (uint8_t p = 0; p < kPriorities; ++p)
    {
        lossless += IsLossless(p);
    }
    for (uint64_t h : headroom)
    {
        m_headroomTotal += h * lossless;
    }
    m_reserveTotal = m_reservePerPg * kPriorities * headroom.size();
}

bool
SwitchMmu::IsLossless(uint8_t prio) const
{
    return m_pfcEnabled && ((m_losslessMask >> prio) & 1);
}

uint64_t
SwitchMmu::SharedPool() const
{
    return m_bufferSize - m_reserveTotal - m_headroomTotal;
}

uint64_t
SwitchMmu::PgThreshold() const
{
    if (m_staticThreshold)
    {
        return m_staticXoff;
    }
    return static_cast<uint64_t>(m_alpha * static_cast<double>(SharedPool() - m_sharedUsed));
}

uint64_t
SwitchMmu::EgressThreshold() const
{
    return static_cast<uint64_t>(m_egressAlpha * static_cast<double>(SharedPool() - m_sharedUsed));
}

SwitchMmu::Pg&
SwitchMmu::At(uint32_t port, uint8_t prio)
{
    return m_ingress.at(port)[prio];
}

const SwitchMmu::Pg&
SwitchMmu::At(uint32_t port, uint8_t prio) const
{
    return m_ingress.at(port)[prio];
}

SwitchMmu::Charge
SwitchMmu::Admit(uint32_t inPort, uint32_t outPort, uint8_t prio, uint32_t bytes)
{
    Pg& pg = At(inPort, prio);
    Charge charge = Charge::Dropped;
    if (pg.reserve + bytes <= m_reservePerPg)
    {
        charge = Charge::Reserve;
        pg.reserve += bytes;
    }
    else if (IsLossless(prio))
    {
        const bool sharedRoom = m_sharedUsed + bytes <= SharedPool();
        // Once a PG has spilled into headroom (it has asked for XOFF), it stays
        // there until the pause takes hold, so frames are not reordered in the books.
        if (sharedRoom && pg.headroom == 0 && pg.shared + bytes <= PgThreshold())
        {
            charge = Charge::Shared;
        }
        else if (pg.headroom + bytes <= m_headroomPerPg.at(inPort))
        {
            charge = Charge::Headroom;
            pg.headroom += bytes;
        }
    }
    else
    {
        const uint64_t egress = m_egress.at(outPort)[prio];
        if (m_sharedUsed + bytes <= SharedPool() && egress + bytes <= EgressThreshold())
        {
            charge = Charge::Shared;
        }
    }
    if (charge == Charge::Shared)
    {
        pg.shared += bytes;
        m_sharedUsed += bytes;
    }
    if (charge != Charge::Dropped)
    {
        m_egress.at(outPort)[prio] += bytes;
        m_totalUsed += bytes;
        m_peakUsed = std::max(m_peakUsed, m_totalUsed);
        NS_ABORT_MSG_IF(m_totalUsed > m_bufferSize, "SwitchMmu: buffer overrun, "
                                                        << m_totalUsed << " > " << m_bufferSize
                                                        << " bytes");
    }
    return charge;
}

void
SwitchMmu::Release(uint32_t inPort, uint32_t outPort, uint8_t prio, uint32_t bytes)
{
    Pg& pg = At(inPort, prio);
    NS_ABORT_MSG_IF(pg.reserve + pg.shared + pg.headroom < bytes,
                    "SwitchMmu: port " << inPort << " priority " << +prio << " releases " << bytes
                                       << " bytes it does not hold");
    const uint64_t fromHeadroom = std::min<uint64_t>(pg.headroom, bytes);
    const uint64_t fromShared = std::min<uint64_t>(pg.shared, bytes - fromHeadroom);
    pg.headroom -= fromHeadroom;
    pg.shared -= fromShared;
    m_sharedUsed -= fromShared;
    pg.reserve -= bytes - fromHeadroom - fromShared;
    m_egress.at(outPort)[prio] -= bytes;
    m_totalUsed -= bytes;
}

bool
SwitchMmu::ShouldPause(uint32_t inPort, uint8_t prio) const
{
    if (!IsLossless(prio))
    {
        return false;
    }
    const Pg& pg = At(inPort, prio);
    return pg.headroom > 0 || pg.shared >= PgThreshold();
}

bool
SwitchMmu::ShouldResume(uint32_t inPort, uint8_t prio) const
{
    const Pg& pg = At(inPort, prio);
    return pg.headroom == 0 && (pg.shared == 0 || pg.shared + m_resumeOffset <= PgThreshold());
}

double
SwitchMmu::Probability(const Red& red, uint64_t queueBytes)
{
    if (queueBytes <= red.kmin)
    {
        return 0;
    }
    if (queueBytes >= red.kmax)
    {
        return 1;
    }
    return red.pmax * static_cast<double>(queueBytes - red.kmin) /
           static_cast<double>(red.kmax - red.kmin);
}

double
SwitchMmu::MarkProbability(uint64_t queueBytes) const
{
    return m_ecnEnabled ? Probability(Red{m_kMin, m_kMax, m_pMax}, queueBytes) : 0;
}

double
SwitchMmu::MarkProbability(uint32_t port, uint8_t prio, uint64_t queueBytes) const
{
    if (!m_ecnEnabled)
    {
        return 0;
    }
    auto it = m_redOverride.find({port, prio});
    return it == m_redOverride.end() ? MarkProbability(queueBytes)
                                     : Probability(it->second, queueBytes);
}

void
SwitchMmu::SetEcnThresholds(uint32_t port, uint8_t prio, uint64_t kmin, uint64_t kmax, double pmax)
{
    NS_ABORT_MSG_IF(kmax < kmin, "SwitchMmu: Kmax " << kmax << " < Kmin " << kmin << " on port "
                                                    << port << " priority " << +prio);
    NS_ABORT_MSG_IF(pmax < 0 || pmax > 1, "SwitchMmu: Pmax " << pmax << " is not in 0..1");
    m_redOverride[{port, prio}] = Red{kmin, kmax, pmax};
}

uint64_t
SwitchMmu::GetIngressBytes(uint32_t port, uint8_t prio) const
{
    const Pg& pg = At(port, prio);
    return pg.reserve + pg.shared + pg.headroom;
}

uint64_t
SwitchMmu::GetHeadroomUsed(uint32_t port, uint8_t prio) const
{
    return At(port, prio).headroom;
}

uint64_t
SwitchMmu::GetSharedUsed(uint32_t port, uint8_t prio) const
{
    return At(port, prio).shared;
}

uint64_t
SwitchMmu::GetEgressBytes(uint32_t port, uint8_t prio) const
{
    return m_egress.at(port)[prio];
}

} // namespace ns3
