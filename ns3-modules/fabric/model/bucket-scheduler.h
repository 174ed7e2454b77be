/*
 * An ns-3 event scheduler for packet-level fabrics: fixed-width time buckets over a
 * short window ahead of the present, and a map for the events beyond it.
 */
#ifndef FABEMU_BUCKET_SCHEDULER_H
#define FABEMU_BUCKET_SCHEDULER_H

#include "ns3/nstime.h"
#include "ns3/scheduler.h"

#include <cstdint>
#include <map>
#include <vector>

namespace ns3
{

/**
 * \brief Runs events in exactly ns-3's order, (time stamp, uid), as MapScheduler
 * does, for less work per event when most events fall a little ahead of the present.
 *
 * In a packet-level fabric almost every event is a serialisation's end or a frame's
 * arrival, tens of nanoseconds to a few microseconds ahead; timers (retransmission,
 * DCQCN, samplers) are few and far. MapScheduler pays a red-black tree insert (a
 * node allocated, some log2(n) cache lines walked) for each. This scheduler keeps the
 * events of the next `Buckets` x `BucketWidth` of simulated time in that many buckets,
 * each a vector kept in order, with a bitmap of the buckets that hold any; an event
 * later than that window waits in a map and moves into its bucket as the window
 * reaches it. Inserting is finding the bucket and its place among a few events;
 * the next event is the first of the first filled bucket.
 *
 * Every ns-3 scheduler runs events in the same order, so results do not change with
 * it. `BucketWidth` is rounded up to a power of two of time steps (at picoseconds,
 * 1 ns gives 1,024 ps, and the 4,096 buckets 4.2 us); both attributes are read when the
 * first event is inserted. A bucket emptied gives back room for more than a few events.
 */
class BucketScheduler : public Scheduler
{
  public:
    static TypeId GetTypeId();
    BucketScheduler();
    ~BucketScheduler() override;

    void Insert(const Event& ev) override;
    bool IsEmpty() const override;
    Event PeekNext() const override;
    Event RemoveNext() override;
    void Remove(const Event& ev) override;

    /**
     * \brief Names the memory the next event inserted from this thread will read first
     * (a frame's arrival: its Packet and its header bytes).
     *
     * When that event comes to be the next to run, the scheduler prefetches this memory
     * with the event, while the event before it runs; by then a packet that waited in a
     * queue has long left the caches. Only a hint, for the next Insert: it changes no
     * order, the pointers are never read through, and other schedulers ignore it.
     */
    static void TouchNext(const void* first, const void* second = nullptr);

  private:
    /// Memory an event reads first (TouchNext); null when nobody said.
    struct Touch
    {
        const void* first{nullptr};
        const void* second{nullptr};
    };

    /// An event in a bucket, with what to prefetch with it.
    struct Entry
    {
        Event ev;
        Touch touch;
    };

    /// One bucket: its events in (time stamp, uid) order from \c head on.
    struct Bucket
    {
        std::vector<Entry> events;
        uint32_t head{0}; ///< events before this one have been removed
    };

    /// Events a bucket keeps room for once it is empty.
    static constexpr size_t kKeptRoom = 16;

    void Layout();
    /// Empties \p bucket's vector (room for a few events kept) and clears its bit.
    void Empty(uint64_t bucket);
    uint64_t BucketOf(uint64_t ts) const { return ts >> m_shift; }
    Bucket& At(uint64_t bucket) { return m_buckets[bucket & m_mask]; }
    /// The first filled bucket at or after the cursor (there must be one).
    uint64_t FirstFilled() const;
    void MarkFilled(uint64_t bucket) { m_filled[(bucket & m_mask) >> 6] |= Bit(bucket); }
    void MarkEmpty(uint64_t bucket) { m_filled[(bucket & m_mask) >> 6] &= ~Bit(bucket); }
    static uint64_t Bit(uint64_t bucket) { return uint64_t(1) << (bucket & 63); }
    /// Moves the cursor to \p bucket, later, and the far events now inside the window in.
    void Advance(uint64_t bucket);
    /// Moves the cursor back to \p bucket (an event earlier than the present's bucket):
    /// buckets then past the window go to the far map.
    void Rewind(uint64_t bucket);
    void Place(const Event& ev, uint64_t bucket, const Touch& touch);

    static thread_local Touch t_touch; ///< TouchNext's hint, taken by the next Insert

    Time m_width{NanoSeconds(1)}; ///< attribute BucketWidth
    uint32_t m_count{4096};       ///< attribute Buckets
    uint64_t m_slots{0};          ///< buckets, fixed when the first event comes (Layout)
    uint32_t m_shift{0};          ///< log2 of a bucket's width in time steps
    uint64_t m_mask{0};           ///< buckets - 1
    std::vector<Bucket> m_buckets;
    std::vector<uint64_t> m_filled;       ///< a bit per bucket that holds an event
    uint64_t m_cursor{0};                 ///< the bucket of the last event removed
    uint64_t m_near{0};                   ///< events in the buckets
    std::map<EventKey, EventImpl*> m_far; ///< events at or past the window's end
};

} // namespace ns3

#endif // FABEMU_BUCKET_SCHEDULER_H
