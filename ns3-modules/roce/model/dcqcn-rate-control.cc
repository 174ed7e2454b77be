#include "ns3/dcqcn-rate-control.h"

#include "ns3/boolean.h"
#include "ns3/config.h"
#include "ns3/double.h"
#include "ns3/enum.h"
#include "ns3/simulator.h"
#include "ns3/string.h"
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
            .AddAttribute("G", "Gain of the alpha estimate", DoubleValue(1.0 / 256),
                          MakeDoubleAccessor(&DcqcnRateControl::m_g),
                          MakeDoubleChecker<double>(0, 1))
            .AddAttribute("InitialAlpha", "Alpha of a new flow", DoubleValue(1.0),
                          MakeDoubleAccessor(&DcqcnRateControl::m_initialAlpha),
                          MakeDoubleChecker<double>(0, 1))
            .AddAttribute("AlphaUpdate",
                          "How alpha follows CNPs: PerCnp (paper) or PerInterval (ConnectX)",
                          EnumValue(PerCnp), MakeEnumAccessor(&DcqcnRateControl::m_alphaUpdate),
                          MakeEnumChecker(PerCnp, "PerCnp", PerInterval, "PerInterval"))
            .AddAttribute(
                "AlphaUpdateInterval", "Period of alpha updates (tau'; ConnectX dce_tcp_rtt)",
                TimeValue(MicroSeconds(55)), MakeTimeAccessor(&DcqcnRateControl::m_alphaInterval),
                MakeTimeChecker(NanoSeconds(1)))
            .AddAttribute("RateIncreaseInterval", "Period of the rate-increase timer (T)",
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
                          UintegerValue(5), MakeUintegerAccessor(&DcqcnRateControl::m_f),
                          MakeUintegerChecker<uint32_t>(0))
            .AddAttribute("Rai", "Additive increase step", DataRateValue(DataRate("40Mbps")),
                          MakeDataRateAccessor(&DcqcnRateControl::m_rai), MakeDataRateChecker())
            .AddAttribute("Rhai", "Hyper increase step", DataRateValue(DataRate("200Mbps")),
                          MakeDataRateAccessor(&DcqcnRateControl::m_rhai), MakeDataRateChecker())
            .AddAttribute("MinRate", "The rate never falls below this",
                          DataRateValue(DataRate("100Mbps")),
                          MakeDataRateAccessor(&DcqcnRateControl::m_minRate), MakeDataRateChecker())
            .AddAttribute("MinDecreaseInterval",
                          "At most one rate decrease per interval (0: every CNP cuts); with "
                          "Decrease Periodic, the period of the decrease check",
                          TimeValue(Time(0)),
                          MakeTimeAccessor(&DcqcnRateControl::m_minDecreaseInterval),
                          MakeTimeChecker(Time(0)))
            .AddAttribute("AlphaFromFirstCnp",
                          "PerInterval: alpha is set to InitialAlpha at the first CNP and its "
                          "updates start then (HPCC), instead of running from the flow's start",
                          BooleanValue(false),
                          MakeBooleanAccessor(&DcqcnRateControl::m_alphaFromFirstCnp),
                          MakeBooleanChecker())
            .AddAttribute("Decrease",
                          "When the rate is cut: OnCnp (the paper) or Periodic (a check every "
                          "MinDecreaseInterval cuts if a CNP came since the last one; ConnectX, "
                          "HPCC)",
                          EnumValue(CutOnCnp), MakeEnumAccessor(&DcqcnRateControl::m_decrease),
                          MakeEnumChecker(CutOnCnp, "OnCnp", CutPeriodic, "Periodic"))
            .AddAttribute("ClampTargetRate",
                          "Every cut sets the target rate to the current rate; false keeps the "
                          "target when no increase came since the last cut (HPCC's "
                          "CLAMP_TARGET_RATE 0)",
                          BooleanValue(true),
                          MakeBooleanAccessor(&DcqcnRateControl::m_clampTargetRate),
                          MakeBooleanChecker())
            .AddAttribute("HyperIncrease",
                          "What leads to hyper increase: BothCounters (timer and byte counter "
                          "past F, the paper) or TimerOnly (the timer, after one additive "
                          "step; HPCC)",
                          EnumValue(BothCounters),
                          MakeEnumAccessor(&DcqcnRateControl::m_hyperIncrease),
                          MakeEnumChecker(BothCounters, "BothCounters", TimerOnly, "TimerOnly"))
            .AddAttribute("HyperIncreaseStep",
                          "Hyper increase adds i x Rhai at its i-th step (Growing, the paper) "
                          "or Rhai every time (Constant, HPCC)",
                          EnumValue(Growing), MakeEnumAccessor(&DcqcnRateControl::m_hyperStep),
                          MakeEnumChecker(Growing, "Growing", Constant, "Constant"))
            .AddTraceSource("Rate", "The current sending rate Rc, bit/s",
                            MakeTraceSourceAccessor(&DcqcnRateControl::m_rc),
                            "ns3::TracedValueCallback::Uint64");
    return tid;
}

DcqcnRateControl::DcqcnRateControl() = default;

std::vector<std::string>
DcqcnRateControl::PresetNames()
{
    return {"paper", "nvidia", "hpcc"};
}

bool
DcqcnRateControl::ApplyPreset(const std::string& name)
{
    // Sources: shared/reference/roce-congestion-control.md, section 2, and
    // docs/fidelity.md, which lists every value beside its origin.
    auto set = [](const std::string& attr, const AttributeValue& v) {
        Config::SetDefault("ns3::DcqcnRateControl::" + attr, v);
    };
    // What the three share unless they say otherwise: the paper's structure.
    set("AlphaFromFirstCnp", BooleanValue(false));
    set("Decrease", EnumValue(CutOnCnp));
    set("ClampTargetRate", BooleanValue(true));
    set("HyperIncrease", EnumValue(BothCounters));
    set("HyperIncreaseStep", EnumValue(Growing));
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
        Config::SetDefault("ns3::DcqcnNotificationPoint::CnpInterval", TimeValue(MicroSeconds(50)));
        return true;
    }
    if (name == "nvidia")
    {
        // DCE_TCP_G 1019 weighs the old estimate in 1024ths: g = (1024 - 1019) / 1024.
        set("G", DoubleValue(5.0 / 1024));
        set("InitialAlpha", DoubleValue(1023.0 / 1024)); // INITIAL_ALPHA_VALUE 1023
        set("AlphaUpdate", EnumValue(PerInterval));
        set("AlphaFromFirstCnp", BooleanValue(true));
        set("AlphaUpdateInterval", TimeValue(MicroSeconds(1)));    // DCE_TCP_RTT 1
        set("RateIncreaseInterval", TimeValue(MicroSeconds(300))); // RPG_TIME_RESET 300
        set("ByteCounter", UintegerValue(32767));                  // RPG_BYTE_RESET
        set("FastRecoverySteps", UintegerValue(1));                // RPG_THRESHOLD 1
        set("Rai", DataRateValue(DataRate("5Mbps")));              // RPG_AI_RATE
        set("Rhai", DataRateValue(DataRate("50Mbps")));            // RPG_HAI_RATE
        set("MinRate", DataRateValue(DataRate("1Mbps")));          // RPG_MIN_RATE
        set("Decrease", EnumValue(CutPeriodic));
        set("MinDecreaseInterval", TimeValue(MicroSeconds(4))); // RATE_REDUCE_MONITOR_PERIOD
        Config::SetDefault("ns3::DcqcnNotificationPoint::CnpInterval",
                           TimeValue(MicroSeconds(4))); // MIN_TIME_BETWEEN_CNPS
        return true;
    }
    if (name == "hpcc")
    {
        // HPCC's run.py --cc dcqcn (CC_MODE 1, rdma-hw.cc's Mellanox DCQCN) at 100 Gb/s.
        set("G", DoubleValue(1.0 / 256));      // EWMA_GAIN
        set("InitialAlpha", DoubleValue(1.0)); // alpha = 1 at the first CNP
        set("AlphaUpdate", EnumValue(PerInterval));
        set("AlphaFromFirstCnp", BooleanValue(true));
        set("AlphaUpdateInterval", TimeValue(MicroSeconds(1)));    // ALPHA_RESUME_INTERVAL 1
        set("RateIncreaseInterval", TimeValue(MicroSeconds(300))); // RP_TIMER 300
        set("ByteCounter", UintegerValue(0));                      // no byte counter
        set("FastRecoverySteps", UintegerValue(1));                // FAST_RECOVERY_TIMES 1
        set("Rai", DataRateValue(DataRate("20Mbps")));             // RATE_AI 5 x bw/25G
        set("Rhai", DataRateValue(DataRate("200Mbps")));           // RATE_HAI 50 x bw/25G
        set("MinRate", DataRateValue(DataRate("1000Mbps")));       // MIN_RATE (run.py)
        set("Decrease", EnumValue(CutPeriodic));
        set("MinDecreaseInterval", TimeValue(MicroSeconds(4))); // RATE_DECREASE_INTERVAL 4
        set("ClampTargetRate", BooleanValue(false));            // CLAMP_TARGET_RATE 0
        set("HyperIncrease", EnumValue(TimerOnly));
        set("HyperIncreaseStep", EnumValue(Constant));
        // HPCC flags CNP on the ACK of every marked packet: no NP rate limit.
        Config::SetDefault("ns3::DcqcnNotificationPoint::CnpInterval", TimeValue(Time(0)));
        return true;
    }
    return false;
}

void
DcqcnRateControl::DoDispose()
{
    m_alphaEvent.Cancel();
    m_increaseEvent.Cancel();
    m_decreaseEvent.Cancel();
    Object::DoDispose();
}

void
DcqcnRateControl::Start(DataRate lineRate)
{
    m_lineRate = lineRate.GetBitRate();
    m_rt = m_lineRate;
    m_rc = m_lineRate;
    m_alpha = m_initialAlpha;
    if (m_alphaUpdate == PerInterval && !m_alphaFromFirstCnp)
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
    const bool first = !m_seenCnp;
    m_seenCnp = true;
    if (m_alphaUpdate == PerCnp)
    {
        m_alpha = (1 - m_g) * m_alpha + m_g;
    }
    else if (first && m_alphaFromFirstCnp)
    {
        // HPCC: alpha starts at its initial value here, and this CNP is not counted again.
        m_alpha = m_initialAlpha;
        m_alphaEvent = Simulator::Schedule(m_alphaInterval, &DcqcnRateControl::AlphaTimer, this);
    }
    else if (!m_cnpInInterval)
    {
        // The interval's update counts its first CNP at once, so the cut below
        // sees it; ticks without a CNP decay alpha.
        m_alpha = (1 - m_g) * m_alpha + m_g;
        m_cnpInInterval = true;
    }
    if (m_decrease == CutPeriodic)
    {
        m_cnpSinceCheck = true;
        if (!m_decreaseEvent.IsRunning())
        {
            // The checks keep the phase of the first CNP (HPCC schedules them 1 ns after
            // the alpha update of the same instant); an idle QP stops checking.
            const Time now = Simulator::Now();
            if (first)
            {
                m_decreaseGrid = now + NanoSeconds(1);
            }
            const int64_t period = std::max<int64_t>(1, m_minDecreaseInterval.GetTimeStep());
            const int64_t since = (now - m_decreaseGrid).GetTimeStep();
            const int64_t next = (since / period + 1) * period;
            m_decreaseEvent = Simulator::Schedule(m_decreaseGrid + TimeStep(next) - now,
                                                  &DcqcnRateControl::DecreaseCheck, this);
        }
        return;
    }
    const Time now = Simulator::Now();
    if (m_lastDecrease && now - *m_lastDecrease < m_minDecreaseInterval)
    {
        return;
    }
    m_lastDecrease = now;
    Cut();
}

void
DcqcnRateControl::DecreaseCheck()
{
    if (!m_cnpSinceCheck)
    {
        return; // nothing to cut for: the next CNP restarts the checks on their grid
    }
    m_cnpSinceCheck = false;
    Cut();
    m_decreaseEvent =
        Simulator::Schedule(m_minDecreaseInterval, &DcqcnRateControl::DecreaseCheck, this);
}

void
DcqcnRateControl::Cut()
{
    if (m_clampTargetRate || m_timerStage > 0 || m_byteStage > 0)
    {
        m_rt = m_rc;
    }
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
    // How far past fast recovery this QP is: 0 while recovering, 1 for an additive
    // step, i + 1 for the i-th hyper step.
    uint32_t past = 0;
    if (m_hyperIncrease == TimerOnly || m_byteCounter == 0)
    {
        // One counter: additive at F + 1, hyper after it (a disabled byte counter
        // cannot hold the timer back).
        past = m_timerStage > m_f ? m_timerStage - m_f : 0;
    }
    else
    {
        const uint32_t hi = std::max(m_timerStage, m_byteStage);
        const uint32_t lo = std::min(m_timerStage, m_byteStage);
        past = lo > m_f ? lo - m_f + 1 : hi > m_f ? 1 : 0;
    }
    if (past >= 2)
    {
        const uint64_t i = m_hyperStep == Growing ? past - 1 : 1;
        m_rt = std::min<uint64_t>(m_rt + i * m_rhai.GetBitRate(), m_lineRate);
    }
    else if (past == 1)
    {
        m_rt = std::min<uint64_t>(m_rt + m_rai.GetBitRate(), m_lineRate);
    }
    SetRate((m_rt + m_rc) / 2);
}

} // namespace ns3
