// Collective schedules without a fabric: every operation and algorithm, run in random
// interleavings that respect only the schedule's own dependencies, must leave every rank
// holding exactly what the operation says and receive the bytes the algorithm moves;
// a schedule with a dependency or a transfer too few or too many must be caught.
#include "ns3/collective-cost-model.h"
#include "ns3/collective-schedule.h"
#include "ns3/collective.h"
#include "ns3/simulator.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <random>
#include <set>
#include <stdexcept>

using namespace ns3;

namespace
{

/**
 * Runs \p s as a fabric might: any transfer whose dependencies have arrived may be sent,
 * any sent one may arrive, in an order the seed picks. Returns the first error, or "".
 */
std::string
RunShuffled(const CollectiveSchedule& s, uint32_t seed, std::vector<uint64_t>* received = nullptr)
{
    std::mt19937 rng(seed);
    CollectiveHoldings held(s);
    const size_t n = s.transfers.size();
    std::vector<uint32_t> waiting(n);
    std::vector<std::vector<uint32_t>> dependents(n);
    std::vector<uint32_t> ready;
    for (uint32_t i = 0; i < n; ++i)
    {
        waiting[i] = static_cast<uint32_t>(s.transfers[i].after.size());
        for (uint32_t a : s.transfers[i].after)
        {
            dependents[a].push_back(i);
        }
        if (waiting[i] == 0)
        {
            ready.push_back(i);
        }
    }
    std::vector<std::pair<uint32_t, std::vector<RankSet>>> inFlight;
    if (received)
    {
        received->assign(s.ranks, 0);
    }
    while (!ready.empty() || !inFlight.empty())
    {
        const bool send = !ready.empty() && (inFlight.empty() || rng() % 2 == 0);
        if (send)
        {
            const size_t k = rng() % ready.size();
            const uint32_t i = ready[k];
            ready.erase(ready.begin() + static_cast<long>(k));
            inFlight.emplace_back(i, held.Snapshot(s.transfers[i]));
            continue;
        }
        const size_t k = rng() % inFlight.size();
        const auto [i, sent] = inFlight[k];
        inFlight.erase(inFlight.begin() + static_cast<long>(k));
        const std::string wrong = held.Apply(s.transfers[i], sent);
        if (!wrong.empty())
        {
            return wrong;
        }
        if (received)
        {
            (*received)[s.transfers[i].to] += s.transfers[i].bytes;
        }
        for (uint32_t d : dependents[i])
        {
            if (--waiting[d] == 0)
            {
                ready.push_back(d);
            }
        }
    }
    return held.Check();
}

struct Case
{
    CollectiveOp op;
    CollectiveAlgorithm algorithm;
};

const Case kCases[] = {
    {CollectiveOp::AllReduce, CollectiveAlgorithm::Ring},
    {CollectiveOp::ReduceScatter, CollectiveAlgorithm::Ring},
    {CollectiveOp::AllGather, CollectiveAlgorithm::Ring},
    {CollectiveOp::AllReduce, CollectiveAlgorithm::HalvingDoubling},
    {CollectiveOp::ReduceScatter, CollectiveAlgorithm::HalvingDoubling},
    {CollectiveOp::AllGather, CollectiveAlgorithm::HalvingDoubling},
    {CollectiveOp::AllToAll, CollectiveAlgorithm::Direct},
};

} // namespace

TEST_CASE("every operation and algorithm leaves each rank what it must, in any order allowed")
{
    for (const auto& c : kCases)
    {
        for (uint32_t n : {2u, 3u, 4u, 5u, 8u, 16u, 70u})
        {
            const bool hd = c.algorithm == CollectiveAlgorithm::HalvingDoubling;
            if (hd && (n & (n - 1)) != 0)
            {
                continue;
            }
            const uint64_t bytes = 1000ull * n;
            const auto s = CollectiveSchedule::Build(c.op, c.algorithm, n, bytes);
            const std::string opName = CollectiveOpName(c.op);
            CAPTURE(opName);
            const std::string algName = CollectiveAlgorithmName(c.algorithm);
            CAPTURE(algName);
            CAPTURE(n);
            for (uint32_t seed = 1; seed <= 3; ++seed)
            {
                std::vector<uint64_t> received;
                CHECK(RunShuffled(s, seed, &received) == "");
                // What each rank receives: all-reduce moves 2(n-1)/n of the buffer into
                // every rank, the others (n-1)/n, whichever the algorithm.
                const uint64_t want =
                    (c.op == CollectiveOp::AllReduce ? 2 : 1) * (n - 1) * (bytes / n);
                for (uint32_t r = 0; r < n; ++r)
                {
                    CHECK(received[r] == want);
                }
            }
            const uint32_t m = static_cast<uint32_t>(std::log2(n));
            const uint32_t steps = c.algorithm == CollectiveAlgorithm::Direct ? 1 : hd ? m : n - 1;
            CHECK(s.steps == (c.op == CollectiveOp::AllReduce ? 2 : 1) * steps);
        }
    }
}

TEST_CASE("double binary tree: every rank a leaf of at most one tree, the all-reduce complete")
{
    for (uint32_t n : {2u, 3u, 5u, 8u, 16u, 24u})
    {
        CAPTURE(n);
        const auto trees = CollectiveTrees(n);
        std::vector<uint32_t> leafOf(n, 0);
        for (const auto& parent : trees)
        {
            std::vector<uint32_t> kids(n, 0);
            uint32_t roots = 0;
            for (uint32_t r = 0; r < n; ++r)
            {
                roots += parent[r] < 0 ? 1 : 0;
                if (parent[r] >= 0)
                {
                    ++kids[parent[r]];
                    // Every rank reaches the root.
                    int64_t x = r;
                    for (uint32_t hops = 0; parent[x] >= 0 && hops <= n; ++hops)
                    {
                        x = parent[x];
                    }
                    CHECK(parent[x] < 0);
                }
            }
            CHECK(roots == 1);
            for (uint32_t r = 0; r < n; ++r)
            {
                CHECK(kids[r] <= 2); // binary
                leafOf[r] += kids[r] == 0 ? 1 : 0;
            }
        }
        if (n % 2 == 0)
        {
            CHECK(std::count(leafOf.begin(), leafOf.end(), 2) == 0); // complementary
        }
        const uint64_t bytes = 1024ull * n;
        const auto s =
            CollectiveSchedule::Build(CollectiveOp::AllReduce, CollectiveAlgorithm::Tree, n, bytes);
        CHECK(s.split == 16);
        for (uint32_t seed = 1; seed <= 3; ++seed)
        {
            CHECK(RunShuffled(s, seed) == "");
        }
    }
    CHECK(CollectiveTrees(8)[0] == std::vector<int64_t>{1, 3, 1, 7, 5, 3, 5, -1});
    // 9 bytes on 3 ranks cut into one piece per rank, but not into two halves: refused
    // rather than a schedule that moves 8 of them.
    CHECK_THROWS_WITH_AS(
        CollectiveSchedule::Build(CollectiveOp::AllReduce, CollectiveAlgorithm::Tree, 3, 9),
        "tree halves the buffer between its two trees: 9 bytes do not halve (they are not "
        "padded)",
        std::invalid_argument);
    // Analytical: 2 x 3 hops of the first chunk, then 15 more paced by a rank that sends
    // one piece up and two down in one tree and one up in the other: 4 per chunk.
    const Time a = MicroSeconds(1);
    const double bw = 10e9;
    auto cost = [&](uint32_t, uint32_t) { return CollectiveTransport::PathCost{a, bw}; };
    const uint64_t big = 32 << 20;
    const double p = big / 32.0;
    CHECK(CollectiveAnalyticalTime(CollectiveOp::AllReduce, CollectiveAlgorithm::Tree, 8, big, cost)
              .GetSeconds() ==
          doctest::Approx(6 * (a.GetSeconds() + p / bw) + 15 * 4 * p / bw).epsilon(1e-9));
}

TEST_CASE("broadcast, reduce and send-recv: the root's data everywhere, everyone's at the root")
{
    using Op = CollectiveOp;
    for (uint32_t n : {2u, 3u, 8u})
    {
        const uint64_t bytes = 4096ull * n;
        const auto b =
            CollectiveSchedule::Build(Op::Broadcast, CollectiveAlgorithm::Ring, n, bytes);
        const auto r = CollectiveSchedule::Build(Op::Reduce, CollectiveAlgorithm::Ring, n, bytes);
        CAPTURE(n);
        for (uint32_t seed = 1; seed <= 3; ++seed)
        {
            std::vector<uint64_t> received;
            CHECK(RunShuffled(b, seed, &received) == "");
            CHECK(received[0] == 0); // the root sends, every other rank gets the whole buffer
            for (uint32_t k = 1; k < n; ++k)
            {
                CHECK(received[k] == bytes);
            }
            CHECK(RunShuffled(r, seed, &received) == "");
            CHECK(received[n - 1] == 0); // the chain's far end only sends
            for (uint32_t k = 0; k + 1 < n; ++k)
            {
                CHECK(received[k] == bytes);
            }
        }
        // 8 pieces per rank follow one another down the n-1 hops.
        CHECK(b.pieces == 8 * n);
        CHECK(b.steps == 8 * n + n - 2);
    }
    const auto sr = CollectiveSchedule::Build(Op::SendRecv, CollectiveAlgorithm::Direct, 2, 1000);
    REQUIRE(sr.transfers.size() == 1);
    CHECK(sr.transfers[0].bytes == 1000);
    CHECK(RunShuffled(sr, 1) == "");
    CHECK(CollectiveBusBwFactor(Op::Broadcast, 8) == 1);
    CHECK(CollectiveBusBwFactor(Op::SendRecv, 2) == 1);
    CHECK(CollectiveDefaultAlgorithm(Op::SendRecv) == CollectiveAlgorithm::Direct);
    CHECK(CollectiveDefaultAlgorithm(Op::Reduce) == CollectiveAlgorithm::Ring);

    // Analytical: the first piece over every hop, the other m-1 a hop behind.
    const Time a = MicroSeconds(2);
    const double bw = 10e9;
    auto cost = [&](uint32_t, uint32_t) { return CollectiveTransport::PathCost{a, bw}; };
    const uint64_t s = 8 << 20; // 8 ranks x 8 pieces: 131072 bytes each
    const double hop = a.GetSeconds() + s / 64.0 / bw;
    CHECK(CollectiveAnalyticalTime(Op::Broadcast, CollectiveAlgorithm::Ring, 8, s, cost)
              .GetSeconds() == doctest::Approx((7 + 63) * hop).epsilon(1e-9));
    CHECK(CollectiveAnalyticalTime(Op::SendRecv, CollectiveAlgorithm::Direct, 2, s, cost)
              .GetSeconds() == doctest::Approx(a.GetSeconds() + s / bw).epsilon(1e-9));

    auto refused = [](Op op, CollectiveAlgorithm alg, uint32_t n) {
        try
        {
            CollectiveSchedule::Build(op, alg, n, 1024 * n);
        }
        catch (const std::invalid_argument& e)
        {
            return std::string(e.what());
        }
        return std::string();
    };
    CHECK(refused(Op::SendRecv, CollectiveAlgorithm::Direct, 3)
              .find("send-recv is between 2 ranks") == 0);
    CHECK(refused(Op::Broadcast, CollectiveAlgorithm::HalvingDoubling, 4)
              .find("broadcast has no halving-doubling algorithm") == 0);
}

TEST_CASE("a missing dependency, a lost transfer or a repeated one is caught")
{
    const auto good =
        CollectiveSchedule::Build(CollectiveOp::AllReduce, CollectiveAlgorithm::Ring, 6, 6000);
    // Without dependencies a rank may pass a piece on before its predecessor's part is
    // in: some seed must expose it.
    auto loose = good;
    for (auto& t : loose.transfers)
    {
        t.after.clear();
    }
    bool caught = false;
    for (uint32_t seed = 1; seed <= 20 && !caught; ++seed)
    {
        caught = RunShuffled(loose, seed) != "";
    }
    CHECK(caught);

    auto lost = good;
    lost.transfers.pop_back(); // the last all-gather transfer into rank 0
    CHECK(RunShuffled(lost, 1).find("rank 0 ends with piece") == 0);

    auto twice =
        CollectiveSchedule::Build(CollectiveOp::AllGather, CollectiveAlgorithm::Ring, 4, 4000);
    twice.transfers.push_back(twice.transfers.back());
    twice.transfers.back().after = {static_cast<uint32_t>(twice.transfers.size() - 2)};
    CHECK(RunShuffled(twice, 1).find("a duplicate") != std::string::npos);

    auto summedTwice =
        CollectiveSchedule::Build(CollectiveOp::ReduceScatter, CollectiveAlgorithm::Ring, 3, 3000);
    summedTwice.transfers.push_back(summedTwice.transfers.front());
    CHECK(RunShuffled(summedTwice, 1).find("summed twice") != std::string::npos);
}

TEST_CASE("NVLS: sums in the switch and multicasts leave each rank what it must")
{
    for (CollectiveOp op :
         {CollectiveOp::AllReduce, CollectiveOp::ReduceScatter, CollectiveOp::AllGather})
    {
        for (uint32_t n : {2u, 3u, 8u, 16u, 70u})
        {
            const uint64_t bytes = 64000ull * n;
            const auto s = CollectiveSchedule::Build(op, CollectiveAlgorithm::Nvls, n, bytes);
            const std::string opName = CollectiveOpName(op);
            CAPTURE(opName);
            CAPTURE(n);
            CHECK(s.split == 32);
            for (uint32_t seed = 1; seed <= 3; ++seed)
            {
                CHECK(RunShuffled(s, seed) == "");
            }
            // Into each rank: its sums (S/n), and every multicast, its own too (S).
            std::vector<uint64_t> in(n, 0);
            for (const auto& t : s.transfers)
            {
                if (t.via == CollectiveVia::SwitchMulticast)
                {
                    CHECK(t.group.size() == n);
                    for (uint32_t r : t.group)
                    {
                        in[r] += t.bytes;
                    }
                }
                else
                {
                    CHECK(t.via == CollectiveVia::SwitchReduce);
                    in[t.to] += t.bytes;
                }
            }
            const uint64_t want = (op != CollectiveOp::AllGather ? bytes / n : 0) +
                                  (op != CollectiveOp::ReduceScatter ? bytes : 0);
            for (uint32_t r = 0; r < n; ++r)
            {
                CHECK(in[r] == want);
            }
        }
    }
    // A multicast that does not wait for its sum sends a rank's own data only.
    auto early =
        CollectiveSchedule::Build(CollectiveOp::AllReduce, CollectiveAlgorithm::Nvls, 4, 4 << 10);
    for (auto& t : early.transfers)
    {
        t.after.clear();
    }
    bool caught = false;
    for (uint32_t seed = 1; seed <= 20 && !caught; ++seed)
    {
        caught = RunShuffled(early, seed) != "";
    }
    CHECK(caught);
    // A sum that takes a rank twice is wrong before it is sent.
    auto twice =
        CollectiveSchedule::Build(CollectiveOp::AllReduce, CollectiveAlgorithm::Nvls, 4, 4 << 10);
    CollectiveHoldings held(twice);
    auto sum = twice.transfers.front();
    sum.group.push_back(sum.group.front());
    std::string wrong;
    held.Snapshot(sum, &wrong);
    CHECK(wrong.find("summed twice") != std::string::npos);
    // NVLS has no all-to-all, broadcast or send-recv.
    CHECK_THROWS_WITH_AS(
        CollectiveSchedule::Build(CollectiveOp::AllToAll, CollectiveAlgorithm::Nvls, 4, 4096),
        doctest::Contains("all-to-all has no nvls algorithm"), std::invalid_argument);
}

TEST_CASE("impossible collectives are refused in words")
{
    auto refused = [](CollectiveOp op, CollectiveAlgorithm a, uint32_t n, uint64_t bytes) {
        try
        {
            CollectiveSchedule::Build(op, a, n, bytes);
        }
        catch (const std::invalid_argument& e)
        {
            return std::string(e.what());
        }
        return std::string();
    };
    using Op = CollectiveOp;
    using Alg = CollectiveAlgorithm;
    CHECK(refused(Op::AllReduce, Alg::Ring, 1, 100).find("at least 2 ranks") != std::string::npos);
    CHECK(refused(Op::AllReduce, Alg::Ring, 3, 100).find("100 bytes do not cut into 3") == 0);
    CHECK(refused(Op::AllReduce, Alg::HalvingDoubling, 6, 600).find("power of 2") !=
          std::string::npos);
    CHECK(refused(Op::AllToAll, Alg::Ring, 4, 400).find("all-to-all has no ring") == 0);
    CHECK(refused(Op::AllReduce, Alg::Direct, 4, 400).find("all-reduce has no direct") == 0);
    CHECK(refused(Op::AllReduce, Alg::Ring, 4, 400).empty());
}

TEST_CASE("analytical times are the alpha-beta closed forms")
{
    const Time a = MicroSeconds(3);
    const double b = 10e9;
    auto cost = [&](uint32_t, uint32_t) { return CollectiveTransport::PathCost{a, b}; };
    const uint64_t s = 64 << 20;
    for (uint32_t n : {2u, 4u, 8u})
    {
        const double bw = static_cast<double>(s) / b;
        const double alpha = a.GetSeconds();
        auto near = [](Time t, double want) {
            return std::abs(t.GetSeconds() - want) <= 1e-11; // the picosecond grid
        };
        CHECK(near(CollectiveAnalyticalTime(CollectiveOp::AllReduce, CollectiveAlgorithm::Ring, n,
                                            s, cost),
                   2.0 * (n - 1) / n * bw + 2.0 * (n - 1) * alpha));
        CHECK(near(CollectiveAnalyticalTime(CollectiveOp::AllGather, CollectiveAlgorithm::Ring, n,
                                            s, cost),
                   1.0 * (n - 1) / n * bw + (n - 1) * alpha));
        CHECK(near(CollectiveAnalyticalTime(CollectiveOp::AllReduce,
                                            CollectiveAlgorithm::HalvingDoubling, n, s, cost),
                   2.0 * (n - 1) / n * bw + 2 * std::log2(n) * alpha));
        CHECK(near(CollectiveAnalyticalTime(CollectiveOp::AllToAll, CollectiveAlgorithm::Direct, n,
                                            s, cost),
                   1.0 * (n - 1) / n * bw + alpha));
    }
    // One slow edge (rank 2 to 3 at half the bandwidth) carries a piece at every step, and
    // its sends queue: all-reduce's 6 pieces back to back at half rate, and one alpha,
    // more than the chain of 6 consecutive edges that crosses it twice.
    auto slow = [&](uint32_t x, uint32_t) {
        return CollectiveTransport::PathCost{a, x == 2 ? b / 2 : b};
    };
    const double queued = a.GetSeconds() + 6 * (s / 4.0) / (b / 2);
    CHECK(CollectiveAnalyticalTime(CollectiveOp::AllReduce, CollectiveAlgorithm::Ring, 4, s, slow)
              .GetSeconds() == doctest::Approx(queued).epsilon(1e-9));
    // With a long latency instead, the chain wins: 4 fast edges and the slow one twice.
    const Time far = MilliSeconds(10);
    auto late = [&](uint32_t x, uint32_t) {
        return CollectiveTransport::PathCost{x == 2 ? far : a, b};
    };
    const double fast = a.GetSeconds() + s / 4.0 / b;
    const double lateEdge = far.GetSeconds() + s / 4.0 / b;
    CHECK(CollectiveAnalyticalTime(CollectiveOp::AllReduce, CollectiveAlgorithm::Ring, 4, s, late)
              .GetSeconds() == doctest::Approx(4 * fast + 2 * lateEdge).epsilon(1e-9));
}

namespace
{

/// \p servers servers of \p g ranks each, numbered server by server.
CollectiveLayout
Servers(uint32_t servers, uint32_t g)
{
    CollectiveLayout l;
    for (uint32_t s = 0; s < servers; ++s)
    {
        l.servers.emplace_back();
        for (uint32_t j = 0; j < g; ++j)
        {
            l.servers.back().push_back(s * g + j);
        }
    }
    return l;
}

} // namespace

TEST_CASE("rings on a server whose links join some pairs follow the links (dgx-1's cube mesh)")
{
    // dgx-1: quads 0-3 and 4-7 fully linked, and i <-> i+4 (docs/nvlink.md).
    const auto linked = [](uint32_t a, uint32_t b) {
        return a != b && (a / 4 == b / 4 || a % 4 == b % 4);
    };
    CollectiveLayout layout;
    layout.direct.assign(8, std::vector<bool>(8, false));
    for (uint32_t a = 0; a < 8; ++a)
    {
        for (uint32_t b = 0; b < 8; ++b)
        {
            layout.direct[a][b] = linked(a, b);
        }
    }
    // The ranks in order cross unlinked pairs (3 -> 4, 7 -> 0); the search finds two
    // cycles over the 16 links that share none, each run both ways: every link carries
    // one ring each way.
    const auto orders = CollectiveRingOrders(8, layout, 64);
    REQUIRE(orders.size() == 4);
    std::set<std::pair<uint32_t, uint32_t>> used;
    for (const auto& order : orders)
    {
        REQUIRE(order.size() == 8);
        CHECK(std::set<uint32_t>(order.begin(), order.end()).size() == 8);
        for (size_t i = 0; i < order.size(); ++i)
        {
            const uint32_t from = order[i];
            const uint32_t to = order[(i + 1) % order.size()];
            CHECK_MESSAGE(linked(from, to), from << " -> " << to);
            CHECK(used.insert({from, to}).second); // no way of a link taken twice
        }
    }
    CHECK(used.size() == 32);
    CHECK(CollectiveSplitOf(CollectiveOp::AllReduce, CollectiveAlgorithm::Ring, 8, 1 << 20,
                            layout) == 4);
    CHECK(CollectiveRingOrders(8, layout, 2).size() == 2);
    // A chain of links has no cycle: the ranks in order (PCIe carries what NVLink cannot).
    CollectiveLayout chain;
    chain.direct.assign(4, std::vector<bool>(4, false));
    for (uint32_t a = 0; a + 1 < 4; ++a)
    {
        chain.direct[a][a + 1] = chain.direct[a + 1][a] = true;
    }
    CHECK(CollectiveRingOrders(4, chain, 8) == std::vector<std::vector<uint32_t>>{{0, 1, 2, 3}});
    // dgx-1's gpu0, gpu5, gpu1, gpu6 (ranks 0..3): links 0-2, 1-2, 1-3 and no cycle; the
    // ring that leaves the links once (gpu6 -> gpu0 over PCIe), not the rank order's three.
    CollectiveLayout some;
    some.direct.assign(4, std::vector<bool>(4, false));
    for (const auto& [a, b] : {std::pair{0, 2}, std::pair{1, 2}, std::pair{1, 3}})
    {
        some.direct[a][b] = some.direct[b][a] = true;
    }
    const auto fallback = CollectiveRingOrders(4, some, 8);
    REQUIRE(fallback.size() == 1);
    uint32_t unlinked = 0;
    for (size_t i = 0; i < 4; ++i)
    {
        unlinked += some.direct[fallback[0][i]][fallback[0][(i + 1) % 4]] ? 0 : 1;
    }
    CHECK(unlinked == 1);
    CHECK(CollectiveSplitOf(CollectiveOp::AllReduce, CollectiveAlgorithm::Ring, 4, 1 << 20,
                            chain) == 1);
    // The analytical ring: each of the 4 rings on a link of its own, the same time as
    // one ring of a quarter of the bytes.
    const auto cost = [&linked](uint32_t a, uint32_t b) {
        return CollectiveTransport::PathCost{MicroSeconds(1), linked(a, b) ? 18e9 : 14e9};
    };
    const Time four = CollectiveAnalyticalTime(CollectiveOp::AllReduce, CollectiveAlgorithm::Ring,
                                               8, 64 << 20, cost, layout);
    const double piece = (64 << 20) / 8.0 / 4.0;
    CHECK(four.GetSeconds() == doctest::Approx(14 * (1e-6 + piece / 18e9)).epsilon(1e-6));
}

TEST_CASE("rail-following rings: one channel per rail, every crossing on one rail")
{
    const auto layout = Servers(4, 8);
    const auto orders = CollectiveRingOrders(32, layout, 8);
    REQUIRE(orders.size() == 8);
    std::vector<uint32_t> outOfServer(32, 0);
    for (const auto& order : orders)
    {
        std::vector<uint32_t> seen(32, 0);
        for (size_t i = 0; i < order.size(); ++i)
        {
            ++seen[order[i]];
            const uint32_t from = order[i];
            const uint32_t to = order[(i + 1) % order.size()];
            if (from / 8 != to / 8)
            {
                CHECK(from % 8 == to % 8); // the same GPU index: the same rail
                ++outOfServer[from];
            }
        }
        CHECK(std::count(seen.begin(), seen.end(), 1) == 32); // each rank once
    }
    // Each GPU's NIC carries one channel out: the rails share the load.
    CHECK(std::count(outOfServer.begin(), outOfServer.end(), 1) == 32);
    // Hosts (no servers), and a server whose bytes do not cut into 8 channels.
    CHECK(CollectiveRingOrders(5, {}, 8).size() == 1);
    CHECK(CollectiveSplit(16 * 8 * 100, 16, 8) == 8);
    CHECK(CollectiveSplit(16 * 3, 16, 8) == 3);
    CHECK(CollectiveSplit(16 * 7 * 11, 16, 8) == 7);
}

TEST_CASE("rings over servers and hierarchical all-reduce leave each rank what it must")
{
    struct Case
    {
        CollectiveOp op;
        CollectiveAlgorithm algorithm;
        uint32_t servers;
        uint32_t g;
    };
    using Op = CollectiveOp;
    using Alg = CollectiveAlgorithm;
    for (const Case c :
         {Case{Op::AllReduce, Alg::Ring, 2, 8}, Case{Op::AllGather, Alg::Ring, 3, 4},
          Case{Op::ReduceScatter, Alg::Ring, 2, 4}, Case{Op::AllReduce, Alg::Hierarchical, 2, 8},
          Case{Op::AllReduce, Alg::Hierarchical, 4, 8},
          Case{Op::AllReduce, Alg::Hierarchical, 3, 1},
          Case{Op::AllReduce, Alg::Hierarchical, 2, 3}})
    {
        auto layout = Servers(c.servers, c.g);
        layout.chunks = 4;
        const uint32_t n = c.servers * c.g;
        const uint64_t bytes = 4096ull * n;
        const auto s = CollectiveSchedule::Build(c.op, c.algorithm, n, bytes, layout);
        CAPTURE(n);
        CAPTURE(c.g);
        const bool hier = c.algorithm == Alg::Hierarchical;
        CHECK(s.split == (hier ? 4 : c.g));
        for (uint32_t seed = 1; seed <= 3; ++seed)
        {
            std::vector<uint64_t> received;
            CHECK(RunShuffled(s, seed, &received) == "");
            const uint64_t ring = (c.op == Op::AllReduce ? 2 : 1) * (n - 1) * (bytes / n);
            for (uint32_t r = 0; r < n; ++r)
            {
                if (!hier)
                {
                    CHECK(received[r] == ring); // the ring's bytes, whatever the channels
                    continue;
                }
                // Inside: 2 (g-1)/g of the buffer; among servers 2 (N-1)/N of its 1/g.
                CHECK(received[r] * c.g * c.servers ==
                      2 * bytes * ((c.g - 1) * c.servers + (c.servers - 1)));
            }
        }
        if (hier)
        {
            // A rank starts chunk 1 once chunk 0 has reached it: a pipeline, chunk by chunk.
            const size_t per = s.transfers.size() / 4;
            const auto& first = s.transfers[per];
            CHECK(std::any_of(first.after.begin(), first.after.end(), [&](uint32_t i) {
                return i < per && s.transfers[i].to == first.from;
            }));
        }
    }
    auto refused = [](Op op, const CollectiveLayout& l, uint32_t n) {
        try
        {
            CollectiveSchedule::Build(op, Alg::Hierarchical, n, 1024 * n, l);
        }
        catch (const std::invalid_argument& e)
        {
            return std::string(e.what());
        }
        return std::string();
    };
    CHECK(refused(Op::AllReduce, {}, 8).find("at least 2 servers") != std::string::npos);
    CollectiveLayout uneven;
    uneven.servers = {{0, 1, 2}, {3, 4}};
    CHECK(refused(Op::AllReduce, uneven, 5).find("as many on each") != std::string::npos);
    CHECK(refused(Op::AllGather, Servers(2, 2), 4).find("all-reduce algorithm") !=
          std::string::npos);
    CollectiveLayout twice;
    twice.servers = {{0, 1}, {1, 2}};
    CHECK(refused(Op::AllReduce, twice, 4).find("places rank 1 twice") != std::string::npos);
}

TEST_CASE("analytical time of rail rings and hierarchical all-reduce")
{
    // 2 servers of 4: inside 100 GB/s per GPU, out 10 GB/s per rail, no alpha.
    const auto layout = Servers(2, 4);
    const double in = 100e9;
    const double out = 10e9;
    auto cost = [&](uint32_t x, uint32_t y) {
        return CollectiveTransport::PathCost{Time(0), x / 4 == y / 4 ? in : out};
    };
    const uint64_t s = 64 << 20;
    // Rails: 4 channels over S/4 each; each GPU sends 3 channels inside (sharing 100 GB/s)
    // and 1 out: the out edge sets the pace, 14 steps of S/(4 * 8) at 10 GB/s.
    CHECK(CollectiveAnalyticalTime(CollectiveOp::AllReduce, CollectiveAlgorithm::Ring, 8, s, cost,
                                   layout)
              .GetSeconds() == doctest::Approx(14 * (s / 32.0) / out).epsilon(1e-9));
    // Hierarchical in 1 chunk: 3 steps of S/4 inside, 2 of S/8 on the rails, 3 inside.
    auto one = layout;
    one.chunks = 1;
    const double rs = 3 * (s / 4.0) / in;
    const double ar = 2 * (s / 8.0) / out;
    CHECK(CollectiveAnalyticalTime(CollectiveOp::AllReduce, CollectiveAlgorithm::Hierarchical, 8, s,
                                   cost, one)
              .GetSeconds() == doctest::Approx(2 * rs + ar).epsilon(1e-9));
    // In 8 chunks the rails' share of each chunk paces the pipeline.
    CHECK(CollectiveAnalyticalTime(CollectiveOp::AllReduce, CollectiveAlgorithm::Hierarchical, 8, s,
                                   cost, layout)
              .GetSeconds() == doctest::Approx((2 * rs + ar) / 8 + 7 * ar / 8).epsilon(1e-9));
}

namespace
{

/// A transport that moves bytes at 1 GB/s between any two ranks, and fails the sends
/// it is told to.
class FakeTransport : public CollectiveTransport
{
  public:
    uint32_t GetNRanks() const override { return 4; }
    void Send(uint32_t, uint32_t, uint64_t bytes, Done done) override
    {
        const bool ok = ++sends != failAt;
        Simulator::Schedule(NanoSeconds(bytes), [done, ok] { done(ok, ok ? "" : "cable cut"); });
    }
    PathCost GetPathCost(uint32_t, uint32_t) const override { return {Time(0), 1e9}; }
    uint32_t sends{0};
    uint32_t failAt{0};

  protected:
    std::string DefaultRankName(uint32_t r) const override { return "r" + std::to_string(r); }
};

} // namespace

TEST_CASE("a collective completes only when every transfer arrived; a failed one fails it")
{
    for (uint32_t failAt : {0u, 5u})
    {
        Ptr<FakeTransport> t = Create<FakeTransport>();
        t->failAt = failAt;
        Ptr<Collective> c = CreateObject<Collective>();
        c->SetTransport(t);
        c->SetSchedule(
            CollectiveSchedule::Build(CollectiveOp::AllReduce, CollectiveAlgorithm::Ring, 4, 4000));
        uint32_t ends = 0;
        c->SetDoneCallback(MakeCallback(+[](uint32_t* n, Ptr<Collective>) { ++*n; }).Bind(&ends));
        Simulator::Schedule(MicroSeconds(1), &Collective::Start, c);
        Simulator::Run();
        CHECK(ends == 1);
        if (failAt == 0)
        {
            CHECK(c->GetState() == Collective::State::Completed);
            // 6 steps of 1000 bytes at 1 ns per byte, one after another.
            CHECK(c->GetDuration() == MicroSeconds(6));
            CHECK(c->GetStartTime() == MicroSeconds(1));
            CHECK(c->GetBytesReceived() == std::vector<uint64_t>(4, 6000));
        }
        else
        {
            CHECK(c->GetState() == Collective::State::Failed);
            CHECK(c->GetFailure().find("failed: cable cut") != std::string::npos);
        }
        c->Dispose();
        Simulator::Destroy();
    }
}

TEST_CASE("a collective's progress: the share of its transfers arrived, 0 to 1")
{
    Ptr<FakeTransport> t = Create<FakeTransport>();
    Ptr<Collective> c = CreateObject<Collective>();
    c->SetTransport(t);
    c->SetSchedule(
        CollectiveSchedule::Build(CollectiveOp::AllReduce, CollectiveAlgorithm::Ring, 4, 4000));
    CHECK(c->GetProgress() == 0.0);
    // 6 steps of 4 transfers of 1000 bytes, 1 us each, from 1 us: half arrived at 4.5 us.
    std::vector<double> seen;
    for (const double us : {1.5, 4.5, 6.5})
    {
        Simulator::Schedule(NanoSeconds(us * 1000),
                            [c, &seen] { seen.push_back(c->GetProgress()); });
    }
    Simulator::Schedule(MicroSeconds(1), &Collective::Start, c);
    Simulator::Run();
    CHECK(seen == std::vector<double>{0.0, 0.5, 20.0 / 24});
    CHECK(c->GetProgress() == 1.0);
    c->Dispose();
    Simulator::Destroy();
}

TEST_CASE("reductions take ReduceRate's time on the receiving rank")
{
    Ptr<FakeTransport> t = Create<FakeTransport>();
    Ptr<Collective> c = CreateObject<Collective>();
    c->SetAttribute("ReduceRate", DataRateValue(DataRate("8Gbps"))); // 1 byte per ns
    c->SetTransport(t);
    c->SetSchedule(
        CollectiveSchedule::Build(CollectiveOp::AllReduce, CollectiveAlgorithm::Ring, 4, 4000));
    Simulator::ScheduleNow(&Collective::Start, c);
    Simulator::Run();
    // 3 reduce-scatter steps each 1 us of transfer and 1 us of summing, 3 all-gather steps.
    CHECK(c->GetDuration() == MicroSeconds(9));
    c->Dispose();
    Simulator::Destroy();
}
