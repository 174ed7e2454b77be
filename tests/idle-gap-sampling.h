// What the queue samplers of both fabrics are tested against: two incasts 5 ms
// apart on a star of 9 hosts, sampled every 10 us for 20 ms (2000 instants when
// sampling throughout), and the rows they wrote counted on either side of the gap.
#ifndef FABEMU_TESTS_IDLE_GAP_SAMPLING_H
#define FABEMU_TESTS_IDLE_GAP_SAMPLING_H

#include "ns3/rdma-workload.h"
#include "ns3/simulator.h"

#include <doctest/doctest.h>

#include <functional>
#include <sstream>
#include <string>

namespace fabemu_test
{

constexpr long long kGapNs = 5'000'000;
constexpr long long kGridNs = 10'000;

struct GapRows
{
    size_t flowsDone{0};
    int before{0};       ///< rows of the first incast
    int after{0};        ///< rows of the second, after the idle gap
    int offGrid{0};      ///< rows at an instant not on the 10 us grid from time 0
    int watchedBusy{-1}; ///< whether the sampler watched for frames 50 us into the first incast
    int watchedIdle{-1}; ///< and 4 ms in, in the gap (-1: not asked)
};

/// Runs the two incasts on \p fabric (a sampler already attached, writing to
/// \p rows) and counts the rows "time_ns node port class bytes"; asks \p watching,
/// if given, whether the sampler is watching for frames while busy and while idle.
inline GapRows
RunTwoIncasts(ns3::RdmaFabric& fabric, const std::ostringstream& rows,
              std::function<bool()> watching = {})
{
    using namespace ns3;
    GapRows g;
    if (watching)
    {
        Simulator::Schedule(MicroSeconds(50), [&] { g.watchedBusy = watching(); });
        Simulator::Schedule(MilliSeconds(4), [&] { g.watchedIdle = watching(); });
    }
    FlowRunner runner(fabric);
    runner.Add(workload::Incast(0, {1, 2, 3, 4, 5, 6, 7, 8}, 200'000, Time(0)));
    runner.Add(workload::Incast(0, {1, 2, 3, 4, 5, 6, 7, 8}, 200'000, NanoSeconds(kGapNs)));
    runner.Start();
    Simulator::Stop(MilliSeconds(20));
    Simulator::Run();
    g.flowsDone = runner.Records().size();
    std::istringstream lines(rows.str());
    long long t = 0;
    unsigned node = 0, port = 0, cls = 0;
    unsigned long long bytes = 0;
    while (lines >> t >> node >> port >> cls >> bytes)
    {
        (t < kGapNs ? g.before : g.after) += 1;
        g.offGrid += t % kGridNs != 0;
    }
    return g;
}

/// The checks both samplers pass: both incasts sampled, every row on the grid, and
/// far fewer samples than the 2000 of sampling throughout.
inline void
CheckSleptThroughGap(const GapRows& g, uint64_t samples, uint64_t peak)
{
    REQUIRE(g.flowsDone == 16);
    CHECK(g.before > 0);
    CHECK(g.after > 0);    // woken again by the second incast's frames
    CHECK(g.offGrid == 0); // on the grid of sampling throughout, from time 0
    CHECK(peak > 0);
    CHECK(samples < 600);
    CHECK(samples > 20);
    // The per-frame wake-up is connected only while the sampler sleeps.
    CHECK(g.watchedBusy == 0);
    CHECK(g.watchedIdle == 1);
    MESSAGE("samples taken: " << samples << ", rows " << g.before << " + " << g.after);
}

} // namespace fabemu_test

#endif
