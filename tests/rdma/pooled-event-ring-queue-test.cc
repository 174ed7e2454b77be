#include "ns3/pooled-event.h"
#include "ns3/ring-queue.h"
#include "ns3/simulator.h"

#include <doctest/doctest.h>

#include <deque>
#include <set>
#include <vector>

using namespace ns3;

namespace
{

int g_ran = 0;

class CountingEvent : public PooledEvent<CountingEvent>
{
  public:
    explicit CountingEvent(int add) : m_add(add) {}

  private:
    void Notify() override { g_ran += m_add; }

    int m_add;
};

} // namespace

TEST_CASE("a PooledEvent runs as an ns-3 event and its memory is reused, not reallocated")
{
    g_ran = 0;
    const std::size_t kept = CountingEvent::FreeBlocks(); // other cases' leftovers
    std::set<const void*> first;
    for (int i = 0; i < 100; ++i)
    {
        EventImpl* ev = new CountingEvent(i);
        first.insert(ev);
        Simulator::ScheduleWithContext(0, NanoSeconds(i), ev);
    }
    CHECK(CountingEvent::FreeBlocks() == (kept >= 100 ? kept - 100 : 0));
    Simulator::Run();
    CHECK(g_ran == 4950);
    // Every block freed by the run is on the free list (not given back to malloc, whose
    // own reuse of same-sized chunks would also hand the addresses back): the next
    // hundred events take exactly those blocks back, and the list is empty again.
    REQUIRE(CountingEvent::FreeBlocks() >= 100);
    const std::size_t afterRun = CountingEvent::FreeBlocks();
    std::set<const void*> second;
    for (int i = 0; i < 100; ++i)
    {
        EventImpl* ev = new CountingEvent(1);
        second.insert(ev);
        Simulator::ScheduleWithContext(0, NanoSeconds(i), ev);
    }
    CHECK(CountingEvent::FreeBlocks() == afterRun - 100);
    CHECK(second == first);
    Simulator::Run();
    CHECK(g_ran == 5050);
    // The blocks came back again (none was kept by ns-3, none leaked).
    EventImpl* again = new CountingEvent(1);
    CHECK(first.count(again) == 1);
    delete again;
    Simulator::Destroy();
}

TEST_CASE("a PooledEvent's free list is bounded: past kMaxFree, blocks go back to the allocator")
{
    std::vector<EventImpl*> evs;
    const std::size_t n = CountingEvent::kMaxFree + 50;
    for (std::size_t i = 0; i < n; ++i)
    {
        evs.push_back(new CountingEvent(0));
    }
    CHECK(CountingEvent::FreeBlocks() == 0);
    for (EventImpl* ev : evs)
    {
        ev->Unref(); // the one reference: deletes it
    }
    CHECK(CountingEvent::FreeBlocks() == CountingEvent::kMaxFree);
}

TEST_CASE("a RingQueue is a FIFO through growth and wrap-around, and keeps its room")
{
    RingQueue<int> q;
    std::deque<int> want;
    CHECK(q.empty());
    int next = 0;
    // Pushes and pops interleaved so the ring wraps before and after each doubling.
    for (int round = 0; round < 6; ++round)
    {
        for (int i = 0; i < 5 + 7 * round; ++i)
        {
            q.push_back(next);
            want.push_back(next++);
        }
        for (int i = 0; i < 3 + 4 * round; ++i)
        {
            REQUIRE(!q.empty());
            CHECK(q.front() == want.front());
            q.pop_front();
            want.pop_front();
        }
        REQUIRE(q.size() == want.size());
        CHECK(std::equal(q.begin(), q.end(), want.begin()));
    }
    q.clear();
    CHECK(q.empty());
    q.push_back(42);
    CHECK(q.front() == 42);
    CHECK(q.size() == 1);
}
