#include "ns3/deterministic-scheduler.h"

#include "ns3/assert.h"

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(DeterministicScheduler);

thread_local DeterministicScheduler::Maker DeterministicScheduler::s_maker;

TypeId
DeterministicScheduler::GetTypeId()
{
    static TypeId tid = TypeId("ns3::DeterministicScheduler")
                            .SetParent<Scheduler>()
                            .SetGroupName("Fabric")
                            .AddConstructor<DeterministicScheduler>();
    return tid;
}

DeterministicScheduler::DeterministicScheduler() = default;
DeterministicScheduler::~DeterministicScheduler() = default;

void
DeterministicScheduler::Insert(const Event& ev)
{
    int64_t madeAt = 0;
    uint64_t maker = 0;
    if (s_maker.set)
    {
        madeAt = s_maker.madeAt;
        maker = s_maker.maker;
        s_maker.set = false;
    }
    else
    {
        // Made by the event running now: its context, at this time. The low 32 bits
        // stay 0, below any device's (ScheduleArrival's are 1 and up).
        madeAt = Simulator::Now().GetTimeStep();
        maker = uint64_t(Simulator::GetContext()) << 32;
    }
    const bool inserted =
        m_events.emplace(Key{ev.key.m_ts, ev.key.m_context, madeAt, maker, ev.key.m_uid}, ev)
            .second;
    NS_ASSERT(inserted);
    (void)inserted;
}

bool
DeterministicScheduler::IsEmpty() const
{
    return m_events.empty();
}

Scheduler::Event
DeterministicScheduler::PeekNext() const
{
    NS_ASSERT(!m_events.empty());
    return m_events.begin()->second;
}

Scheduler::Event
DeterministicScheduler::RemoveNext()
{
    NS_ASSERT(!m_events.empty());
    const auto first = m_events.begin();
    const Event ev = first->second;
    m_events.erase(first);
    return ev;
}

void
DeterministicScheduler::Remove(const Event& ev)
{
    // Found by its time stamp, context and uid: rare (Simulator::Remove), so a scan of
    // that context's events of that time stamp is enough.
    const auto from = m_events.lower_bound(Key{ev.key.m_ts, ev.key.m_context, INT64_MIN, 0, 0});
    for (auto i = from; i != m_events.end() && std::get<0>(i->first) == ev.key.m_ts &&
                        std::get<1>(i->first) == ev.key.m_context;
         ++i)
    {
        if (i->second.impl == ev.impl)
        {
            m_events.erase(i);
            return;
        }
    }
    NS_ASSERT_MSG(false, "DeterministicScheduler::Remove: no such event");
}

} // namespace ns3
