#include "ns3/bucket-scheduler.h"

#include "ns3/abort.h"
#include "ns3/assert.h"
#include "ns3/double.h"
#include "ns3/trace-source-accessor.h"
#include "ns3/uinteger.h"

#include <algorithm>

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
                          "Simulated time one bucket spans at first, rounded up to a power "
                          "of two of time steps; the width then follows the events' density",
                          TimeValue(NanoSeconds(1)), MakeTimeAccessor(&BucketScheduler::m_width),
                          MakeTimeChecker(Time(0)))
            .AddAttribute("Buckets",
                          "Buckets at first (a power of two, at least 64). With BucketWidth it "
                          "sets the window ahead of the present that the buckets cover, "
                          "whatever the width; an event later than the window waits in a map",
                          UintegerValue(4096), MakeUintegerAccessor(&BucketScheduler::m_count),
                          MakeUintegerChecker<uint32_t>(64, 1U << 24))
            .AddAttribute("MaxBuckets",
                          "The most buckets a narrower width may take (a power of two, at "
                          "least Buckets)",
                          UintegerValue(1 << 20),
                          MakeUintegerAccessor(&BucketScheduler::m_maxSlots),
                          MakeUintegerChecker<uint64_t>(64, uint64_t(1) << 26))
            .AddAttribute("DenseAt",
                          "Events an ordered insert passes, on average over the events run, "
                          "above which the width is halved (more buckets, fewer events in each)",
                          DoubleValue(4), MakeDoubleAccessor(&BucketScheduler::m_dense),
                          MakeDoubleChecker<double>(0))
            .AddAttribute("SparseAt",
                          "Events run per bucket emptied below which the width is doubled, if "
                          "inserts pass fewer than a quarter of DenseAt events; 0 never widens",
                          DoubleValue(1.5), MakeDoubleAccessor(&BucketScheduler::m_sparse),
                          MakeDoubleChecker<double>(0))
            .AddTraceSource("Resize",
                            "The buckets took a new width: the width, the buckets, and the "
                            "figure that asked for it (events passed per event run when "
                            "narrower, events run per bucket emptied when wider)",
                            MakeTraceSourceAccessor(&BucketScheduler::m_resize),
                            "ns3::BucketScheduler::ResizeTracedCallback");
    return tid;
}

BucketScheduler::BucketScheduler() = default;
BucketScheduler::~BucketScheduler() = default;

Time
BucketScheduler::GetBucketWidth() const
{
    return m_slots == 0 ? Time(0) : TimeStep(uint64_t(1) << m_shift);
}

uint64_t
BucketScheduler::GetBuckets() const
{
    return m_slots;
}

void
BucketScheduler::Layout(uint32_t shift, uint64_t slots)
{
    m_shift = shift;
    m_slots = slots;
    m_mask = m_slots - 1;
    m_buckets.assign(m_slots, Bucket{});
    m_buckets.shrink_to_fit();
    m_filled.assign(m_slots / 64, 0);
    m_filled.shrink_to_fit();
}

uint32_t
BucketScheduler::NewNode()
{
    if (m_free != kNil)
    {
        const uint32_t n = m_free;
        m_free = m_nodes[n].next;
        return n;
    }
    NS_ABORT_MSG_IF(m_nodes.size() >= kNil, "BucketScheduler: too many events pending");
    m_nodes.emplace_back();
    return static_cast<uint32_t>(m_nodes.size() - 1);
}

void
BucketScheduler::FreeNode(uint32_t node)
{
    m_nodes[node].next = m_free;
    m_free = node;
}

void
BucketScheduler::Link(uint32_t node, uint64_t bucket)
{
    Bucket& b = At(bucket);
    Node& n = m_nodes[node];
    if (b.head == kNil)
    {
        n.next = kNil;
        b.head = b.tail = node;
        MarkFilled(bucket);
        return;
    }
    // New events are mostly the latest of their bucket.
    if (!(n.ev.key < m_nodes[b.tail].ev.key))
    {
        n.next = kNil;
        m_nodes[b.tail].next = node;
        b.tail = node;
        return;
    }
    if (n.ev.key < m_nodes[b.head].ev.key)
    {
        n.next = b.head;
        b.head = node;
        return;
    }
    // Somewhere between the head and the tail, which is later.
    uint32_t before = b.head;
    while (!(n.ev.key < m_nodes[m_nodes[before].next].ev.key))
    {
        before = m_nodes[before].next;
        ++m_walked;
    }
    n.next = m_nodes[before].next;
    m_nodes[before].next = node;
}

void
BucketScheduler::Place(const Event& ev, uint64_t bucket, const Touch& touch)
{
    const uint32_t node = NewNode();
    m_nodes[node].ev = ev;
    m_nodes[node].touch = touch;
    Link(node, bucket);
    ++m_near;
}

void
BucketScheduler::Insert(const Event& ev)
{
    if (m_buckets.empty())
    {
        NS_ABORT_MSG_IF((m_count & (m_count - 1)) != 0 || m_count < 64,
                        "BucketScheduler: Buckets must be a power of two of at least 64, not "
                            << m_count);
        NS_ABORT_MSG_IF((m_maxSlots & (m_maxSlots - 1)) != 0 || m_maxSlots < m_count,
                        "BucketScheduler: MaxBuckets must be a power of two of at least "
                        "Buckets ("
                            << m_count << "), not " << m_maxSlots);
        const int64_t steps = m_width.GetTimeStep();
        NS_ABORT_MSG_IF(steps < 1, "BucketScheduler: BucketWidth must be at least one time step");
        const auto u = static_cast<uint64_t>(steps);
        Layout(static_cast<uint32_t>(63 - __builtin_clzll(u)) + ((u & (u - 1)) != 0 ? 1 : 0),
               m_count);
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
BucketScheduler::NextFilled(uint64_t from) const
{
    NS_ASSERT(from >= m_cursor);
    // The ring's words line up with 64 buckets of absolute number, as m_slots is a
    // multiple of 64: a word's bits from \p from's on are the buckets from it on.
    const uint64_t end = m_cursor + m_slots;
    while (from < end)
    {
        const uint64_t bits = m_filled[(from & m_mask) >> 6] & (~uint64_t(0) << (from & 63));
        if (bits != 0)
        {
            // Bits past the window's end in its last word are the buckets at its start.
            return std::min(end, from + (__builtin_ctzll(bits) - (from & 63)));
        }
        from = (from | 63) + 1;
    }
    return end;
}

uint64_t
BucketScheduler::FirstFilled() const
{
    NS_ASSERT(m_near > 0);
    // Most often in the cursor's own word, whose bits from the cursor's on are all in
    // the window.
    const uint64_t bits = m_filled[(m_cursor & m_mask) >> 6] & (~uint64_t(0) << (m_cursor & 63));
    if (bits != 0)
    {
        return m_cursor + (__builtin_ctzll(bits) - (m_cursor & 63));
    }
    const uint64_t bucket = NextFilled((m_cursor | 63) + 1);
    NS_ABORT_MSG_IF(bucket == m_cursor + m_slots,
                    "BucketScheduler: events counted but no bucket holds any");
    return bucket;
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
    return m_nodes[m_buckets[FirstFilled() & m_mask].head].ev;
}

void
BucketScheduler::PullIn()
{
    while (!m_far.empty())
    {
        const auto first = m_far.begin();
        const uint64_t b = BucketOf(first->first.m_ts);
        NS_ASSERT(b >= m_cursor);
        if (b - m_cursor >= m_slots)
        {
            break;
        }
        Place(Event{first->second, first->first}, b, Touch{});
        m_far.erase(first);
    }
}

void
BucketScheduler::Advance(uint64_t bucket)
{
    NS_ASSERT(bucket >= m_cursor);
    m_cursor = bucket;
    PullIn();
}

void
BucketScheduler::SendFar(uint64_t bucket)
{
    Bucket& b = At(bucket);
    for (uint32_t n = b.head; n != kNil;)
    {
        const uint32_t next = m_nodes[n].next;
        m_far.emplace(m_nodes[n].ev.key, m_nodes[n].ev.impl);
        FreeNode(n);
        --m_near;
        n = next;
    }
    b = Bucket{};
    MarkEmpty(bucket);
}

void
BucketScheduler::Rewind(uint64_t bucket)
{
    // Not met under ns-3's simulators (an event is never earlier than the last one
    // run), but kept correct: the window's end comes in with its start.
    const uint64_t end = m_cursor + m_slots;
    for (uint64_t b = NextFilled(std::max(bucket + m_slots, m_cursor)); b != end;
         b = NextFilled(b + 1))
    {
        SendFar(b);
    }
    m_cursor = bucket;
}

void
BucketScheduler::Resize(bool narrower, double figure)
{
    // Every waiting node, in time order (so each goes to the tail of its new bucket).
    std::vector<uint32_t> nodes;
    nodes.reserve(m_near);
    const uint64_t end = m_cursor + m_slots;
    for (uint64_t b = NextFilled(m_cursor); b != end; b = NextFilled(b + 1))
    {
        for (uint32_t n = At(b).head; n != kNil; n = m_nodes[n].next)
        {
            nodes.push_back(n);
        }
    }
    // The new cursor's bucket starts at or before the old one's: before every event.
    const uint64_t start = m_cursor << m_shift;
    const uint32_t shift = narrower ? m_shift - 1 : m_shift + 1;
    Layout(shift, narrower ? m_slots * 2 : m_slots / 2);
    m_cursor = start >> m_shift;
    m_near = 0;
    for (const uint32_t n : nodes)
    {
        const uint64_t bucket = BucketOf(m_nodes[n].ev.key.m_ts);
        NS_ASSERT(bucket >= m_cursor);
        if (bucket - m_cursor >= m_slots)
        {
            m_far.emplace(m_nodes[n].ev.key, m_nodes[n].ev.impl);
            FreeNode(n);
            continue;
        }
        Link(n, bucket);
        ++m_near;
    }
    PullIn();
    m_resize(GetBucketWidth(), m_slots, figure);
}

void
BucketScheduler::Look()
{
    const double perBucket = double(m_handed) / double(m_visits == 0 ? 1 : m_visits);
    const double walked = double(m_walked) / double(m_handed);
    m_handed = 0;
    m_visits = 0;
    m_walked = 0;
    if (walked > m_dense && m_shift > 0 && m_slots * 2 <= m_maxSlots)
    {
        Resize(true, walked);
    }
    else if (perBucket < m_sparse && walked < m_dense / 4 && m_slots / 2 >= 64)
    {
        Resize(false, perBucket);
    }
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
    const uint32_t node = b.head;
    const Event ev = m_nodes[node].ev;
    b.head = m_nodes[node].next;
    if (b.head == kNil)
    {
        b.tail = kNil;
        MarkEmpty(bucket);
        ++m_visits;
    }
    else
    {
        // The next event is most likely the next of this bucket: start loading it, and
        // what it will read first, now, while this one runs, rather than when the
        // simulator invokes it. The loads are independent: they overlap. The node after
        // it is loaded too, for the next call to find it here (the nodes of a list are
        // wherever the pool had room).
        const Node& next = m_nodes[b.head];
        __builtin_prefetch(next.ev.impl);
        __builtin_prefetch(next.touch.first);
        __builtin_prefetch(next.touch.second);
        if (next.next != kNil)
        {
            __builtin_prefetch(&m_nodes[next.next]);
        }
    }
    FreeNode(node);
    if (--m_near != 0 && b.head == kNil)
    {
        // The next event is the first of a later bucket: start loading its node.
        __builtin_prefetch(&m_nodes[m_buckets[FirstFilled() & m_mask].head]);
    }
    if (++m_handed == kLookEvery)
    {
        Look();
    }
    return ev;
}

void
BucketScheduler::Remove(const Event& ev)
{
    const uint64_t bucket = BucketOf(ev.key.m_ts);
    if (bucket >= m_cursor && bucket - m_cursor < m_slots)
    {
        Bucket& b = At(bucket);
        uint32_t before = kNil;
        for (uint32_t n = b.head; n != kNil; before = n, n = m_nodes[n].next)
        {
            if (m_nodes[n].ev.key.m_uid != ev.key.m_uid)
            {
                continue;
            }
            const uint32_t next = m_nodes[n].next;
            (before == kNil ? b.head : m_nodes[before].next) = next;
            if (b.tail == n)
            {
                b.tail = before;
            }
            if (b.head == kNil)
            {
                MarkEmpty(bucket);
            }
            FreeNode(n);
            --m_near;
            return;
        }
        NS_ABORT_MSG("BucketScheduler::Remove: no such event in its bucket");
    }
    const size_t erased = m_far.erase(ev.key);
    NS_ABORT_MSG_IF(erased != 1, "BucketScheduler::Remove: no such event");
}

} // namespace ns3
