/*
 * A flow's pace at its sender: when its next data frame may leave, at the rate
 * of its congestion control (DCQCN's reaction point, ns3::DcqcnRateControl) or,
 * without one, at the line rate. Each frame sent moves that time on by the
 * frame's wire time (preamble, FCS and gap included) at the rate then in force.
 * ns3::RoceNic keeps one per QP; the emulator's RoCEv2 uplink one per flow of a
 * real endpoint, which has no DCQCN of its own.
 */
#ifndef FABEMU_FLOW_PACER_H
#define FABEMU_FLOW_PACER_H

#include "ns3/data-rate.h"
#include "ns3/dcqcn-rate-control.h"
#include "ns3/nstime.h"
#include "ns3/object.h"
#include "ns3/tx-time-cache.h"

namespace ns3
{

class FlowPacer : public Object
{
  public:
    static TypeId GetTypeId();

    /// Paces at \p lineRate until SetRateControl gives it a congestion control.
    void SetLineRate(DataRate lineRate);
    /// Paces at \p cc's rate from now on; starts \p cc at the line rate.
    void SetRateControl(Ptr<DcqcnRateControl> cc);
    /// The congestion control, or null.
    Ptr<DcqcnRateControl> GetRateControl() const { return m_cc; }

    /// The rate in force: the congestion control's, or the line rate.
    DataRate GetRate() const;
    /// The earliest time the next data frame may leave.
    Time GetNextSend() const { return m_nextSend; }
    /// A data frame of \p frameBytes (Ethernet header to ICRC, without the FCS) left now.
    void OnSent(uint32_t frameBytes);
    /// A CNP arrived for this flow.
    void OnCnp();

  protected:
    void DoDispose() override;

  private:
    DataRate m_lineRate;
    Ptr<DcqcnRateControl> m_cc;
    Time m_nextSend;
    TxTimeCache m_txTimes; ///< gaps of the last few frame sizes at the current rate
};

} // namespace ns3

#endif
