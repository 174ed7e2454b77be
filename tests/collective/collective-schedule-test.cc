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
    // One slow edge (rank 2 to 3 at half the bandwidth) costs once per turn of the ring, on
    // the chain of 6 consecutive edges that crosses it twice: 4 fast and 2 slow edges.
    auto slow = [&](uint32_t x, uint32_t) {
        return CollectiveTransport::PathCost{a, x == 2 ? b / 2 : b};
    };
    const double fast = a.GetSeconds() + s / 4.0 / b;
    const double slowEdge = a.GetSeconds() + s / 4.0 / (b / 2);
    CHECK(CollectiveAnalyticalTime(CollectiveOp::AllReduce, CollectiveAlgorithm::Ring, 4, s, slow)
              .GetSeconds() == doctest::Approx(4 * fast + 2 * slowEdge).epsilon(1e-9));
    // All-gather's 3 steps: the dearest 3 consecutive edges hold the slow one once.
    CHECK(CollectiveAnalyticalTime(CollectiveOp::AllGather, CollectiveAlgorithm::Ring, 4, s, slow)
              .GetSeconds() == doctest::Approx(2 * fast + slowEdge).epsilon(1e-9));
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
