// SimulatorImplCache makes the calls of Simulator:: on the running implementation, and
// looks it up again after Simulator::Destroy.
#include "ns3/default-simulator-impl.h"
#include "ns3/make-event.h"
#include "ns3/simulator-impl-cache.h"
#include "ns3/simulator.h"

#include <doctest/doctest.h>

#include <cstdint>
#include <vector>

using namespace ns3;

namespace
{

struct Seen
{
    Time at;
    uint32_t context;
};

std::vector<Seen> g_seen;

void
Record()
{
    g_seen.push_back({SimulatorImplCache::Now(), SimulatorImplCache::GetContext()});
}

/// At 2 us on node 7: schedules Record on node 9 after 3 us, straight to the implementation.
void
Forward()
{
    CHECK(SimulatorImplCache::Now() == Simulator::Now());
    CHECK(SimulatorImplCache::GetContext() == Simulator::GetContext());
    SimulatorImplCache::ScheduleWithContext(9, MicroSeconds(3), MakeEvent(&Record));
}

} // namespace

TEST_CASE("The cached implementation schedules, tells the time and the context, as Simulator::")
{
    g_seen.clear();
    Simulator::ScheduleWithContext(7, MicroSeconds(2), &Forward);
    Simulator::Run();
    REQUIRE(g_seen.size() == 1);
    CHECK(g_seen[0].at == MicroSeconds(5));
    CHECK(g_seen[0].context == 9);
    CHECK(SimulatorImplCache::Get() == PeekPointer(Simulator::GetImplementation()));
    Simulator::Destroy();
}

TEST_CASE("After Simulator::Destroy the next run's implementation is looked up again")
{
    g_seen.clear();
    Simulator::Schedule(MicroSeconds(1), &Record);
    Simulator::Run();
    // Held here, so that the next implementation cannot take its address.
    const Ptr<SimulatorImpl> first = Simulator::GetImplementation();
    CHECK(SimulatorImplCache::Get() == PeekPointer(first));
    Simulator::Destroy();

    Ptr<DefaultSimulatorImpl> next = CreateObject<DefaultSimulatorImpl>();
    Simulator::SetImplementation(next);
    CHECK(PeekPointer(next) != PeekPointer(first));
    Simulator::Schedule(MicroSeconds(4), &Record);
    Simulator::Run();
    CHECK(SimulatorImplCache::Get() == PeekPointer(next));
    REQUIRE(g_seen.size() == 2);
    CHECK(g_seen[1].at == MicroSeconds(4)); // the new run's clock, not the old one's
    Simulator::Destroy();
}
