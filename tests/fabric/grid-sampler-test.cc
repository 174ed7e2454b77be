// GridSampler's context: the samples run in the one it was given, whoever
// scheduled them (the start, a wake-up from a node's event, the sample before);
// without one, in the context of what scheduled them, as Simulator::Schedule has it.
#include "ns3/grid-sampler.h"
#include "ns3/simulator.h"

#include <doctest/doctest.h>

#include <vector>

using namespace ns3;

namespace
{

/// Samples every 10 us for 30 us (busy), then idle; a node's event (context 5) at
/// 100 us wakes it. Returns each sample's (time in us, context).
std::vector<std::pair<int64_t, uint32_t>>
SampleRun(uint32_t context)
{
    std::vector<std::pair<int64_t, uint32_t>> seen;
    GridSampler grid(
        MicroSeconds(10),
        [&] {
            seen.emplace_back(Simulator::Now().GetMicroSeconds(), Simulator::GetContext());
            return Simulator::Now() < MicroSeconds(30);
        },
        context);
    grid.Start();
    Simulator::ScheduleWithContext(5, MicroSeconds(100), [&grid] { grid.Wake(); });
    Simulator::Run();
    Simulator::Destroy();
    return seen;
}

} // namespace

TEST_CASE("a grid sampler given a context samples in it; by default in its scheduler's")
{
    using Seen = std::vector<std::pair<int64_t, uint32_t>>;
    const uint32_t observer = 0xfffffffe;
    CHECK(SampleRun(observer) ==
          Seen{{0, observer}, {10, observer}, {20, observer}, {30, observer}, {100, observer}});
    // The same instants without one; the woken sample is the node's.
    CHECK(SampleRun(Simulator::NO_CONTEXT) == Seen{{0, Simulator::NO_CONTEXT},
                                                   {10, Simulator::NO_CONTEXT},
                                                   {20, Simulator::NO_CONTEXT},
                                                   {30, Simulator::NO_CONTEXT},
                                                   {100, 5}});
}
