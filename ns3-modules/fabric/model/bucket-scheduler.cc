#include "ns3/bucket-scheduler.h"

#include "ns3/abort.h"
#include "ns3/assert.h"
#include "ns3/uinteger.h"

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(BucketScheduler);

thread_local BucketScheduler::Touch BucketScheduler::t_touch;

void
BucketScheduler::TouchNext(const void* first, const void* second)
{
    t_touch = Touch{first, second};
}

TypeId
BucketScheduler::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::BucketScheduler")
            .SetParent<Scheduler>()
            .SetGroupName("Fabric")
            .AddConstructor<BucketScheduler>()
            .AddAttribute("BucketWidth",
                          "Simulated time one bucket spans, rounded up to a power of two of "
                          "time steps",
                          TimeValue(NanoSeconds(1)), MakeTimeAccessor(&BucketScheduler::m_width),
                          MakeTimeChecker(Time(0)))
            .AddAttribute("Buckets",
                          "Buckets in the window ahead of the present (a power of two, at "
                          "least 64); an event later than the window waits in a map",
                          UintegerValue(4096), MakeUintegerAccessor(&BucketScheduler::m_count),
                          MakeUintegerChecker<uint32_t>(64, 1U << 24));
    return tid;
}

BucketScheduler::BucketScheduler() = default;
BucketScheduler::~BucketScheduler() = default;

void
BucketScheduler::Layout()
{
    NS_ABORT_MSG_IF((m_count & (m_count - 1)) != 0 || m_count < 64,
                    "BucketScheduler: Buckets must be a power of two of at least 64, not "
                        << m_count);
    const int64_t steps = m_width.GetTimeStep();
    NS_ABORT_MSG_IF(steps < 1, "BucketScheduler: BucketWidth must be at least one time step");
    const auto u = static_cast<uint64_t>(steps);
    m_shift = static_cast<uint32_t>(63 - __builtin_clzll(u)) + ((u & (u - 1)) != 0 ? 1 : 0);
    m_slots = m_count; // the ring's size from now on, whatever the attribute says later
    m_mask = m_slots - 1;
    m_buckets.resize(m_slots);
    m_filled.assign(m_slots / 64, 0);
}

void
BucketScheduler::Empty(uint64_t bucket)
{
    Bucket& b = At(bucket);
    // A bucket keeps room for a few events for its next turn; a burst's room is given
    // back, or every bucket would come to hold the most it ever held.
    if (b.events.capacity() > kKeptRoom)
    {
        std::vector<Entry>().swap(b.events);
    }
    else
    {
        b.events.clear();
    }
    b.head = 0;
    MarkEmpty(bucket);
}

void
BucketScheduler::Place(const Event& ev, uint64_t bucket, const Touch& touch)
{
    Bucket& b = At(bucket);
    auto& v = b.events;
    if (b.head >= kKeptRoom && b.head * 2 >= v.size())
    {
        // A bucket kept busy (events scheduled with no delay, run and scheduled again):
        // the entries already removed go, so it holds no more than it has pending.
        v.erase(v.begin(), v.begin() + b.head);
        b.head = 0;
    }
    // New events are mostly the latest of their bucket: look for the place from the end.
    auto pos = v.end();
    const auto first = v.begin() + b.head;
    while (pos != first && ev.key < (pos - 1)->ev.key)
    {
        --pos;
    }
    v.insert(pos, Entry{ev, touch});
    if (v.size() - b.head == 1)
    {
        MarkFilled(bucket);
    }
    ++m_near;
}

void
BucketScheduler::Insert(const Event& ev)
{
    if (m_buckets.empty())
    {
        Layout();
    }
    const Touch touch = t_touch;
    t_touch = Touch{};
    const uint64_t bucket = BucketOf(ev.key.m_ts);
    if (bucket < m_cursor)
    {
        Rewind(bucket);
    }
    if (bucket - m_cursor >= m_slots)
    {
        m_far.emplace(ev.key, ev.impl); // far: its memory would be evicted before it runs
        return;
    }
    Place(ev, bucket, touch);
}

bool
BucketScheduler::IsEmpty() const
{
    return m_near == 0 && m_far.empty();
}

uint64_t
BucketScheduler::FirstFilled() const
{
    NS_ASSERT(m_near > 0);
    const uint64_t start = m_cursor & m_mask;
    const size_t words = m_filled.size();
    size_t word = start >> 6;
    uint64_t bits = m_filled[word] & (~uint64_t(0) << (start & 63));
    // Once round the ring, and the first word again for the bits below the start.
    for (size_t i = 0; i <= words; ++i)
    {
        if (bits != 0)
        {
            const uint64_t index = (uint64_t(word) << 6) + __builtin_ctzll(bits);
            return m_cursor + ((index - start) & m_mask);
        }
        word = word + 1 == words ? 0 : word + 1;
        bits = m_filled[word];
    }
    NS_ABORT_MSG("BucketScheduler: events counted but no bucket holds any");
    return 0;
}

Scheduler::Event
BucketScheduler::PeekNext() const
{
    NS_ASSERT(!IsEmpty());
    if (m_near == 0)
    {
        const auto first = m_far.begin();
        return Event{first->second, first->first};
    }
    // Every event in the map is later than every event in the window.
    const Bucket& b = m_buckets[FirstFilled() & m_mask];
    return b.events[b.head].ev;
}

void
BucketScheduler::Advance(uint64_t bucket)
{
    NS_ASSERT(bucket >= m_cursor);
    m_cursor = bucket;
    while (!m_far.empty())
    {
        const auto first = m_far.begin();
        const uint64_t b = BucketOf(first->first.m_ts);
        if (b - m_cursor >= m_slots)
        {
            break;
        }
        Place(Event{first->second, first->first}, b, Touch{});
        m_far.erase(first);
    }
}

void
BucketScheduler::Rewind(uint64_t bucket)
{
    // Not met under ns-3's simulators (an event is never earlier than the last one
    // run), but kept correct: the window's end comes in with its start.
    const uint64_t end = bucket + m_slots;
    for (size_t w = 0; w < m_filled.size(); ++w)
    {
        for (uint64_t bits = m_filled[w]; bits != 0; bits &= bits - 1)
        {
            const uint64_t index = (uint64_t(w) << 6) + __builtin_ctzll(bits);
            const uint64_t abs = m_cursor + ((index - (m_cursor & m_mask)) & m_mask);
            if (abs < end)
            {
                continue;
            }
            Bucket& b = At(abs);
            for (size_t i = b.head; i < b.events.size(); ++i)
            {
                m_far.emplace(b.events[i].ev.key, b.events[i].ev.impl);
            }
            m_near -= b.events.size() - b.head;
            Empty(abs);
        }
    }
    m_cursor = bucket;
}

Scheduler::Event
BucketScheduler::RemoveNext()
{
    NS_ASSERT(!IsEmpty());
    if (m_near == 0)
    {
        Advance(BucketOf(m_far.begin()->first.m_ts));
    }
    const uint64_t bucket = FirstFilled();
    if (bucket != m_cursor)
    {
        Advance(bucket);
    }
    Bucket& b = At(bucket);
    const Event ev = b.events[b.head++].ev;
    if (b.head == b.events.size())
    {
        Empty(bucket);
    }
    else
    {
        // The next event is most likely the next of this bucket: start loading it, and
        // what it will read first, now, while this one runs, rather than when the
        // simulator invokes it. The three loads are independent: they overlap.
        const Entry& next = b.events[b.head];
        __builtin_prefetch(next.ev.impl);
        __builtin_prefetch(next.touch.first);
        __builtin_prefetch(next.touch.second);
    }
    --m_near;
    return ev;
}

void
BucketScheduler::Remove(const Event& ev)
{
    const uint64_t bucket = BucketOf(ev.key.m_ts);
    if (bucket >= m_cursor && bucket - m_cursor < m_slots)
    {
        Bucket& b = At(bucket);
        for (auto i = b.events.begin() + b.head; i != b.events.end(); ++i)
        {
            if (i->ev.key.m_uid == ev.key.m_uid)
            {
                b.events.erase(i);
                --m_near;
                if (b.head == b.events.size())
                {
                    Empty(bucket);
                }
                return;
            }
        }
        NS_ABORT_MSG("BucketScheduler::Remove: no such event in its bucket");
    }
    const size_t erased = m_far.erase(ev.key);
    NS_ABORT_MSG_IF(erased != 1, "BucketScheduler::Remove: no such event");
}

} // namespace ns3
