/*
 * An ns-3 event scheduler for packet-level fabrics: time buckets over a short window
 * ahead of the present, their width following the events' density, and a map for the
 * events beyond the window.
 */
#ifndef FABEMU_BUCKET_SCHEDULER_H
#define FABEMU_BUCKET_SCHEDULER_H

#include "ns3/nstime.h"
#include "ns3/scheduler.h"
#include "ns3/traced-callback.h"

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
 * events of a window of simulated time ahead of the present (`Buckets` x `BucketWidth`,
 * 4.2 us by default) in buckets of equal width, each a list kept in order, with a
 * bitmap of the buckets that hold any; an event later than that window waits in a map
 * and moves into its bucket as the window reaches it. Inserting is finding the bucket
 * and its place among a few events; the next event is the first of the first filled
 * bucket. The lists' nodes live in one pool, and a node freed is the next one taken,
 * while it is still in the caches: nothing is allocated per event once the pool has
 * grown to the most events pending.
 *
 * The events' density differs by orders of magnitude between a few hosts and thousands
 * of them at the same link rates: a fixed width puts hundreds of events in a bucket in
 * a large fabric, and an event then passes many others to find its place; or it leaves
 * most buckets empty in a small one. So, as a calendar queue does, the scheduler looks
 * at the last `kLookEvery` events it ran. When an insert passed more than `DenseAt`
 * events on average, it halves the width and doubles the buckets (within `MaxBuckets`);
 * when it ran fewer than `SparseAt` events per bucket it emptied, and inserts passed
 * few, it doubles the width and halves the buckets (at least 64). Either way the window
 * stays the same, the events move into the new layout, and their order does not
 * change. Events with the same time stamp (a permutation's hosts start in lockstep)
 * never ask for a narrower width: each new one goes at its bucket's end.
 *
 * Every ns-3 scheduler runs events in the same order, so results do not change with
 * it. `BucketWidth` is rounded up to a power of two of time steps (at picoseconds,
 * 1 ns gives 1,024 ps); the attributes are read when the first event is inserted.
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

    /// The width of a bucket now (zero before the first event).
    Time GetBucketWidth() const;
    /// The buckets now (zero before the first event).
    uint64_t GetBuckets() const;

    /**
     * TracedCallback signature for a new layout.
     * \param width the new width of a bucket
     * \param buckets the new number of buckets
     * \param figure what asked for it: events passed per event run (narrower), or events
     * run per bucket emptied (wider)
     */
    typedef void (*ResizeTracedCallback)(Time width, uint64_t buckets, double figure);

  private:
    /// Memory an event reads first (TouchNext); null when nobody said.
    struct Touch
    {
        const void* first{nullptr};
        const void* second{nullptr};
    };

    static constexpr uint32_t kNil = UINT32_MAX;

    /// An event in a bucket's list, with what to prefetch with it.
    struct Node
    {
        Event ev;
        Touch touch;
        uint32_t next{kNil}; ///< the next node of the bucket, or of the free list
    };

    /// One bucket: the first and last nodes of its list, in (time stamp, uid) order.
    struct Bucket
    {
        uint32_t head{kNil};
        uint32_t tail{kNil};
    };

    /// Events handed out between two looks at the density.
    static constexpr uint64_t kLookEvery = 1 << 14;

    /// Sizes the buckets for \p shift (log2 of the width in time steps) and \p slots.
    void Layout(uint32_t shift, uint64_t slots);
    /// Halves (\p narrower) or doubles the width, and moves every event to the new
    /// layout.
    void Resize(bool narrower, double figure);
    uint64_t BucketOf(uint64_t ts) const { return ts >> m_shift; }
    Bucket& At(uint64_t bucket) { return m_buckets[bucket & m_mask]; }
    /// The first filled bucket at or after \p from (at or after the cursor) in the
    /// window, or the window's end if none is.
    uint64_t NextFilled(uint64_t from) const;
    /// The first filled bucket at or after the cursor (there must be one).
    uint64_t FirstFilled() const;
    void MarkFilled(uint64_t bucket) { m_filled[(bucket & m_mask) >> 6] |= Bit(bucket); }
    void MarkEmpty(uint64_t bucket) { m_filled[(bucket & m_mask) >> 6] &= ~Bit(bucket); }
    static uint64_t Bit(uint64_t bucket) { return uint64_t(1) << (bucket & 63); }
    /// Moves the cursor to \p bucket, later, and the far events now inside the window in.
    void Advance(uint64_t bucket);
    /// Moves the far events now inside the window in.
    void PullIn();
    /// Moves the cursor back to \p bucket (an event earlier than the present's bucket):
    /// buckets then past the window go to the far map.
    void Rewind(uint64_t bucket);
    /// Moves every event of \p bucket to the far map and empties it.
    void SendFar(uint64_t bucket);
    void Place(const Event& ev, uint64_t bucket, const Touch& touch);
    /// Links \p node into \p bucket's list at its place.
    void Link(uint32_t node, uint64_t bucket);
    /// Every kLookEvery events handed out: resizes if they were too dense or too sparse.
    void Look();
    uint32_t NewNode();
    void FreeNode(uint32_t node);

    static thread_local Touch t_touch; ///< TouchNext's hint, taken by the next Insert

    Time m_width{NanoSeconds(1)}; ///< attribute BucketWidth
    uint32_t m_count{4096};       ///< attribute Buckets
    uint64_t m_maxSlots{1 << 20}; ///< attribute MaxBuckets
    double m_dense{4};            ///< attribute DenseAt
    double m_sparse{1.5};         ///< attribute SparseAt
    uint64_t m_slots{0};          ///< buckets now (Layout)
    uint32_t m_shift{0};          ///< log2 of a bucket's width in time steps
    uint64_t m_mask{0};           ///< buckets - 1
    std::vector<Bucket> m_buckets;
    std::vector<uint64_t> m_filled;       ///< a bit per bucket that holds an event
    std::vector<Node> m_nodes;            ///< the pool of every bucket's nodes
    uint32_t m_free{kNil};                ///< the free nodes, the last freed first
    uint64_t m_cursor{0};                 ///< the bucket of the last event removed
    uint64_t m_near{0};                   ///< events in the buckets
    uint64_t m_handed{0};                 ///< events removed since the last look at the density
    uint64_t m_visits{0};                 ///< buckets the cursor emptied since then
    uint64_t m_walked{0};                 ///< nodes passed by ordered inserts since then
    std::map<EventKey, EventImpl*> m_far; ///< events at or past the window's end
    TracedCallback<Time, uint64_t, double> m_resize; ///< trace source Resize
};

} // namespace ns3

#endif // FABEMU_BUCKET_SCHEDULER_H
