#include "emulator/edge/realtime-simulator.h"

#include "ns3/abort.h"
#include "ns3/assert.h"
#include "ns3/boolean.h"
#include "ns3/log.h"
#include "ns3/map-scheduler.h"
#include "ns3/pointer.h"
#include "ns3/simulator.h"

#include <sys/eventfd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <poll.h>
#include <unistd.h>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("FabemuRealtimeSimulatorImpl");

namespace
{
/// The longest a wait lasts, however far the next event: the idle hooks run at
/// least this often (100 ms, as AddIdleHook promises).
constexpr int64_t kLongestWaitNs = 100'000'000;

/// The simulator this thread is running now (its Run), if any.
thread_local const FabemuRealtimeSimulatorImpl* t_running = nullptr;
} // namespace

size_t
LatenessRecord::Index(int64_t ns)
{
    if (ns < 16)
    {
        return static_cast<size_t>(std::max<int64_t>(ns, 0));
    }
    const int exponent = 63 - __builtin_clzll(static_cast<uint64_t>(ns)); // >= 4
    const auto mantissa = static_cast<size_t>((ns >> (exponent - 4)) & 15);
    return std::min(static_cast<size_t>(exponent - 3) * 16 + mantissa, kBuckets - 1);
}

int64_t
LatenessRecord::UpperBound(size_t index)
{
    if (index < 16)
    {
        return static_cast<int64_t>(index);
    }
    const size_t exponent = index / 16 + 3;
    const size_t mantissa = index % 16;
    return static_cast<int64_t>(((16 + mantissa + 1) << (exponent - 4)) - 1);
}

void
LatenessRecord::Add(int64_t ns)
{
    ns = std::max<int64_t>(ns, 0);
    ++m_buckets[Index(ns)];
    ++m_count;
    m_maxNs = std::max(m_maxNs, ns);
    m_lastNs = ns;
}

int64_t
LatenessRecord::QuantileNs(double q) const
{
    if (m_count == 0)
    {
        return 0;
    }
    const auto rank = static_cast<uint64_t>(std::ceil(q * static_cast<double>(m_count)));
    uint64_t seen = 0;
    for (size_t i = 0; i < kBuckets; ++i)
    {
        seen += m_buckets[i];
        if (seen >= std::max<uint64_t>(rank, 1))
        {
            return std::min(UpperBound(i), m_maxNs);
        }
    }
    return m_maxNs;
}

std::vector<std::pair<int64_t, uint64_t>>
LatenessRecord::Buckets() const
{
    std::vector<std::pair<int64_t, uint64_t>> out;
    for (size_t i = 0; i < kBuckets; ++i)
    {
        if (m_buckets[i] > 0)
        {
            out.emplace_back(std::min(UpperBound(i), m_maxNs), m_buckets[i]);
        }
    }
    return out;
}

NS_OBJECT_ENSURE_REGISTERED(FabemuRealtimeSimulatorImpl);

TypeId
FabemuRealtimeSimulatorImpl::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::FabemuRealtimeSimulatorImpl")
            .SetParent<SimulatorImpl>()
            .SetGroupName("Fabemu")
            .AddConstructor<FabemuRealtimeSimulatorImpl>()
            .AddAttribute("SpinThreshold",
                          "Waits for an event shorter than this are busy waits; longer ones "
                          "sleep until this long before the event",
                          TimeValue(MicroSeconds(20)),
                          MakeTimeAccessor(&FabemuRealtimeSimulatorImpl::m_spinThreshold),
                          MakeTimeChecker(Time(0)))
            .AddAttribute("MaxBacklog",
                          "While the simulation is more than this behind the wall clock, the "
                          "watched descriptors are not read: frames wait in the kernel (which "
                          "drops, and counts, what does not fit) instead of piling up as events, "
                          "so an overload bounds the lag and the memory instead of growing both",
                          TimeValue(MilliSeconds(50)),
                          MakeTimeAccessor(&FabemuRealtimeSimulatorImpl::m_maxBacklog),
                          MakeTimeChecker(Time(0)))
            .AddAttribute("ArrivalStamps",
                          "A frame read from a watched descriptor enters the model at the "
                          "moment the kernel received it (its receive stamp), after the "
                          "events due before that moment; off: at the moment it is read",
                          BooleanValue(true),
                          MakeBooleanAccessor(&FabemuRealtimeSimulatorImpl::m_arrivalStamps),
                          MakeBooleanChecker());
    return tid;
}

FabemuRealtimeSimulatorImpl::FabemuRealtimeSimulatorImpl()
    : m_uid(EventId::UID::VALID),
      m_currentContext(Simulator::NO_CONTEXT)
{
    ObjectFactory factory;
    factory.SetTypeId(MapScheduler::GetTypeId());
    SetScheduler(factory);
    m_observers = factory.Create<Scheduler>();
    m_wakeFd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    NS_ABORT_MSG_IF(m_wakeFd < 0, "FabemuRealtimeSimulatorImpl: eventfd failed");
}

FabemuRealtimeSimulatorImpl::~FabemuRealtimeSimulatorImpl()
{
    close(m_wakeFd);
}

void
FabemuRealtimeSimulatorImpl::Watch(int fd, std::function<void()> onReadable)
{
    Unwatch(fd);
    m_watched.push_back({fd, std::make_shared<std::function<void()>>(std::move(onReadable))});
}

void
FabemuRealtimeSimulatorImpl::Unwatch(int fd)
{
    m_watched.erase(std::remove_if(m_watched.begin(), m_watched.end(),
                                   [fd](const Watched& w) { return w.fd == fd; }),
                    m_watched.end());
}

uint64_t
FabemuRealtimeSimulatorImpl::AddIdleHook(std::function<void()> hook)
{
    m_idleHooks.emplace_back(m_nextHook, std::move(hook));
    return m_nextHook++;
}

void
FabemuRealtimeSimulatorImpl::RemoveIdleHook(uint64_t handle)
{
    m_idleHooks.erase(std::remove_if(m_idleHooks.begin(), m_idleHooks.end(),
                                     [handle](const auto& h) { return h.first == handle; }),
                      m_idleHooks.end());
}

void
FabemuRealtimeSimulatorImpl::RunIdleHooks()
{
    for (size_t i = 0; i < m_idleHooks.size(); ++i)
    {
        m_idleHooks[i].second();
    }
}

void
FabemuRealtimeSimulatorImpl::PollWatched(int64_t ns)
{
    m_eventsSinceLook = 0;
    RunIdleHooks();
    // Called at every wait: the list's storage is reused, not allocated each time.
    std::vector<pollfd>& fds = m_pollFds;
    fds.clear();
    fds.push_back({m_wakeFd, POLLIN, 0});
    for (const auto& w : m_watched)
    {
        fds.push_back({w.fd, POLLIN, 0});
    }
    timespec timeout{static_cast<time_t>(ns / 1'000'000'000),
                     static_cast<long>(ns % 1'000'000'000)};
    if (ppoll(fds.data(), fds.size(), &timeout, nullptr) <= 0)
    {
        return;
    }
    if (fds[0].revents)
    {
        uint64_t n;
        (void)!read(m_wakeFd, &n, sizeof(n));
    }
    bool any = false;
    for (size_t i = 1; i < fds.size(); ++i)
    {
        any = any || fds[i].revents;
    }
    if (!any)
    {
        return;
    }
    // Each frame a handler reads brings simulated time to its own arrival
    // (RunInContext), after what was due before it.
    for (size_t i = 1; i < fds.size(); ++i)
    {
        // A handler, or an event its frames run, may Watch or Unwatch: call only what is
        // still watched under that descriptor, and keep it while it runs.
        if (fds[i].revents && i - 1 < m_watched.size() && m_watched[i - 1].fd == fds[i].fd)
        {
            const auto handler = m_watched[i - 1].onReadable;
            (*handler)();
        }
    }
}

void
FabemuRealtimeSimulatorImpl::Arrive(std::chrono::steady_clock::time_point arrived)
{
    const auto wall = std::chrono::steady_clock::now();
    const uint64_t nowTs = TsOf(wall);
    const uint64_t ts = TsOf(std::clamp(arrived, m_origin, wall));
    if (ts <= m_currentTs)
    {
        return; // before what has run already: the frame arrives at the present
    }
    // What was due before the frame arrived sees the model without it, as the events
    // before an event of its time would. (If the simulation is behind, that is the
    // backlog up to the frame's moment, which the loop would run first anyway.)
    const uint32_t context = m_currentContext;
    RunUpTo(ts, nowTs);
    m_currentContext = context;
    m_currentTs.store(ts, std::memory_order_release); // a plain store on x86, not a locked one
}

void
FabemuRealtimeSimulatorImpl::RunUpTo(uint64_t ts, uint64_t nowTs)
{
    for (;;)
    {
        RunDueObservers(ts);
        if (m_pendingEvents == 0)
        {
            return;
        }
        const uint64_t nextTs = m_events->PeekNext().key.m_ts;
        if (nextTs > ts)
        {
            return;
        }
        InvokeNextEvent(nextTs, nowTs);
    }
}

void
FabemuRealtimeSimulatorImpl::InvokeNextEvent(uint64_t nextTs, uint64_t nowTs)
{
    const auto lateSteps = static_cast<int64_t>(nowTs - nextTs);
    m_lateness.Add(m_stepsPerNs > 0 ? lateSteps / m_stepsPerNs
                                    : TimeStep(lateSteps).GetNanoSeconds());
    --m_pendingEvents;
    Invoke(m_events->RemoveNext());
}

bool
FabemuRealtimeSimulatorImpl::ObserverDue(uint64_t nowTs) const
{
    if (m_pendingObservers == 0)
    {
        return false; // asked before every event: no call into the scheduler for it
    }
    const Scheduler::EventKey& key = m_observers->PeekNext().key;
    return key.m_ts <= nowTs && (m_pendingEvents == 0 || key < m_events->PeekNext().key);
}

void
FabemuRealtimeSimulatorImpl::RunDueObservers(uint64_t nowTs)
{
    while (ObserverDue(nowTs))
    {
        InvokeNextObserver();
    }
}

void
FabemuRealtimeSimulatorImpl::InvokeNextObserver()
{
    --m_pendingObservers;
    Invoke(m_observers->RemoveNext());
}

void
FabemuRealtimeSimulatorImpl::Invoke(const Scheduler::Event& next)
{
    ++m_eventCount;
    NS_ASSERT(next.key.m_ts >= m_currentTs);
    m_currentTs.store(next.key.m_ts, std::memory_order_release);
    m_currentContext = next.key.m_context;
    m_currentUid.store(next.key.m_uid, std::memory_order_relaxed);
    next.impl->Invoke();
    next.impl->Unref();
}

void
FabemuRealtimeSimulatorImpl::DoDispose()
{
    for (Ptr<Scheduler>* queue : {&m_events, &m_observers})
    {
        while (*queue && !(*queue)->IsEmpty())
        {
            (*queue)->RemoveNext().impl->Unref();
        }
        *queue = nullptr;
    }
    m_pendingObservers = 0;
    m_pendingEvents = 0;
    for (const Inboxed& e : m_inbox)
    {
        e.event->Unref();
    }
    m_inbox.clear();
    SimulatorImpl::DoDispose();
}

void
FabemuRealtimeSimulatorImpl::Destroy()
{
    while (!m_destroyEvents.empty())
    {
        Ptr<EventImpl> ev = m_destroyEvents.front().PeekEventImpl();
        m_destroyEvents.pop_front();
        if (!ev->IsCancelled())
        {
            ev->Invoke();
        }
    }
}

void
FabemuRealtimeSimulatorImpl::SetScheduler(ObjectFactory schedulerFactory)
{
    Ptr<Scheduler> scheduler = schedulerFactory.Create<Scheduler>();
    std::lock_guard<std::mutex> lock(m_mutex);
    if (m_events)
    {
        while (!m_events->IsEmpty())
        {
            scheduler->Insert(m_events->RemoveNext());
        }
    }
    m_events = scheduler;
}

uint64_t
FabemuRealtimeSimulatorImpl::TsOf(std::chrono::steady_clock::time_point wall) const
{
    const auto elapsed = std::chrono::duration_cast<std::chrono::nanoseconds>(wall - m_origin);
    if (m_stepsPerNs > 0)
    {
        // Asked for every frame: a multiplication, not a Time made and converted.
        return m_originTs + static_cast<uint64_t>(elapsed.count() * m_stepsPerNs);
    }
    return m_originTs + NanoSeconds(elapsed.count()).GetTimeStep();
}

uint64_t
FabemuRealtimeSimulatorImpl::RealtimeTs() const
{
    return TsOf(std::chrono::steady_clock::now());
}

Time
FabemuRealtimeSimulatorImpl::SimulatedNow() const
{
    if (!m_running)
    {
        return TimeStep(m_currentTs);
    }
    const uint64_t wall = RealtimeTs();
    const uint64_t next = OnSimulationThread()
                              ? (m_pendingEvents == 0 ? UINT64_MAX : m_events->PeekNext().key.m_ts)
                              : m_nextTs.load(std::memory_order_relaxed);
    if (next < wall)
    {
        return TimeStep(m_currentTs); // behind: where the catching up has got to
    }
    return TimeStep(std::max<uint64_t>(wall, m_currentTs));
}

bool
FabemuRealtimeSimulatorImpl::OnSimulationThread() const
{
    return t_running == this;
}

std::unique_lock<std::mutex>
FabemuRealtimeSimulatorImpl::OwnEvents(const char* what) const
{
    if (OnSimulationThread())
    {
        return {};
    }
    std::unique_lock<std::mutex> lock(m_mutex);
    NS_ABORT_MSG_IF(m_running, "FabemuRealtimeSimulatorImpl::"
                                   << what
                                   << " from a thread other than the simulation's while it "
                                      "runs; from another thread, use ScheduleWithContext");
    return lock;
}

void
FabemuRealtimeSimulatorImpl::MoveInbox()
{
    for (const Inboxed& e : m_inbox)
    {
        // Never before an event the simulation has run since it was scheduled.
        Insert(std::max<uint64_t>(e.ts, m_currentTs), e.context, e.event);
    }
    m_inbox.clear();
    m_inboxed.store(false, std::memory_order_relaxed);
}

Time
FabemuRealtimeSimulatorImpl::RealtimeNow() const
{
    return m_running ? TimeStep(RealtimeTs()) : Now();
}

uint32_t
FabemuRealtimeSimulatorImpl::Insert(uint64_t ts, uint32_t context, EventImpl* event)
{
    Scheduler::Event ev;
    ev.impl = event;
    ev.key.m_ts = ts;
    ev.key.m_context = context;
    ev.key.m_uid = m_uid++;
    if (context == kObserverContext)
    {
        ++m_pendingObservers;
        m_observers->Insert(ev);
    }
    else
    {
        ++m_pendingEvents;
        m_events->Insert(ev);
    }
    return ev.key.m_uid;
}

EventId
FabemuRealtimeSimulatorImpl::Schedule(const Time& delay, EventImpl* event)
{
    NS_ASSERT_MSG(delay.IsPositive(), "FabemuRealtimeSimulatorImpl::Schedule: negative delay");
    const auto own = OwnEvents("Schedule");
    const uint64_t ts = m_currentTs + delay.GetTimeStep();
    return EventId(event, ts, m_currentContext, Insert(ts, m_currentContext, event));
}

void
FabemuRealtimeSimulatorImpl::ScheduleWithContext(uint32_t context, const Time& delay,
                                                 EventImpl* event)
{
    NS_ASSERT_MSG(delay.IsPositive(),
                  "FabemuRealtimeSimulatorImpl::ScheduleWithContext: negative delay");
    if (OnSimulationThread())
    {
        Insert(m_currentTs + delay.GetTimeStep(), context, event); // no lock: its own set
        return;
    }
    {
        std::lock_guard<std::mutex> lock(m_mutex);
        if (m_running)
        {
            // From outside the simulation: the delay counts from the wall clock's now,
            // and never before an event the simulation has already run. Into the inbox,
            // which the simulation thread empties before its next event.
            m_inbox.push_back({std::max<uint64_t>(RealtimeTs(), m_currentTs) + delay.GetTimeStep(),
                               context, event});
            m_inboxed.store(true, std::memory_order_release);
        }
        else
        {
            Insert(m_currentTs + delay.GetTimeStep(), context, event);
        }
        m_inserted = true;
    }
    const uint64_t one = 1;
    (void)!write(m_wakeFd, &one, sizeof(one));
}

EventId
FabemuRealtimeSimulatorImpl::ScheduleNow(EventImpl* event)
{
    return Schedule(Time(0), event);
}

EventId
FabemuRealtimeSimulatorImpl::ScheduleDestroy(EventImpl* event)
{
    // Under the lock from any thread; the uids are the simulation thread's, so none is
    // used up here (a destroy event's uid is DESTROY).
    std::lock_guard<std::mutex> lock(m_mutex);
    EventId id(Ptr<EventImpl>(event, false), m_currentTs, 0xffffffff, EventId::UID::DESTROY);
    m_destroyEvents.push_back(id);
    return id;
}

void
FabemuRealtimeSimulatorImpl::Remove(const EventId& id)
{
    if (id.GetUid() == EventId::UID::DESTROY)
    {
        for (auto i = m_destroyEvents.begin(); i != m_destroyEvents.end(); ++i)
        {
            if (*i == id)
            {
                m_destroyEvents.erase(i);
                break;
            }
        }
        return;
    }
    if (IsExpired(id))
    {
        return;
    }
    const auto own = OwnEvents("Remove");
    Scheduler::Event event;
    event.impl = id.PeekEventImpl();
    event.key.m_ts = id.GetTs();
    event.key.m_context = id.GetContext();
    event.key.m_uid = id.GetUid();
    if (event.key.m_context == kObserverContext)
    {
        --m_pendingObservers;
        m_observers->Remove(event);
    }
    else
    {
        --m_pendingEvents;
        m_events->Remove(event);
    }
    event.impl->Cancel();
    event.impl->Unref();
}

void
FabemuRealtimeSimulatorImpl::Cancel(const EventId& id)
{
    if (!IsExpired(id))
    {
        id.PeekEventImpl()->Cancel();
    }
}

bool
FabemuRealtimeSimulatorImpl::IsExpired(const EventId& id) const
{
    if (id.GetUid() == EventId::UID::DESTROY)
    {
        if (id.PeekEventImpl() == nullptr || id.PeekEventImpl()->IsCancelled())
        {
            return true;
        }
        for (const auto& d : m_destroyEvents)
        {
            if (d == id)
            {
                return false;
            }
        }
        return true;
    }
    // The time and uid are atomics: no lock, from any thread.
    const uint64_t current = m_currentTs.load(std::memory_order_acquire);
    return id.PeekEventImpl() == nullptr || id.GetTs() < current ||
           (id.GetTs() == current && id.GetUid() <= m_currentUid.load(std::memory_order_relaxed)) ||
           id.PeekEventImpl()->IsCancelled();
}

void
FabemuRealtimeSimulatorImpl::Run()
{
    {
        std::lock_guard<std::mutex> lock(m_mutex);
        m_stop = false;
        m_stopTs = 0;
        m_origin = std::chrono::steady_clock::now();
        m_originTs = m_currentTs;
        m_stepsPerNs = NanoSeconds(1).GetTimeStep(); // 0 with a resolution coarser than 1 ns
        m_running = true;
    }
    t_running = this;
    const uint64_t spinTs = m_spinThreshold.GetTimeStep();
    const uint64_t backlogTs = m_maxBacklog.GetTimeStep();
    while (!m_stop)
    {
        if (m_inboxed.load(std::memory_order_acquire))
        {
            std::lock_guard<std::mutex> lock(m_mutex);
            MoveInbox();
        }
        const uint64_t nowTs = RealtimeTs();
        if (ObserverDue(nowTs))
        {
            // Never a reason to wait, but run in its turn; its lateness is not the lag.
            InvokeNextObserver();
            continue;
        }
        if (m_pendingEvents == 0)
        {
            m_nextTs.store(UINT64_MAX, std::memory_order_relaxed);
            m_inserted = false;
            PollWatched(kLongestWaitNs);
            continue;
        }
        const uint64_t nextTs = m_events->PeekNext().key.m_ts;
        m_nextTs.store(nextTs, std::memory_order_relaxed); // for SimulatedNow elsewhere
        if (nextTs > nowTs + spinTs)
        {
            // Far ahead: wait for the taps, another thread, or SpinThreshold before it.
            ++m_sleeps;
            m_inserted = false;
            PollWatched(std::min<int64_t>(TimeStep(nextTs - nowTs - spinTs).GetNanoSeconds(),
                                          kLongestWaitNs));
            continue;
        }
        if (nextTs > nowTs)
        {
            ++m_spins;
            m_inserted = false;
            PollWatched(0);
            while (RealtimeTs() < nextTs && !m_inserted && !m_stop)
            {
            }
            continue; // look again: an inserted event may come first
        }
        if (++m_eventsSinceLook > kEventsPerLook && !m_watched.empty())
        {
            // A long run of due events with no wait between them: look in between.
            ++m_looks;
            m_eventsSinceLook = 0;
            if (nowTs - nextTs > backlogTs)
            {
                // Far behind: new frames would only lengthen the backlog. Leave them
                // in the kernel until it is worked off, but still write what is done.
                ++m_deferredReads;
                RunIdleHooks();
            }
            else
            {
                // Busy (or a little behind): still take the taps' frames now and then.
                PollWatched(0);
            }
            continue;
        }
        // Due: nextTs <= nowTs, read at the top of this turn.
        InvokeNextEvent(nextTs, nowTs);
    }
    uint64_t stopTs = 0;
    {
        std::lock_guard<std::mutex> lock(m_mutex);
        stopTs = m_stopTs;
    }
    if (stopTs > 0)
    {
        // Stopped from another thread, perhaps while asleep: first what the observers
        // were due to see by then.
        RunDueObservers(stopTs);
    }
    std::lock_guard<std::mutex> lock(m_mutex);
    m_running = false;
    t_running = nullptr;
    MoveInbox(); // what other threads scheduled at the end waits for the next Run
    m_nextTs.store(UINT64_MAX, std::memory_order_relaxed);
}

bool
FabemuRealtimeSimulatorImpl::IsFinished() const
{
    const auto own = OwnEvents("IsFinished");
    return m_stop || (m_pendingEvents == 0 && m_pendingObservers == 0);
}

void
FabemuRealtimeSimulatorImpl::Stop()
{
    {
        std::lock_guard<std::mutex> lock(m_mutex);
        if (m_running && !OnSimulationThread())
        {
            m_stopTs = RealtimeTs();
        }
        m_stop = true;
    }
    const uint64_t one = 1;
    (void)!write(m_wakeFd, &one, sizeof(one));
}

void
FabemuRealtimeSimulatorImpl::Stop(const Time& delay)
{
    Simulator::Schedule(delay, &Simulator::Stop);
}

Time
FabemuRealtimeSimulatorImpl::Now() const
{
    return TimeStep(m_currentTs);
}

Time
FabemuRealtimeSimulatorImpl::GetDelayLeft(const EventId& id) const
{
    return IsExpired(id) ? TimeStep(0) : TimeStep(id.GetTs() - m_currentTs);
}

Time
FabemuRealtimeSimulatorImpl::GetMaximumSimulationTime() const
{
    return TimeStep(0x7fffffffffffffffLL);
}

uint32_t
FabemuRealtimeSimulatorImpl::GetSystemId() const
{
    return 0;
}

uint32_t
FabemuRealtimeSimulatorImpl::GetContext() const
{
    return m_currentContext;
}

uint64_t
FabemuRealtimeSimulatorImpl::GetEventCount() const
{
    return m_eventCount;
}

} // namespace ns3
