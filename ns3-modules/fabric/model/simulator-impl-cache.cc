#include "ns3/simulator-impl-cache.h"

#include "ns3/simulator.h"

namespace ns3
{

SimulatorImpl* SimulatorImplCache::s_impl = nullptr;

SimulatorImpl*
SimulatorImplCache::Lookup()
{
    // The simulator holds its implementation until Destroy, which runs Forget first.
    s_impl = PeekPointer(Simulator::GetImplementation());
    Simulator::ScheduleDestroy(&SimulatorImplCache::Forget);
    return s_impl;
}

void
SimulatorImplCache::Forget()
{
    s_impl = nullptr;
}

} // namespace ns3
