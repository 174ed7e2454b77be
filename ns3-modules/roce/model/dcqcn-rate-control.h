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
 * Rate increase events come from a timer (every RateIncreaseInterval) and a
 * byte counter (every ByteCounter bytes sent): while both stage counts are
 * below F, fast recovery (Rc = (Rt + Rc) / 2); once either passes F, additive
 * increase (Rt += Rai); once both pass F, hyper increase (Rt += i x Rhai).
 * Rates stay between MinRate and the line rate.
 */
#ifndef FABEMU_DCQCN_RATE_CONTROL_H
#define FABEMU_DCQCN_RATE_CONTROL_H

#include "ns3/data-rate.h"
#include "ns3/event-id.h"
#include "ns3/nstime.h"
#include "ns3/object.h"
#include "ns3/traced-value.h"

#include <optional>

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

    static TypeId GetTypeId();
    DcqcnRateControl();

    /// Sets the defaults of both DCQCN ends (this reaction point and the
    /// notification point's ns3::RoceNic::CnpInterval) to a named preset:
    /// "paper" (DCQCN, SIGCOMM 2015) or "nvidia" (ConnectX firmware defaults).
    /// Returns false for an unknown name.
    static bool ApplyPreset(const std::string& name);

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
    bool m_cnpInInterval{false};

    uint64_t m_lineRate{0};
    TracedValue<uint64_t> m_rc; ///< current rate, bit/s
    uint64_t m_rt{0};
    double m_alpha{1};
    uint32_t m_timerStage{0};
    uint32_t m_byteStage{0};
    uint64_t m_bytesSinceIncrease{0};
    std::optional<Time> m_lastDecrease;
    EventId m_alphaEvent;
    EventId m_increaseEvent;
};

} // namespace ns3

#endif
