/*
 * The running simulator's implementation, for the calls a packet-hop makes.
 */
#ifndef FABEMU_SIMULATOR_IMPL_CACHE_H
#define FABEMU_SIMULATOR_IMPL_CACHE_H

#include "ns3/event-impl.h"
#include "ns3/nstime.h"
#include "ns3/simulator-impl.h"

#include <cstdint>

namespace ns3
{

/**
 * \brief Simulator::Now(), GetContext() and ScheduleWithContext() for the models' hot
 * paths, straight to the running SimulatorImpl.
 *
 * Each Simulator:: call looks up the implementation and, in Debian's build of ns-3,
 * checks its log component (NS_LOG_FUNCTION): some 50 instructions and two calls before
 * the virtual call that does the work. A packet-hop makes four of them. These make the
 * same virtual calls on the same implementation, so what runs and in what order is
 * unchanged; only the lookup and the log check are gone (so NS_LOG for the "Simulator"
 * component no longer shows these calls).
 *
 * The implementation is looked up (Simulator::GetImplementation) on the first call and
 * kept until Simulator::Destroy, which runs the destroy event that forgets it: the next
 * run's implementation is looked up again. The first call must come when the
 * simulation's implementation is set, as for any Simulator:: call. It is kept for the
 * whole process, not per thread: call these from the simulation's own thread, as the
 * models' events run.
 */
class SimulatorImplCache
{
  public:
    /// The running implementation.
    static SimulatorImpl* Get() { return s_impl != nullptr ? s_impl : Lookup(); }

    /// Simulator::Now().
    static Time Now() { return Get()->Now(); }

    /// Simulator::GetContext().
    static uint32_t GetContext() { return Get()->GetContext(); }

    /// Simulator::ScheduleWithContext(context, delay, event): the simulator takes \p event.
    static void ScheduleWithContext(uint32_t context, const Time& delay, EventImpl* event)
    {
        Get()->ScheduleWithContext(context, delay, event);
    }

  private:
    /// Looks the implementation up and has Simulator::Destroy forget it.
    static SimulatorImpl* Lookup();
    /// Forgets the implementation (a destroy event).
    static void Forget();

    static SimulatorImpl* s_impl;
};

} // namespace ns3

#endif // FABEMU_SIMULATOR_IMPL_CACHE_H
