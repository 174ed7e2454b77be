#include "dcqcn-rate-control.h"

#include "ns3/config.h"
#include "ns3/double.h"
#include "ns3/enum.h"
#include "ns3/string.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

#include <algorithm>

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(DcqcnRateControl);

TypeId
DcqcnRateControl::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::DcqcnRateControl")
            .SetParent<Object>()
            .SetGroupName("Roce")
            .AddConstructor<DcqcnRateControl>()
            .AddAttribute("G",
                          "Gain of the alpha estimate",
                          DoubleValue(1.0 / 256),
                          MakeDoubleAccessor(&DcqcnRateControl::m_g),
                          MakeDoubleChecker<double>(0, 1))
            .AddAttribute("InitialAlpha",
                          "Alpha of a new flow",
                          DoubleValue(1.0),
                          MakeDoubleAccessor(&DcqcnRateControl::m_initialAlpha),
                          MakeDoubleChecker<double>(0, 1))
            .AddAttribute("AlphaUpdate",
                          "How alpha follows CNPs: PerCnp (paper) or PerInterval (ConnectX)",
                          EnumValue(PerCnp),
                          MakeEnumAccessor(&DcqcnRateControl::m_alphaUpdate),
                          MakeEnumChecker(PerCnp, "PerCnp", PerInterval, "PerInterval"))
            .AddAttribute("AlphaUpdateInterval",
                          "Period of alpha updates (tau'; ConnectX dce_tcp_rtt)",
                          TimeValue(MicroSeconds(55)),
                          MakeTimeAccessor(&DcqcnRateControl::m_alphaInterval),
                          MakeTimeChecker(NanoSeconds(1)))
            .AddAttribute("RateIncreaseInterval",
                          "Period of the rate-increase timer (T)",
                          TimeValue(MicroSeconds(55)),
                          MakeTimeAccessor(&DcqcnRateControl::m_increaseInterval),
                          MakeTimeChecker(NanoSeconds(1)))
            .AddAttribute("ByteCounter",
                          "Bytes sent per byte-counter increase event (B); 0 disables it",
                          UintegerValue(10 * 1000 * 1000),
                          MakeUintegerAccessor(&DcqcnRateControl::m_byteCounter),
                          MakeUintegerChecker<uint64_t>())
            .AddAttribute("FastRecoverySteps",
                          "Increase events of fast recovery before additive increase (F)",
                          UintegerValue(5),
                          MakeUintegerAccessor(&DcqcnRateControl::m_f),
                          MakeUintegerChecker<uint32_t>(0))
            .AddAttribute("Rai",
                          "Additive increase step",
                          DataRateValue(DataRate("40Mbps")),
                          MakeDataRateAccessor(&DcqcnRateControl::m_rai),
                          MakeDataRateChecker())
            .AddAttribute("Rhai",
                          "Hyper increase step",
                          DataRateValue(DataRate("200Mbps")),
                          MakeDataRateAccessor(&DcqcnRateControl::m_rhai),
                          MakeDataRateChecker())
            .AddAttribute("MinRate",
                          "The rate never falls below this",
                          DataRateValue(DataRate("100Mbps")),
                          MakeDataRateAccessor(&DcqcnRateControl::m_minRate),
                          MakeDataRateChecker())
            .AddAttribute("MinDecreaseInterval",
                          "At most one rate decrease per interval (0: every CNP cuts)",
                          TimeValue(Time(0)),
                          MakeTimeAccessor(&DcqcnRateControl::m_minDecreaseInterval),
                          MakeTimeChecker(Time(0)))
            .AddTraceSource("Rate",
                            "The current sending rate Rc, bit/s",
                            MakeTraceSourceAccessor(&DcqcnRateControl::m_rc),
                            "ns3::TracedValueCallback::Uint64");
    return tid;
}

DcqcnRateControl::DcqcnRateControl() = default;

bool
DcqcnRateControl::ApplyPreset(const std::string& name)
{
    // Both from shared/reference/roce-congestion-control.md, section 2; the ConnectX
    // values as its firmware reports them (mlxconfig: RPG_*, DCE_TCP_*, ...).
    auto set = [](const std::string& attr, const AttributeValue& v) {
        Config::SetDefault("ns3::DcqcnRateControl::" + attr, v);
    };
    if (name == "paper")
    {
        set("G", DoubleValue(1.0 / 256));
        set("InitialAlpha", DoubleValue(1.0));
        set("AlphaUpdate", EnumValue(PerCnp));
        set("AlphaUpdateInterval", TimeValue(MicroSeconds(55)));
        set("RateIncreaseInterval", TimeValue(MicroSeconds(55)));
        set("ByteCounter", UintegerValue(10 * 1000 * 1000));
        set("FastRecoverySteps", UintegerValue(5));
        set("Rai", DataRateValue(DataRate("40Mbps")));
        set("Rhai", DataRateValue(DataRate("200Mbps")));
        set("MinRate", DataRateValue(DataRate("100Mbps")));
        set("MinDecreaseInterval", TimeValue(Time(0)));
        Config::SetDefault("ns3::RoceNic::CnpInterval", TimeValue(MicroSeconds(50)));
        return true;
    }
    if (name == "nvidia")
    {
        set("G", DoubleValue(1019.0 / 1024));           // DCE_TCP_G 1019
        set("InitialAlpha", DoubleValue(1023.0 / 1024)); // INITIAL_ALPHA_VALUE 1023
        set("AlphaUpdate", EnumValue(PerInterval));
        set("AlphaUpdateInterval", TimeValue(MicroSeconds(1)));    // DCE_TCP_RTT 1
        set("RateIncreaseInterval", TimeValue(MicroSeconds(300))); // RPG_TIME_RESET 300
        set("ByteCounter", UintegerValue(32767));                 // RPG_BYTE_RESET
        set("FastRecoverySteps", UintegerValue(1));               // RPG_THRESHOLD 1
        set("Rai", DataRateValue(DataRate("5Mbps")));             // RPG_AI_RATE
        set("Rhai", DataRateValue(DataRate("50Mbps")));           // RPG_HAI_RATE
        set("MinRate", DataRateValue(DataRate("1Mbps")));         // RPG_MIN_RATE
        set("MinDecreaseInterval", TimeValue(MicroSeconds(4)));   // RATE_REDUCE_MONITOR_PERIOD
        Config::SetDefault("ns3::RoceNic::CnpInterval",
                           TimeValue(MicroSeconds(4))); // MIN_TIME_BETWEEN_CNPS
        return true;
    }
    return false;
}

void
DcqcnRateControl::DoDispose()
{
    m_alphaEvent.Cancel();
    m_increaseEvent.Cancel();
    Object::DoDispose();
}

void
DcqcnRateControl::Start(DataRate lineRate)
{
    m_lineRate = lineRate.GetBitRate();
    m_rt = m_lineRate;
    m_rc = m_lineRate;
    m_alpha = m_initialAlpha;
    if (m_alphaUpdate == PerInterval)
    {
        m_alphaEvent = Simulator::Schedule(m_alphaInterval, &DcqcnRateControl::AlphaTimer, this);
    }
}

void
DcqcnRateControl::SetRate(uint64_t bps)
{
    m_rc = std::clamp<uint64_t>(bps, m_minRate.GetBitRate(), m_lineRate);
}

void
DcqcnRateControl::OnCnp()
{
    const Time now = Simulator::Now();
    if (m_alphaUpdate == PerCnp)
    {
        m_alpha = (1 - m_g) * m_alpha + m_g;
    }
    else if (!m_cnpInInterval)
    {
        // The interval's update counts its first CNP at once, so the cut below
        // sees it; ticks without a CNP decay alpha.
        m_alpha = (1 - m_g) * m_alpha + m_g;
        m_cnpInInterval = true;
    }
    if (m_lastDecrease && now - *m_lastDecrease < m_minDecreaseInterval)
    {
        return;
    }
    m_lastDecrease = now;
    m_rt = m_rc;
    SetRate(static_cast<uint64_t>(static_cast<double>(m_rc) * (1 - m_alpha / 2)));
    m_timerStage = 0;
    m_byteStage = 0;
    m_bytesSinceIncrease = 0;
    if (m_alphaUpdate == PerCnp)
    {
        // The paper's alpha timer counts from the last CNP.
        m_alphaEvent.Cancel();
        m_alphaEvent = Simulator::Schedule(m_alphaInterval, &DcqcnRateControl::AlphaTimer, this);
    }
    m_increaseEvent.Cancel();
    m_increaseEvent =
        Simulator::Schedule(m_increaseInterval, &DcqcnRateControl::IncreaseTimer, this);
}

void
DcqcnRateControl::AlphaTimer()
{
    if (m_alphaUpdate == PerCnp || !m_cnpInInterval)
    {
        m_alpha = (1 - m_g) * m_alpha;
    }
    m_cnpInInterval = false;
    m_alphaEvent = Simulator::Schedule(m_alphaInterval, &DcqcnRateControl::AlphaTimer, this);
}

void
DcqcnRateControl::IncreaseTimer()
{
    ++m_timerStage;
    Increase();
    if (m_rc < m_lineRate || m_rt < m_lineRate)
    {
        m_increaseEvent =
            Simulator::Schedule(m_increaseInterval, &DcqcnRateControl::IncreaseTimer, this);
    }
}

void
DcqcnRateControl::OnBytesSent(uint32_t bytes)
{
    if (m_byteCounter == 0 || m_rc >= m_lineRate)
    {
        return;
    }
    m_bytesSinceIncrease += bytes;
    if (m_bytesSinceIncrease >= m_byteCounter)
    {
        m_bytesSinceIncrease = 0;
        ++m_byteStage;
        Increase();
    }
}

void
DcqcnRateControl::Increase()
{
    const uint32_t hi = std::max(m_timerStage, m_byteStage);
    const uint32_t lo = std::min(m_timerStage, m_byteStage);
    if (lo > m_f)
    {
        const uint64_t i = lo - m_f;
        m_rt = std::min<uint64_t>(m_rt + i * m_rhai.GetBitRate(), m_lineRate);
    }
    else if (hi > m_f)
    {
        m_rt = std::min<uint64_t>(m_rt + m_rai.GetBitRate(), m_lineRate);
    }
    SetRate((m_rt + m_rc) / 2);
}

} // namespace ns3
