/*
 * An ns-3 event scheduler whose order does not depend on how the simulation is split
 * among processes. ns-3 breaks a tie between events of one time stamp by the order in
 * which they were scheduled (their uid). A partitioned run on ns-3's distributed
 * simulator schedules a frame from another rank when the message arrives, not when
 * the frame was sent, so that order, and with it every result a tie touches (two frames
 * meeting in a switch queue), would change with the number of ranks.
 *
 * This scheduler breaks ties by what an event acts on and who made it, when:
 * (time stamp, context, time made, maker, uid). Events of one context made by that
 * context keep ns-3's order; a frame's arrival, scheduled by a channel through
 * ScheduleArrival, counts as made by the sending device when it was sent, on every rank.
 * Partitioned runs (and their one-rank reference) use it: SchedulerType
 * "ns3::DeterministicScheduler". It stores events in a std::map, as ns-3's MapScheduler.
 */
#ifndef FABEMU_DETERMINISTIC_SCHEDULER_H
#define FABEMU_DETERMINISTIC_SCHEDULER_H

#include "ns3/scheduler.h"
#include "ns3/simulator-impl-cache.h"
#include "ns3/simulator.h"

#include <cstdint>
#include <map>
#include <tuple>
#include <type_traits>

namespace ns3
{

class DeterministicScheduler : public Scheduler
{
  public:
    static TypeId GetTypeId();
    DeterministicScheduler();
    ~DeterministicScheduler() override;

    /**
     * \brief Schedules \p receive(args...) for node \p node after \p delay, as a frame's
     * arrival sent at \p sentAt by device \p ifIndex of node \p sender. Under this
     * scheduler, ties with it are broken by those, not by when it was scheduled; under
     * any other it is Simulator::ScheduleWithContext.
     */
    template <typename FUNC, typename... Ts>
    static void ScheduleArrival(Time sentAt, uint32_t sender, uint32_t ifIndex, uint32_t node,
                                Time delay, FUNC receive, Ts&&... args)
    {
        s_maker =
            Maker{sentAt.GetTimeStep(), (uint64_t(sender) << 32) | (uint64_t(ifIndex) + 1), true};
        if constexpr (sizeof...(Ts) == 0 && std::is_convertible_v<FUNC, EventImpl*>)
        {
            SimulatorImplCache::ScheduleWithContext(node, delay, receive); // a made event
        }
        else
        {
            Simulator::ScheduleWithContext(node, delay, receive, std::forward<Ts>(args)...);
        }
        s_maker.set = false;
    }

    void Insert(const Event& ev) override;
    bool IsEmpty() const override;
    Event PeekNext() const override;
    Event RemoveNext() override;
    void Remove(const Event& ev) override;

  private:
    /// Who made the next event inserted (ScheduleArrival); else the running context.
    struct Maker
    {
        int64_t madeAt{0};
        uint64_t maker{0};
        bool set{false};
    };
    static thread_local Maker s_maker;

    /// (time stamp, context, time made, maker, uid).
    using Key = std::tuple<uint64_t, uint32_t, int64_t, uint64_t, uint32_t>;
    std::map<Key, Event> m_events;
};

} // namespace ns3

#endif
