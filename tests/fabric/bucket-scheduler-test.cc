#include "ns3/bucket-scheduler.h"
#include "ns3/double.h"
#include "ns3/map-scheduler.h"
#include "ns3/nstime.h"
#include "ns3/object-factory.h"
#include "ns3/simulator.h"
#include "ns3/trace-source-accessor.h"
#include "ns3/uinteger.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

using namespace ns3;

namespace
{

/// A stand-in for an event's implementation: schedulers store it and never call it.
EventImpl*
FakeImpl(uint32_t uid)
{
    return reinterpret_cast<EventImpl*>(static_cast<uintptr_t>(uid + 1) << 4);
}

Ptr<Scheduler>
MakeBucketScheduler(uint32_t buckets, Time width)
{
    ObjectFactory f;
    f.SetTypeId(BucketScheduler::GetTypeId());
    f.Set("Buckets", UintegerValue(buckets));
    f.Set("BucketWidth", TimeValue(width));
    return f.Create<Scheduler>();
}

struct Mix
{
    std::string name;
    uint32_t buckets;
    Time width;
    bool earlier; ///< also insert events earlier than the last one removed
};

/// A BucketScheduler and ns-3's MapScheduler fed the same events: every event either
/// hands out is checked against the other's.
struct Pair
{
    Ptr<Scheduler> bucket;
    Ptr<Scheduler> map{CreateObject<MapScheduler>()};
    std::mt19937_64 rng;
    uint32_t uid{0};
    uint64_t now{0};                       ///< the time stamp of the last event removed
    uint64_t removedInOrder{0};            ///< events removed as the next one
    std::vector<Scheduler::Event> pending; ///< for removals of any event

    Pair(Ptr<Scheduler> b, uint32_t seed) : bucket(b), rng(seed) {}

    void Insert(uint64_t ts)
    {
        const Scheduler::Event ev{FakeImpl(uid), {ts, uid, static_cast<uint32_t>(rng() % 4)}};
        ++uid;
        if (rng() % 2 == 0)
        {
            // A prefetch hint: never read through (these point at nothing), and no
            // change to the order.
            BucketScheduler::TouchNext(reinterpret_cast<const void*>(uintptr_t(rng()) << 4),
                                       reinterpret_cast<const void*>(uintptr_t(1)));
        }
        bucket->Insert(ev);
        map->Insert(ev);
        pending.push_back(ev);
    }

    void RemoveNext()
    {
        REQUIRE(!bucket->IsEmpty());
        const Scheduler::Event want = map->PeekNext();
        const Scheduler::Event peeked = bucket->PeekNext();
        REQUIRE(peeked.key.m_uid == want.key.m_uid);
        const Scheduler::Event got = bucket->RemoveNext();
        map->RemoveNext();
        REQUIRE(got.key.m_uid == want.key.m_uid);
        REQUIRE(got.key.m_ts == want.key.m_ts);
        REQUIRE(got.impl == want.impl);
        REQUIRE(got.key.m_context == want.key.m_context);
        now = std::max(now, got.key.m_ts);
        ++removedInOrder;
        for (auto& p : pending)
        {
            if (p.key.m_uid == got.key.m_uid)
            {
                p = pending.back();
                pending.pop_back();
                break;
            }
        }
    }

    /// Simulator::Remove: any pending event.
    void RemoveAny()
    {
        const size_t i = rng() % pending.size();
        bucket->Remove(pending[i]);
        map->Remove(pending[i]);
        pending[i] = pending.back();
        pending.pop_back();
    }

    void Drain()
    {
        while (!map->IsEmpty())
        {
            RemoveNext();
        }
        CHECK(bucket->IsEmpty());
    }
};

/// Drives a BucketScheduler and ns-3's MapScheduler with the same random inserts,
/// removals of the next event and removals of any event, and checks that they agree
/// on every next event. Returns how many events were removed in order.
uint64_t
CompareWithMap(const Mix& mix, uint32_t seed, int steps)
{
    Pair pair(MakeBucketScheduler(mix.buckets, mix.width), seed);
    auto& rng = pair.rng;
    const uint64_t w = static_cast<uint64_t>(mix.width.GetTimeStep());
    const uint64_t window = w * mix.buckets;
    // Delays as a fabric makes them: ties, within a bucket, within the window, just
    // past it, and far (timers).
    auto delay = [&]() -> uint64_t {
        switch (rng() % 8)
        {
        case 0:
            return 0;
        case 1:
            return rng() % (w + 1);
        case 2:
        case 3:
        case 4:
            return rng() % window;
        case 5:
            return window - 2 + rng() % 5;
        case 6:
            return window + rng() % (4 * window);
        default:
            // Far, and now and then as far as a stop at the end of time.
            return rng() % 64 == 0 ? (uint64_t(1) << 62) + rng() % window : rng() % (1000 * window);
        }
    };
    for (int step = 0; step < steps; ++step)
    {
        const uint64_t op = rng() % 16;
        if (op < 8 || pair.map->IsEmpty())
        {
            const uint64_t now = pair.now;
            uint64_t ts = now + delay();
            if (mix.earlier && rng() % 8 == 0)
            {
                ts = now - std::min<uint64_t>(now, rng() % (3 * window));
            }
            pair.Insert(ts);
        }
        else if (op < 15)
        {
            pair.RemoveNext();
        }
        else
        {
            pair.RemoveAny();
        }
        REQUIRE(pair.bucket->IsEmpty() == pair.map->IsEmpty());
    }
    pair.Drain();
    return pair.removedInOrder;
}

} // namespace

TEST_CASE("BucketScheduler runs events in MapScheduler's order, with removals, ties, far "
          "events and prefetch hints")
{
    const std::vector<Mix> mixes = {
        {"64 buckets of 1 step", 64, TimeStep(1), false},
        {"64 buckets of 8 steps", 64, TimeStep(8), false},
        {"256 buckets of 1000 steps (rounded to 1024)", 256, TimeStep(1000), false},
        {"the defaults' shape, 4096 buckets of 1024 steps", 4096, TimeStep(1024), false},
        {"64 buckets, events earlier than the last removed too", 64, TimeStep(4), true},
        {"512 buckets (8 bitmap words), events earlier too", 512, TimeStep(2), true},
    };
    for (const auto& mix : mixes)
    {
        CAPTURE(mix.name);
        for (uint32_t seed = 1; seed <= 4; ++seed)
        {
            CAPTURE(seed);
            CHECK(CompareWithMap(mix, seed, 20000) > 5000);
        }
    }
}

namespace
{

/// The layouts a BucketScheduler took, from its Resize trace source.
struct Layouts
{
    std::vector<int64_t> widths; ///< in time steps
    std::vector<uint64_t> buckets;

    void Record(Time width, uint64_t count, double /* perBucket */)
    {
        widths.push_back(width.GetTimeStep());
        buckets.push_back(count);
    }
};

/// Keeps about \p pending events waiting, each \p spread time steps or less ahead of
/// the last one removed (in random order, so ordered inserts pass other events), with
/// removals of any event and far timers now and then, for \p steps removals.
void
Crowd(Pair& pair, size_t pending, uint64_t spread, int steps)
{
    auto& rng = pair.rng;
    for (int step = 0; step < steps; ++step)
    {
        while (pair.pending.size() < pending)
        {
            const uint64_t r = rng() % 64;
            pair.Insert(pair.now + (r == 0 ? spread * 1000 + rng() % spread : rng() % spread));
        }
        if (rng() % 32 == 0)
        {
            pair.RemoveAny();
        }
        pair.RemoveNext();
    }
}

} // namespace

TEST_CASE("BucketScheduler narrows its buckets as events crowd them and widens them as "
          "they thin out, keeping its window and MapScheduler's order")
{
    for (uint32_t seed = 1; seed <= 3; ++seed)
    {
        CAPTURE(seed);
        Ptr<Scheduler> s = MakeBucketScheduler(4096, TimeStep(1024));
        Layouts layouts;
        s->TraceConnectWithoutContext("Resize", MakeCallback(&Layouts::Record, &layouts));
        Pair pair(s, seed);
        auto* bucket = dynamic_cast<BucketScheduler*>(PeekPointer(s));
        REQUIRE(bucket != nullptr);
        const uint64_t window = 4096 * 1024;

        // 3,000 events within 64 buckets of 1,024 steps: some 47 a bucket, each insert
        // passing many.
        Crowd(pair, 3000, 64 * 1024, 150000);
        REQUIRE(!layouts.widths.empty());
        const int64_t narrowest = *std::min_element(layouts.widths.begin(), layouts.widths.end());
        CHECK(narrowest <= 256); // halved at least twice
        CHECK(bucket->GetBucketWidth().GetTimeStep() < 1024);

        // 20 events over the whole window: about one a bucket, even at 1,024 steps.
        const size_t narrowed = layouts.widths.size();
        Crowd(pair, 20, window, 200000);
        REQUIRE(layouts.widths.size() > narrowed);
        CHECK(layouts.widths.back() > narrowest);
        CHECK(bucket->GetBucketWidth().GetTimeStep() >= 1024);

        // Every layout covers the same window, and stays within the bounds.
        for (size_t i = 0; i < layouts.widths.size(); ++i)
        {
            CAPTURE(i);
            CHECK(uint64_t(layouts.widths[i]) * layouts.buckets[i] == window);
            CHECK(layouts.buckets[i] >= 64);
            CHECK(layouts.buckets[i] <= (1U << 20));
        }
        pair.Drain();
        CHECK(pair.removedInOrder > 250000);
    }
}

TEST_CASE("an event in the last bucket when the buckets widen from an odd cursor waits "
          "in the map, in its place")
{
    // 128 buckets of one step; one event at a time, so each empties its bucket.
    Ptr<Scheduler> s = MakeBucketScheduler(128, TimeStep(1));
    Layouts layouts;
    s->TraceConnectWithoutContext("Resize", MakeCallback(&Layouts::Record, &layouts));
    Pair pair(s, 1);
    uint64_t ts = 1;
    for (int i = 1; i < (1 << 14); ++i)
    {
        pair.Insert(++ts);
        pair.RemoveNext();
    }
    REQUIRE(layouts.widths.empty());
    // The 16,384th event, at an odd step, makes the scheduler look at the density: about
    // one event a bucket, so it widens to 64 buckets of 2 steps, from the step below.
    // The window then ends one step earlier, at the bucket of the event 127 steps on.
    pair.Insert(++ts);
    REQUIRE(ts % 2 == 1);
    pair.Insert(ts + 127);
    pair.Insert(ts + 20);
    pair.RemoveNext();
    REQUIRE(layouts.widths == std::vector<int64_t>{2});
    REQUIRE(layouts.buckets == std::vector<uint64_t>{64});
    pair.Drain(); // ts + 20 first, then ts + 127
    CHECK(pair.now == ts + 127);
}

TEST_CASE("BucketScheduler keeps its width when MaxBuckets leaves no room to narrow, and "
          "when SparseAt is 0 never widens")
{
    ObjectFactory f;
    f.SetTypeId(BucketScheduler::GetTypeId());
    f.Set("Buckets", UintegerValue(4096));
    f.Set("MaxBuckets", UintegerValue(4096));
    f.Set("SparseAt", DoubleValue(0));
    Ptr<Scheduler> s = f.Create<Scheduler>();
    Layouts layouts;
    s->TraceConnectWithoutContext("Resize", MakeCallback(&Layouts::Record, &layouts));
    Pair pair(s, 9);
    Crowd(pair, 3000, 64 * 1024, 40000);
    Crowd(pair, 20, 4096 * 1024, 100000);
    pair.Drain();
    CHECK(layouts.widths.empty());
    CHECK(dynamic_cast<BucketScheduler*>(PeekPointer(s))->GetBucketWidth() == TimeStep(1024));
}

namespace
{

std::vector<int> g_order;

void
Record(int i)
{
    g_order.push_back(i);
}

/// The order in which a simulation under \p scheduler runs events scheduled, cancelled
/// and removed as a model does.
std::vector<int>
RunUnder(const std::string& scheduler)
{
    Simulator::Destroy();
    ObjectFactory f;
    f.SetTypeId(scheduler);
    Simulator::SetScheduler(f);
    g_order.clear();
    std::mt19937 rng(7);
    std::vector<EventId> ids;
    for (int i = 0; i < 3000; ++i)
    {
        const Time at = NanoSeconds(rng() % 50) + PicoSeconds(rng() % 3);
        ids.push_back(Simulator::Schedule(at, &Record, i));
    }
    for (int i = 0; i < 3000; i += 7)
    {
        Simulator::Remove(ids[i]);
    }
    for (int i = 3; i < 3000; i += 11)
    {
        ids[i].Cancel();
    }
    // Events that schedule more, some with no delay, some far.
    for (int i = 0; i < 200; ++i)
    {
        Simulator::Schedule(NanoSeconds(i), [i] {
            Simulator::ScheduleNow(&Record, 10000 + i);
            Simulator::Schedule(MicroSeconds(100 + i % 3), &Record, 20000 + i);
        });
    }
    Simulator::Run();
    Simulator::Destroy();
    return g_order;
}

} // namespace

TEST_CASE("a simulation under BucketScheduler runs exactly as under MapScheduler")
{
    const std::vector<int> map = RunUnder("ns3::MapScheduler");
    const std::vector<int> bucket = RunUnder("ns3::BucketScheduler");
    CHECK(map.size() > 2500); // 3,000 less the removed and cancelled, 400 more
    CHECK(bucket == map);
}
