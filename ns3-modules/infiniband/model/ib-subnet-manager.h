/*
 * The subnet manager's timing: how soon after a port changes state (a link goes down or
 * comes back) it has swept the subnet and loaded new linear forwarding tables. The routes
 * themselves (min-hop or up/down) are IbFabricHelper's, which plays the SM.
 */
#ifndef FABEMU_IB_SUBNET_MANAGER_H
#define FABEMU_IB_SUBNET_MANAGER_H

#include "ns3/nstime.h"
#include "ns3/object.h"

namespace ns3
{

class IbSubnetManager : public Object
{
  public:
    static TypeId GetTypeId();

    /// When a sweep after a port change at \p now has loaded the new tables.
    Time NextSweep(Time now) const { return now + m_sweepInterval; }
    /// Counts a sweep that changed the forwarding tables.
    void NotifySweep() { ++m_sweeps; }
    uint32_t GetSweeps() const { return m_sweeps; }

  private:
    Time m_sweepInterval;
    uint32_t m_sweeps{0};
};

} // namespace ns3

#endif
