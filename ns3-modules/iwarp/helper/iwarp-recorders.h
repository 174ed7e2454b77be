/*
 * Recorders for an iWARP fabric, in the formats the other fabrics' use: switch
 * queue depths sampled at an interval ("time_ns node port prio bytes", prio 0:
 * an IP switch port has one queue).
 */
#ifndef FABEMU_IWARP_RECORDERS_H
#define FABEMU_IWARP_RECORDERS_H

#include "ns3/iwarp-fabric-helper.h"
#include "ns3/simulator.h"

#include <ostream>
#include <vector>

namespace ns3
{

class IwarpQueueSampler
{
  public:
    /// The samples run in \p context; Simulator::NO_CONTEXT (the default): the caller's.
    IwarpQueueSampler(const IwarpFabricHelper& fabric, std::ostream& out, Time interval,
                      uint32_t context = Simulator::NO_CONTEXT);
    /// The largest sample seen, bytes.
    uint64_t Peak() const { return m_peak; }

  private:
    void Sample();
    const IwarpFabricHelper& m_fabric;
    std::ostream& m_out;
    Time m_interval;
    std::vector<bool> m_wasBusy;
    uint64_t m_peak{0};
};

} // namespace ns3

#endif
