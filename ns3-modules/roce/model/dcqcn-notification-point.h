/*
 * DCQCN's notification point (Zhu et al., SIGCOMM 2015, section 3.2): the
 * receiver of CE-marked data answers its sender with a CNP, at most one per flow
 * per CnpInterval. The owner names the flow: ns3::RoceNic uses the local QP, the
 * emulator's RoCEv2 uplink a real endpoint's (sender address, QP). The owner
 * builds the CNP and sends it on CnpPriority with CnpDscp (ConnectX: 6 and 48).
 */
#ifndef FABEMU_DCQCN_NOTIFICATION_POINT_H
#define FABEMU_DCQCN_NOTIFICATION_POINT_H

#include "ns3/nstime.h"
#include "ns3/object.h"
#include "ns3/traced-callback.h"

#include <cstdint>
#include <unordered_map>

namespace ns3
{

class DcqcnNotificationPoint : public Object
{
  public:
    static TypeId GetTypeId();

    /// A CE-marked frame of \p flow arrived: true when a CNP is due now (it is then
    /// taken as sent, and the flow's interval starts again).
    bool OnMarked(uint64_t flow);
    /// Forgets \p flow (its QP is gone), so a new flow of that name starts afresh.
    void Forget(uint64_t flow);

    uint8_t GetCnpPriority() const { return m_cnpPriority; }
    uint8_t GetCnpDscp() const { return m_cnpDscp; }
    uint64_t GetCnpsDue() const { return m_cnpsDue; }

    /// TracedCallback signature: (the flow a CNP is due for).
    typedef void (*FlowTracedCallback)(uint64_t flow);

  private:
    Time m_cnpInterval;
    uint8_t m_cnpPriority;
    uint8_t m_cnpDscp;
    std::unordered_map<uint64_t, Time> m_lastCnp;
    uint64_t m_cnpsDue{0};
    TracedCallback<uint64_t> m_cnpTrace;
};

} // namespace ns3

#endif
