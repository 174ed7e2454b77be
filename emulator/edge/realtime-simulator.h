/*
 * The real-time simulator the emulator runs on: events at their wall-clock
 * moment, like ns-3's RealtimeSimulatorImpl (best effort: a late event runs at
 * once, the lag is measured by the emulator), with one difference that decides
 * the emulator's latency. ns-3's waits for every event by sleeping on a
 * condition variable; a frame crossing the fabric meets several events a
 * microsecond or less apart, and on a virtual machine each such sleep and
 * wake-up costs 10 to 20 us (measured: 120 us added to a frame's transit by
 * one switch hop). Here a wait shorter than SpinThreshold is a busy wait,
 * longer ones sleep until SpinThreshold before the event, and any event
 * scheduled from another thread cuts a wait short.
 *
 * It also reads the taps itself: a file descriptor registered with Watch is
 * polled while the simulation waits (and every few events while it is busy),
 * and its handler runs on the simulation thread. A frame then costs no thread
 * hand-over at all: tap, model and tap again on one thread, as a relay would.
 * Each frame enters the model at the moment the kernel received it (its stamp),
 * not when this thread woke to read it: the wake-up overlaps the frame's modelled
 * path instead of adding to it, and a batch read at once keeps its spacing.
 * More than MaxBacklog behind the wall clock it stops reading them until it has
 * caught up: an overload then costs frames dropped (and counted) by the kernel,
 * not a backlog of events growing in memory and lag without bound.
 *
 * While it runs, the event set is the simulation thread's alone: its events and
 * the frames it reads schedule without a lock (a frame's four events took twelve
 * lock and unlock pairs before). Another thread's ScheduleWithContext goes through a
 * small locked inbox that the simulation thread empties before its next event (Stop
 * from another thread sets a flag under the same lock); other calls that read or change the event
 * set (Schedule, Remove, IsFinished) are for the simulation thread, or for any thread while it is
 * not running, and end the program with a message otherwise.
 *
 * Select it before any simulator exists:
 *   GlobalValue::Bind("SimulatorImplementationType",
 *                     StringValue("ns3::FabemuRealtimeSimulatorImpl"));
 */
#ifndef FABEMU_REALTIME_SIMULATOR_H
#define FABEMU_REALTIME_SIMULATOR_H

#include "ns3/assert.h"
#include "ns3/event-impl.h"
#include "ns3/nstime.h"
#include "ns3/scheduler.h"
#include "ns3/simulator-impl.h"

#include <atomic>
#include <chrono>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <poll.h>
#include <utility>
#include <vector>

namespace ns3
{

/**
 * How late events started: a histogram of lateness in nanoseconds with buckets
 * 1/16 of a power of two wide (exact below 16 ns), so a run of any length keeps
 * a fixed 8 KB and a quantile is known to within 6%.
 */
class LatenessRecord
{
  public:
    void Add(int64_t ns);
    uint64_t Count() const { return m_count; }
    int64_t MaxNs() const { return m_maxNs; }
    int64_t LastNs() const { return m_lastNs; }
    /// The upper bound of the bucket holding the event at quantile \p q (0 < q <= 1);
    /// 0 when nothing was recorded.
    int64_t QuantileNs(double q) const;
    /// Each non-empty bucket as (its upper bound in ns, events), ascending.
    std::vector<std::pair<int64_t, uint64_t>> Buckets() const;

  private:
    static constexpr size_t kBuckets = 60 * 16;
    static size_t Index(int64_t ns);
    static int64_t UpperBound(size_t index);
    std::vector<uint64_t> m_buckets = std::vector<uint64_t>(kBuckets);
    uint64_t m_count{0};
    int64_t m_maxNs{0};
    int64_t m_lastNs{0};
};

class FabemuRealtimeSimulatorImpl : public SimulatorImpl
{
  public:
    static TypeId GetTypeId();
    /**
     * The context of events that only observe the model (the queue samplers'):
     * the thread never wakes for one. It runs at its own time, in order, as soon as
     * the thread is awake for anything else (the next event after it, frames from
     * the taps, Stop), so it sees the model as it was at that time: nothing ran in
     * between. Such an event runs late on purpose, so its lateness is not the lag.
     * What it schedules in its own context stays an observer's. (An idle thread
     * woken only to sample costs a wake-up, which on a VM is tens of us of CPU.)
     */
    static constexpr uint32_t kObserverContext = 0xfffffffe;
    FabemuRealtimeSimulatorImpl();
    ~FabemuRealtimeSimulatorImpl() override;

    void Destroy() override;
    bool IsFinished() const override;
    void Stop() override;
    void Stop(const Time& delay) override;
    EventId Schedule(const Time& delay, EventImpl* event) override;
    /// Thread-safe: from another thread the delay counts from the wall clock's now.
    void ScheduleWithContext(uint32_t context, const Time& delay, EventImpl* event) override;
    EventId ScheduleNow(EventImpl* event) override;
    EventId ScheduleDestroy(EventImpl* event) override;
    void Remove(const EventId& id) override;
    void Cancel(const EventId& id) override;
    bool IsExpired(const EventId& id) const override;
    void Run() override;
    Time Now() const override;
    Time GetDelayLeft(const EventId& id) const override;
    Time GetMaximumSimulationTime() const override;
    void SetScheduler(ObjectFactory schedulerFactory) override;
    uint32_t GetSystemId() const override;
    uint32_t GetContext() const override;
    uint64_t GetEventCount() const override;

    /// The wall clock's now on the simulation's time line (Now() while not running).
    Time RealtimeNow() const;
    /// Simulated time as a real-time run has it: the wall clock's now while no event
    /// is overdue (Now() stands still between events), else the time of the events
    /// being caught up with. From any thread; from another than the simulation's, as
    /// of the simulation thread's last look at its next event.
    Time SimulatedNow() const;
    /// Waits spun and waits slept, so far.
    uint64_t GetSpins() const { return m_spins; }
    uint64_t GetSleeps() const { return m_sleeps; }
    /// Looks at the watched descriptors between events, without a wait, so far: one
    /// after every kEventsPerLook events in a row that no wait (which looks too) broke.
    uint64_t GetLooks() const { return m_looks; }
    static constexpr unsigned kEventsPerLook = 64;
    /// How far behind its time each event started: the lag of simulated time behind
    /// the wall clock, taken at every moment simulated time shows (read on the
    /// simulation thread, or after Run). No sampling event is needed for it, so an
    /// idle simulation sleeps until its next real event.
    const LatenessRecord& GetLateness() const { return m_lateness; }
    /// Times the watched descriptors were left unread for being more than
    /// MaxBacklog behind the wall clock, so far (read on the simulation thread, or after Run).
    uint64_t GetDeferredReads() const { return m_deferredReads; }
    Time GetMaxBacklog() const { return m_maxBacklog; }

    /**
     * \brief Calls \p onReadable on the simulation thread whenever \p fd is
     * readable; it must read what is there (non-blocking), and put what it read
     * into the model with RunInContext. Call before Run or from the simulation thread.
     */
    void Watch(int fd, std::function<void()> onReadable);
    void Unwatch(int fd);
    /**
     * \brief From a Watch callback: runs \p fn at once, as an event of node \p context
     * would (what it schedules is scheduled from that node), at the simulated time of
     * the wall clock's moment \p arrived: when the frame \p fn puts into the model
     * reached the host (its tap's receive stamp). A frame goes into the model this way,
     * without an event of its own.
     *
     * The events due before that moment run first, as they would before an event of
     * that time; a moment later than the wall clock's now counts as now, one earlier than
     * the events already run as the latest of them. So the frames of one read keep the
     * spacing they arrived with, and a frame's modelled path starts when it left its
     * endpoint, not when this thread woke to read it. With the attribute ArrivalStamps
     * off, \p arrived is not used: every frame arrives at the moment it is read.
     */
    template <typename F>
    void RunInContext(uint32_t context, std::chrono::steady_clock::time_point arrived, F&& fn)
    {
        NS_ASSERT_MSG(OnSimulationThread(),
                      "RunInContext: only from a Watch callback, on the simulation thread");
        Arrive(m_arrivalStamps ? arrived : std::chrono::steady_clock::time_point::max());
        struct Restore
        {
            uint32_t& current;
            uint32_t saved;
            ~Restore() { current = saved; }
        } restore{m_currentContext, m_currentContext};
        m_currentContext = context;
        fn();
    }
    /// The same at the moment of the call (a read with no receive stamp).
    template <typename F>
    void RunInContext(uint32_t context, F&& fn)
    {
        RunInContext(context, std::chrono::steady_clock::time_point::max(), std::forward<F>(fn));
    }
    /// Calls \p hook on the simulation thread whenever the events due now have
    /// run and it is about to wait (or, while busy, every few events), and at
    /// least every 100 ms: where work gathered during a burst (frames to write) is
    /// best done at once, and where periodic work that is not part of the model
    /// (publishing counters) goes without an event of its own.
    /// Returns a handle for RemoveIdleHook.
    uint64_t AddIdleHook(std::function<void()> hook);
    void RemoveIdleHook(uint64_t handle);

  private:
    void DoDispose() override;
    /// Inserts into the event set (the simulation thread's, or under the lock while not
    /// running); \p ts absolute. Returns the event's uid (ScheduleWithContext makes no
    /// EventId of it: nobody would keep it).
    uint32_t Insert(uint64_t ts, uint32_t context, EventImpl* event);
    /// Whether the caller is the thread running this simulator now.
    bool OnSimulationThread() const;
    /// Nothing when called from the simulation thread; else the lock, held, with the
    /// program ended (naming \p what) if the simulation is running: what touches the
    /// event set from another thread must wait until it stops.
    std::unique_lock<std::mutex> OwnEvents(const char* what) const;
    /// Moves the events other threads scheduled into the event set; under the lock.
    void MoveInbox();
    uint64_t RealtimeTs() const;
    /// The simulation's time step of the wall clock's \p wall (not before Run's start).
    uint64_t TsOf(std::chrono::steady_clock::time_point wall) const;
    /// Waits up to \p ns (0: only looks) for a watched descriptor or a wake-up;
    /// runs the handlers of those readable. Called without the lock.
    void PollWatched(int64_t ns);
    void RunIdleHooks();
    /// Whether an observer's event comes before the model's next and is due at the
    /// wall clock's \p nowTs. On the simulation thread.
    bool ObserverDue(uint64_t nowTs) const;
    /// Runs the observers' events that ObserverDue, in order.
    void RunDueObservers(uint64_t nowTs);
    /// Runs the observers' next event (ObserverDue said it is due).
    void InvokeNextObserver();
    /// Brings simulated time to the wall clock's \p arrived (at most now, at least the
    /// present), the events due before it run first (RunInContext).
    void Arrive(std::chrono::steady_clock::time_point arrived);
    /// Runs the events and observers' events up to \p ts, in order, counting their
    /// lateness against the wall clock's \p nowTs.
    void RunUpTo(uint64_t ts, uint64_t nowTs);
    /// Records how late the next model event, due at \p nextTs (the caller has just read
    /// it), starts at the wall clock's \p nowTs, then runs it (Invoke).
    void InvokeNextEvent(uint64_t nextTs, uint64_t nowTs);
    /// Makes \p next the current event and runs it.
    void Invoke(const Scheduler::Event& next);

    Ptr<Scheduler> m_events;
    Ptr<Scheduler> m_observers; ///< events in kObserverContext
    /// The events m_events and m_observers hold: the loop asks these, not the schedulers
    /// (a virtual call with a log check each), whether any is left.
    uint64_t m_pendingEvents{0};
    uint64_t m_pendingObservers{0};
    std::list<EventId> m_destroyEvents;
    /// Guards the inbox, and the event set while not running (Run's start and end).
    mutable std::mutex m_mutex;
    /// An event another thread scheduled while the simulation ran, its time computed.
    struct Inboxed
    {
        uint64_t ts;
        uint32_t context;
        EventImpl* event;
    };
    std::vector<Inboxed> m_inbox;       ///< under m_mutex
    std::atomic<bool> m_inboxed{false}; ///< the inbox holds events
    /// The next model event's time as the simulation thread last read it (SimulatedNow
    /// from other threads); UINT64_MAX: none.
    std::atomic<uint64_t> m_nextTs{UINT64_MAX};
    int m_wakeFd{-1}; ///< eventfd: another thread scheduled something, or Stop
    struct Watched
    {
        int fd;
        /// Shared, so that a handler whose frames run events (RunInContext) that watch or
        /// unwatch descriptors is not moved or destroyed while it runs.
        std::shared_ptr<std::function<void()>> onReadable;
    };
    std::vector<Watched> m_watched;
    std::vector<pollfd> m_pollFds; ///< PollWatched's, reused
    std::vector<std::pair<uint64_t, std::function<void()>>> m_idleHooks;
    uint64_t m_nextHook{1};
    std::atomic<bool> m_stop{false};
    /// The wall clock's time of a Stop from another thread; 0: none (under m_mutex).
    uint64_t m_stopTs{0};
    std::atomic<bool> m_inserted{false}; ///< an event came from another thread: look again
    std::atomic<bool> m_running{false};
    uint32_t m_uid;
    std::atomic<uint32_t> m_currentUid{0}; ///< stored and read relaxed: plain moves
    std::atomic<uint64_t> m_currentTs{0};
    uint32_t m_currentContext;
    uint64_t m_eventCount{0};
    std::chrono::steady_clock::time_point m_origin;
    uint64_t m_originTs{0};
    Time m_spinThreshold;
    uint64_t m_spins{0};
    uint64_t m_sleeps{0};
    uint64_t m_looks{0};
    unsigned m_eventsSinceLook{0}; ///< events run since the descriptors were last looked at
    Time m_maxBacklog;
    bool m_arrivalStamps{true}; ///< attribute ArrivalStamps
    int64_t m_stepsPerNs{1};    ///< time steps per nanosecond, set by Run (0: coarser than 1 ns)
    uint64_t m_deferredReads{0};
    LatenessRecord m_lateness;
};

} // namespace ns3

#endif
