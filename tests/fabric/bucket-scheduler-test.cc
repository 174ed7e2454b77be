#include "ns3/bucket-scheduler.h"
#include "ns3/map-scheduler.h"
#include "ns3/nstime.h"
#include "ns3/object-factory.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

#include <doctest/doctest.h>

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

/// Drives a BucketScheduler and ns-3's MapScheduler with the same random inserts,
/// removals of the next event and removals of any event, and checks that they agree
/// on every next event. Returns how many events were removed in order.
uint64_t
CompareWithMap(const Mix& mix, uint32_t seed, int steps)
{
    Ptr<Scheduler> bucket = MakeBucketScheduler(mix.buckets, mix.width);
    Ptr<Scheduler> map = CreateObject<MapScheduler>();
    std::mt19937_64 rng(seed);
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
    uint32_t uid = 0;
    uint64_t now = 0;
    uint64_t removedInOrder = 0;
    std::vector<Scheduler::Event> pending; // for removals of any event
    for (int step = 0; step < steps; ++step)
    {
        const uint64_t op = rng() % 16;
        if (op < 8 || map->IsEmpty())
        {
            uint64_t ts = now + delay();
            if (mix.earlier && rng() % 8 == 0)
            {
                ts = now - std::min<uint64_t>(now, rng() % (3 * window));
            }
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
        else if (op < 15)
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
        else
        {
            // Simulator::Remove: any pending event.
            const size_t i = rng() % pending.size();
            bucket->Remove(pending[i]);
            map->Remove(pending[i]);
            pending[i] = pending.back();
            pending.pop_back();
        }
        REQUIRE(bucket->IsEmpty() == map->IsEmpty());
    }
    while (!map->IsEmpty())
    {
        REQUIRE(!bucket->IsEmpty());
        REQUIRE(bucket->RemoveNext().key.m_uid == map->RemoveNext().key.m_uid);
        ++removedInOrder;
    }
    CHECK(bucket->IsEmpty());
    return removedInOrder;
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
