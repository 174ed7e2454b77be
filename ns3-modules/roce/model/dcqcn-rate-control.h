/*
 * DCQCN reaction point (Zhu et al., SIGCOMM 2015), per queue pair.
 *
 * On a CNP: target rate Rt = current rate Rc, Rc *= (1 - alpha/2). Alpha, the
 * congestion estimate, is updated in one of two ways (AlphaUpdate):
 *  - PerCnp (the paper): alpha = (1 - g) alpha + g on each CNP, and
 *    alpha = (1 - g) alpha after each AlphaUpdateInterval without one;
 *  - PerInterval (NVIDIA ConnectX, dce_tcp_g/dce_tcp_rtt): every interval,
 *    alpha = (1 - g) alpha + g x [a CNP arrived in that interval]; the first
 *    CNP of an interval is counted when it arrives, so the cut it causes
 *    uses it, and an interval without a CNP decays alpha at its end.
 * A cut sets Rt = Rc (unless ClampTargetRate is off and no increase came
 * since the last cut) and Rc *= (1 - alpha/2). It happens either on the CNP
 * itself, at most once per MinDecreaseInterval (Decrease OnCnp, the paper), or
 * on a periodic check every MinDecreaseInterval that cuts when a CNP came since
 * the last check (Decrease Periodic: ConnectX, HPCC's CC_MODE 1).
 * Rate increase events come from a timer (every RateIncreaseInterval) and a
 * byte counter (every ByteCounter bytes sent; 0: no byte counter): while the
 * stage counts are at most F, fast recovery (Rc = (Rt + Rc) / 2); then
 * additive increase (Rt += Rai); then hyper increase (Rt += Rhai, or i x Rhai
 * with HyperIncreaseStep Growing). HyperIncrease BothCounters (the paper):
 * additive once either count passes F, hyper once both do. TimerOnly (HPCC):
 * the timer's count alone, one additive step at F + 1, hyper after it.
 * Rates stay between MinRate and the line rate.
 *
 * The presets (ApplyPreset) and their sources are in docs/fidelity.md.
 */
#ifndef FABEMU_DCQCN_RATE_CONTROL_H
#define FABEMU_DCQCN_RATE_CONTROL_H

#include "ns3/data-rate.h"
#include "ns3/event-id.h"
#include "ns3/nstime.h"
#include "ns3/object.h"
#include "ns3/traced-value.h"

#include <optional>
#include <string>
#include <vector>

namespace ns3
{

class DcqcnRateControl : public Object
{
  public:
    enum AlphaUpdate
    {
        PerCnp,
        PerInterval,
    };

    /// When the rate is cut.
    enum Decrease
    {
        CutOnCnp,    ///< on a CNP, at most one cut per MinDecreaseInterval (the paper)
        CutPeriodic, ///< every MinDecreaseInterval, if a CNP came since the last check
    };

    /// What lets a QP into hyper increase.
    enum HyperIncrease
    {
        BothCounters, ///< timer and byte counter both past F (the paper)
        TimerOnly,    ///< the timer alone, after one additive step (HPCC)
    };

    /// The hyper increase step.
    enum HyperIncreaseStep
    {
        Growing,  ///< i x Rhai at the i-th step (the paper)
        Constant, ///< Rhai at every step (HPCC)
    };

    static TypeId GetTypeId();
    DcqcnRateControl();

    /// Sets the defaults of both DCQCN ends (this reaction point and the
    /// notification point's ns3::DcqcnNotificationPoint::CnpInterval) to a named preset:
    /// "paper" (DCQCN, SIGCOMM 2015), "nvidia" (ConnectX firmware defaults) or
    /// "hpcc" (HPCC's simulator, CC_MODE 1). Returns false for an unknown name.
    static bool ApplyPreset(const std::string& name);
    /// The preset names ApplyPreset knows.
    static std::vector<std::string> PresetNames();

    /// Starts at \p lineRate (flows start at line rate).
    void Start(DataRate lineRate);
    void OnCnp();
    void OnBytesSent(uint32_t bytes);
    DataRate GetRate() const { return DataRate(m_rc); }
    DataRate GetTargetRate() const { return DataRate(m_rt); }
    double GetAlpha() const { return m_alpha; }

  protected:
    void DoDispose() override;

  private:
    void AlphaTimer();
    void IncreaseTimer();
    void Increase();
    void Cut();
    void DecreaseCheck();
    void SetRate(uint64_t bps);

    // Attributes
    double m_g;
    Time m_alphaInterval;
    Time m_increaseInterval;
    uint64_t m_byteCounter;
    uint32_t m_f;
    DataRate m_rai;
    DataRate m_rhai;
    DataRate m_minRate;
    Time m_minDecreaseInterval;
    double m_initialAlpha;
    AlphaUpdate m_alphaUpdate;
    bool m_alphaFromFirstCnp;
    Decrease m_decrease;
    bool m_clampTargetRate;
    HyperIncrease m_hyperIncrease;
    HyperIncreaseStep m_hyperStep;
    bool m_cnpInInterval{false};
    bool m_cnpSinceCheck{false}; ///< Periodic: a CNP came since the last decrease check
    bool m_seenCnp{false};

    uint64_t m_lineRate{0};
    TracedValue<uint64_t> m_rc; ///< current rate, bit/s
    uint64_t m_rt{0};
    double m_alpha{1};
    uint32_t m_timerStage{0};
    uint32_t m_byteStage{0};
    uint64_t m_bytesSinceIncrease{0};
    std::optional<Time> m_lastDecrease;
    Time m_decreaseGrid; ///< Periodic: when the checks' grid starts
    EventId m_alphaEvent;
    EventId m_increaseEvent;
    EventId m_decreaseEvent;
};

} // namespace ns3

#endif
