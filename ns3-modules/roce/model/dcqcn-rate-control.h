/*
 * DCQCN reaction point (Zhu et al., SIGCOMM 2015), per queue pair.
 *
 * On a CNP: target rate Rt = current rate Rc, Rc *= (1 - alpha/2), alpha moves
 * toward 1 by g. Without CNPs alpha decays by (1 - g) every AlphaUpdateInterval.
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

namespace ns3
{

class DcqcnRateControl : public Object
{
  public:
    static TypeId GetTypeId();
    DcqcnRateControl();

    /// Sets the parameters of a named preset: "paper" (DCQCN, SIGCOMM 2015) or
    /// "nvidia" (ConnectX defaults). Returns false for an unknown name.
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

    uint64_t m_lineRate{0};
    TracedValue<uint64_t> m_rc; ///< current rate, bit/s
    uint64_t m_rt{0};
    double m_alpha{1};
    uint32_t m_timerStage{0};
    uint32_t m_byteStage{0};
    uint64_t m_bytesSinceIncrease{0};
    Time m_lastDecrease{Time::Min()};
    EventId m_alphaEvent;
    EventId m_increaseEvent;
};

} // namespace ns3

#endif
