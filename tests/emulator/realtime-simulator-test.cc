// FabemuRealtimeSimulatorImpl under overload: a model that cannot keep up with the
// wall clock must stop taking frames from the taps while it is more than
// MaxBacklog behind, so the backlog (and the memory behind it) stays bounded.
// A pipe stands in for a tap; events that each burn more wall time than the
// simulated time between them stand in for an overloaded model. And the lag: every
// event's lateness recorded by the simulator, with no sampling event. No root needed.
#include "emulator/edge/lag-monitor.h"
#include "emulator/edge/realtime-simulator.h"

#include "ns3/boolean.h"
#include "ns3/global-value.h"
#include "ns3/simulator.h"
#include "ns3/string.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <fcntl.h>
#include <memory>
#include <mutex>
#include <thread>
#include <unistd.h>
#include <vector>

using namespace ns3;
using Clock = std::chrono::steady_clock;

namespace
{

struct Run
{
    bool read{false};            ///< the pipe's handler ran
    double lagAtReadMs{-1};      ///< how far behind the simulation was when it did
    int chainDoneBeforeRead{-1}; ///< 1: every burdened event had run before the read
    uint64_t deferredReads{0};
};

/// A new FabemuRealtimeSimulatorImpl in place of any simulator before.
Ptr<FabemuRealtimeSimulatorImpl>
FreshSimulator()
{
    Simulator::Destroy();
    GlobalValue::Bind("SimulatorImplementationType",
                      StringValue("ns3::FabemuRealtimeSimulatorImpl"));
    auto sim = DynamicCast<FabemuRealtimeSimulatorImpl>(Simulator::GetImplementation());
    REQUIRE(sim);
    return sim;
}

/// Runs the simulation until \p stop, waits for \p writer, and closes the pipe \p fds
/// whose reading end the simulation watched.
void
RunAndClosePipe(const Ptr<FabemuRealtimeSimulatorImpl>& sim, Time stop, std::thread& writer,
                const int (&fds)[2])
{
    Simulator::Stop(stop);
    Simulator::Run();
    writer.join();
    sim->Unwatch(fds[0]);
    close(fds[0]);
    close(fds[1]);
}

int gChainLeft = 0;

/// One burdened event: 1.5 ms of wall time for every 0.5 ms of simulated time.
void
Burden()
{
    const auto until = Clock::now() + std::chrono::microseconds(1500);
    while (Clock::now() < until)
    {
    }
    --gChainLeft;
}

/// 200 burdened events (100 ms simulated, 300 ms of work: the simulation falls 1 ms
/// further behind with every event); a byte arrives on a watched pipe 60 ms into
/// the run, when it is already some 40 ms behind.
Run
Overload(Time maxBacklog)
{
    const auto sim = FreshSimulator();
    sim->SetAttribute("MaxBacklog", TimeValue(maxBacklog));
    int fds[2];
    REQUIRE(pipe2(fds, O_NONBLOCK | O_CLOEXEC) == 0);
    Run r;
    sim->Watch(fds[0], [&] {
        char buf[16];
        while (read(fds[0], buf, sizeof(buf)) > 0)
        {
        }
        if (!r.read)
        {
            r.read = true;
            // Simulated time as the run has it: the wall clock's unless events are overdue.
            r.lagAtReadMs = (sim->RealtimeNow() - sim->SimulatedNow()).GetSeconds() * 1e3;
            r.chainDoneBeforeRead = gChainLeft == 0 ? 1 : 0;
        }
    });
    gChainLeft = 200;
    for (int i = 0; i < 200; ++i)
    {
        Simulator::Schedule(MicroSeconds(500) * (i + 1), &Burden);
    }
    // Simulated: well after the chain, in wall time too, even when other processes
    // preempt the burdened events and stretch the chain (seen: 0.4 s was too close on a
    // machine with two builds running).
    Simulator::Stop(Seconds(1.2));
    std::thread writer([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(60));
        (void)!write(fds[1], "x", 1);
    });
    Simulator::Run();
    writer.join();
    r.deferredReads = sim->GetDeferredReads();
    sim->Unwatch(fds[0]);
    Simulator::Destroy();
    close(fds[0]);
    close(fds[1]);
    return r;
}

} // namespace

TEST_CASE(
    "more than MaxBacklog behind, the watched descriptors wait until the backlog is worked off")
{
    const Run bounded = Overload(MilliSeconds(10));
    REQUIRE(bounded.read);
    CHECK(bounded.deferredReads > 0);
    // Read only once caught up: after the burdened events, within the bound.
    CHECK(bounded.chainDoneBeforeRead == 1);
    CHECK(bounded.lagAtReadMs <= 10.0);
}

TEST_CASE("with a bound longer than the run, the same pipe is read while far behind (what the "
          "bound prevents)")
{
    const Run unbounded = Overload(Seconds(10));
    REQUIRE(unbounded.read);
    CHECK(unbounded.deferredReads == 0);
    CHECK(unbounded.chainDoneBeforeRead == 0); // taken in the middle of the backlog
    CHECK(unbounded.lagAtReadMs > 10.0);
}

TEST_CASE(
    "LatenessRecord: exact below 16 ns, quantiles within a sixteenth above, every event counted")
{
    LatenessRecord r;
    CHECK(r.QuantileNs(0.99) == 0);
    for (int64_t v = 0; v < 16; ++v)
    {
        r.Add(v);
    }
    CHECK(r.QuantileNs(0.5) == 7);
    CHECK(r.MaxNs() == 15);
    LatenessRecord big;
    for (int64_t v = 1; v <= 100000; ++v)
    {
        big.Add(v * 1000); // 1 us .. 100 ms
    }
    big.Add(-5); // an early start counts as on time
    CHECK(big.Count() == 100001);
    CHECK(big.MaxNs() == 100'000'000);
    CHECK(big.LastNs() == 0);
    const int64_t p99 = big.QuantileNs(0.99);
    CHECK(p99 >= 99'000'000);
    CHECK(p99 <= 99'000'000 + 99'000'000 / 16);
    uint64_t total = 0;
    int64_t previous = -1;
    for (const auto& [bound, n] : big.Buckets())
    {
        CHECK(bound > previous);
        previous = bound;
        total += n;
    }
    CHECK(total == big.Count());
}

TEST_CASE("the lag is every event's lateness: an event held up by another shows it, an idle run is "
          "not woken")
{
    FreshSimulator();
    fabemu::LagMonitor lag;
    lag.Start();
    // 4 ms of work at 1 ms holds up the event due at 2 ms by some 3 ms.
    Simulator::Schedule(MilliSeconds(1), [] {
        const auto until = Clock::now() + std::chrono::milliseconds(4);
        while (Clock::now() < until)
        {
        }
    });
    Simulator::Schedule(MilliSeconds(2), [] {});
    Simulator::Stop(MilliSeconds(60)); // then 55 ms with nothing to do
    Simulator::Run();
    CHECK(Simulator::GetEventCount() == 3); // ours only: no sampling events
    const auto summary = lag.Summarize();
    CHECK(summary.measurements == 3);
    CHECK(summary.maxMs >= 2.5);
    CHECK(summary.maxMs < 50.0);
    Simulator::Destroy();
}

TEST_CASE("between events simulated time is the wall clock's, not the last event's")
{
    const auto sim = FreshSimulator();
    Simulator::Schedule(MilliSeconds(1), [] {});
    Simulator::Stop(MilliSeconds(150));
    double midRun = -1;
    double lastEvent = -1;
    std::thread reader([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(60));
        midRun = sim->SimulatedNow().GetSeconds() * 1e3;
        lastEvent = sim->Now().GetSeconds() * 1e3;
    });
    Simulator::Run();
    reader.join();
    CHECK(lastEvent == doctest::Approx(1.0)); // Now(): the one event so far
    CHECK(midRun >= 55.0);                    // idle, so not behind: the wall clock
    CHECK(midRun < 150.0);
    Simulator::Destroy();
}

TEST_CASE("a watched descriptor's reader runs model code at once, as an event of a node would")
{
    // What EdgePort does with a frame: no event of its own, the node's context, the
    // time of the read; what it schedules is the node's, and the context is restored.
    const auto sim = FreshSimulator();
    int fds[2];
    REQUIRE(pipe2(fds, O_NONBLOCK | O_CLOEXEC) == 0);
    uint32_t contextInside = 0;
    uint32_t contextAfter = 0;
    uint32_t contextOfFollowUp = 0;
    double readAtMs = -1;
    double followUpAtMs = -1;
    uint64_t eventsBeforeRead = 0;
    uint64_t eventsAfterRead = 0;
    sim->Watch(fds[0], [&] {
        char byte;
        while (read(fds[0], &byte, 1) == 1)
        {
        }
        eventsBeforeRead = Simulator::GetEventCount();
        sim->RunInContext(7, [&] {
            contextInside = Simulator::GetContext();
            readAtMs = Simulator::Now().GetSeconds() * 1e3;
            Simulator::Schedule(MicroSeconds(10), [&] {
                contextOfFollowUp = Simulator::GetContext();
                followUpAtMs = Simulator::Now().GetSeconds() * 1e3;
            });
        });
        eventsAfterRead = Simulator::GetEventCount();
        contextAfter = Simulator::GetContext();
    });
    std::thread writer([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(30));
        (void)!write(fds[1], "x", 1);
    });
    RunAndClosePipe(sim, MilliSeconds(100), writer, fds);
    CHECK(contextInside == 7);
    CHECK(contextAfter == Simulator::NO_CONTEXT);
    CHECK(contextOfFollowUp == 7);
    CHECK(eventsAfterRead == eventsBeforeRead); // ran inline, not as an event
    CHECK(readAtMs >= 25.0);                    // the wall clock's time of the read
    CHECK(readAtMs < 100.0);
    CHECK(followUpAtMs == doctest::Approx(readAtMs + 0.010).epsilon(1e-9));
    Simulator::Destroy();
}

namespace
{

/// Two frames (a byte each) written into a watched pipe 20 ms apart while the
/// simulation thread is held by an event of 1 ms that takes 60 ms of wall time, so
/// one read takes both; the reader puts each into the model with its write's moment
/// as its arrival. An event at 10 ms was due before the read, and each frame
/// schedules a follow-up 1 ms after it arrived.
struct Arrivals
{
    std::vector<Clock::time_point> written; ///< the writer's moment of each frame
    std::vector<int64_t> nowNs;             ///< Now() as each frame went in
    std::vector<int64_t> wallNs;            ///< the wall clock's now as it went in
    std::vector<Clock::time_point> readAt;  ///< the steady clock as it went in
    std::vector<int64_t> followUpNs;        ///< Now() in each frame's follow-up
    std::vector<int> order;                 ///< 1, 2: frames in; -1, -2: follow-ups
    int framesInOneRead{0};                 ///< the most frames one read took
};

Arrivals
TwoLateFrames(bool stamps)
{
    const auto sim = FreshSimulator();
    sim->SetAttribute("ArrivalStamps", BooleanValue(stamps));
    int fds[2];
    REQUIRE(pipe2(fds, O_NONBLOCK | O_CLOEXEC) == 0);
    Arrivals a;
    std::atomic<bool> held{false};
    std::mutex written;
    sim->Watch(fds[0], [&] {
        char byte;
        int inThisRead = 0;
        while (read(fds[0], &byte, 1) == 1)
        {
            const size_t k = a.nowNs.size();
            Clock::time_point at;
            {
                std::lock_guard<std::mutex> lock(written);
                at = a.written.at(k);
            }
            sim->RunInContext(7, at, [&] {
                a.order.push_back(static_cast<int>(k) + 1);
                a.nowNs.push_back(Simulator::Now().GetNanoSeconds());
                a.wallNs.push_back(sim->RealtimeNow().GetNanoSeconds());
                a.readAt.push_back(Clock::now());
                Simulator::Schedule(MilliSeconds(1), [&a, k] {
                    a.order.push_back(-static_cast<int>(k) - 1);
                    a.followUpNs.push_back(Simulator::Now().GetNanoSeconds());
                });
            });
            a.framesInOneRead = std::max(a.framesInOneRead, ++inThisRead);
        }
    });
    Simulator::Schedule(MilliSeconds(1), [&held] {
        held = true;
        const auto until = Clock::now() + std::chrono::milliseconds(60);
        while (Clock::now() < until)
        {
        }
    });
    Simulator::Schedule(MilliSeconds(10), [] {});
    std::thread writer([&] {
        while (!held)
        {
            std::this_thread::sleep_for(std::chrono::microseconds(100));
        }
        for (int k = 0; k < 2; ++k)
        {
            if (k > 0)
            {
                std::this_thread::sleep_for(std::chrono::milliseconds(20));
            }
            std::lock_guard<std::mutex> lock(written);
            a.written.push_back(Clock::now());
            (void)!write(fds[1], "x", 1);
        }
    });
    RunAndClosePipe(sim, MilliSeconds(150), writer, fds);
    Simulator::Destroy();
    return a;
}

} // namespace

TEST_CASE("a frame read late enters the model at its arrival: what was due before it runs "
          "first, and frames read together keep their spacing")
{
    const Arrivals a = TwoLateFrames(true);
    REQUIRE(a.nowNs.size() == 2);
    REQUIRE(a.followUpNs.size() == 2);
    // Held by the 60 ms event, the thread took both frames in one read (else the
    // spacing would be kept by reading them apart, and this shows nothing).
    REQUIRE(a.framesInOneRead == 2);
    // The wall clock's moment of each write on the simulation's time line.
    std::vector<int64_t> arrivalNs;
    for (size_t k = 0; k < 2; ++k)
    {
        const auto ago =
            std::chrono::duration_cast<std::chrono::nanoseconds>(a.readAt[k] - a.written[k]);
        arrivalNs.push_back(a.wallNs[k] - ago.count());
        INFO("frame " << k << ": written at " << arrivalNs[k] << " ns, in at " << a.nowNs[k]
                      << " ns, read " << ago.count() << " ns after it was written");
        CHECK(ago.count() > 1'000'000); // read late: the thread was held
    }
    // Frame 1 came before the event at 10 ms had run, which had run before the read:
    // it enters at the present, 10 ms, never before what has run.
    CHECK(a.nowNs[0] >= 10'000'000);
    CHECK(std::abs(a.nowNs[0] - std::max<int64_t>(10'000'000, arrivalNs[0])) < 50'000);
    // Frame 2 at its own moment (within the clocks' reading), 20 ms or more after the
    // first was written, though read in the same call.
    CHECK(std::abs(a.nowNs[1] - arrivalNs[1]) < 50'000);
    CHECK(a.nowNs[1] - a.nowNs[0] > 9'000'000);
    // Frame 1's follow-up, due 1 ms after it and before frame 2, ran before frame 2
    // went in, at its own time; frame 2's at its own.
    CHECK(a.order == std::vector<int>{1, -1, 2, -2});
    CHECK(a.followUpNs[0] == a.nowNs[0] + 1'000'000);
    CHECK(a.followUpNs[1] == a.nowNs[1] + 1'000'000);

    // With ArrivalStamps off, both go in at the moment of the read, after the 60 ms.
    const Arrivals off = TwoLateFrames(false);
    REQUIRE(off.nowNs.size() == 2);
    CHECK(off.nowNs[0] > 60'000'000);
    CHECK(off.nowNs[1] - off.nowNs[0] < 1'000'000);
    CHECK(off.order == std::vector<int>{1, 2, -1, -2});
}

TEST_CASE("an event that a frame's arrival runs may unwatch the very descriptor being read, and "
          "its reader finishes intact")
{
    // The thread is held past a frame's arrival; 100 events come due before it, so the
    // thread looks at the pipe after 64 of them, and the frame's RunInContext runs the
    // rest first, among them one that stops watching the pipe (as an edge that stops
    // would) and watches others. The reader that is running must not be destroyed
    // under it: it owns the only reference to `token`.
    const auto sim = FreshSimulator();
    int fds[2];
    int others[2];
    REQUIRE(pipe2(fds, O_NONBLOCK | O_CLOEXEC) == 0);
    REQUIRE(pipe2(others, O_NONBLOCK | O_CLOEXEC) == 0);
    std::atomic<bool> held{false};
    std::atomic<bool> written{false};
    Clock::time_point writtenAt;
    bool inReader = false;
    bool unwatchedInReader = false;
    int reads = 0;
    int aliveAfter = -1;
    auto token = std::make_shared<int>(7);
    std::weak_ptr<int> weak = token;
    sim->Watch(fds[0], [&, token] {
        char byte;
        while (read(fds[0], &byte, 1) == 1)
        {
            ++reads;
            inReader = true;
            sim->RunInContext(3, written ? writtenAt : Clock::now(), [] {});
            inReader = false;
            aliveAfter = weak.expired() ? 0 : *token;
        }
    });
    token.reset();
    Simulator::Schedule(MilliSeconds(1), [&held] {
        held = true;
        const auto until = Clock::now() + std::chrono::milliseconds(40);
        while (Clock::now() < until)
        {
        }
    });
    for (int i = 0; i < 100; ++i)
    {
        Simulator::Schedule(MilliSeconds(2), [] {});
    }
    Simulator::Schedule(MilliSeconds(5), [&] {
        unwatchedInReader = inReader;
        sim->Unwatch(fds[0]);
        for (int i = 0; i < 16; ++i)
        {
            sim->Watch(others[0], [] {}); // and the list is rewritten meanwhile
        }
    });
    std::thread writer([&] {
        while (!held)
        {
            std::this_thread::sleep_for(std::chrono::microseconds(100));
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(15));
        writtenAt = Clock::now();
        written = true;
        (void)!write(fds[1], "x", 1);
    });
    RunAndClosePipe(sim, MilliSeconds(100), writer, fds);
    sim->Unwatch(others[0]);
    close(others[0]);
    close(others[1]);
    Simulator::Destroy();
    REQUIRE(reads == 1);
    REQUIRE(unwatchedInReader); // else this case shows nothing
    CHECK(aliveAfter == 7);
    CHECK(weak.expired()); // and released once it had returned
}

TEST_CASE("the taps are looked at between events only in a long run of events with no wait, "
          "since every wait looks at them too")
{
    // Events 300 us apart: a sleep before each, which looks, so no extra look. (A
    // look costs a system call and flushes the edges' queued frames, splitting their
    // batches: counting events across waits made one every 64 events.)
    const auto sim = FreshSimulator();
    int fds[2];
    REQUIRE(pipe2(fds, O_NONBLOCK | O_CLOEXEC) == 0);
    sim->Watch(fds[0], [] {});
    for (int i = 1; i <= 200; ++i)
    {
        Simulator::Schedule(MicroSeconds(300) * i, [] {});
    }
    Simulator::Stop(MilliSeconds(61));
    Simulator::Run();
    CHECK(sim->GetSleeps() >= 100); // most: a late wake-up may find the next one due
    CHECK(sim->GetLooks() == 0);
    // 1,000 events due at one instant: a look after every 64 of them.
    for (int i = 0; i < 1000; ++i)
    {
        Simulator::Schedule(MilliSeconds(1), [] {});
    }
    Simulator::Stop(MilliSeconds(5));
    Simulator::Run();
    CHECK(sim->GetLooks() == 1000 / (FabemuRealtimeSimulatorImpl::kEventsPerLook + 1));
    sim->Unwatch(fds[0]);
    close(fds[0]);
    close(fds[1]);
    Simulator::Destroy();
}

namespace
{

/// An observer's chain: a sample every millisecond, each noting when it ran.
struct Observer
{
    std::vector<int64_t> simNs;  ///< Now() in each sample
    std::vector<int64_t> wallNs; ///< the wall clock's now (RealtimeNow) in each
    Ptr<FabemuRealtimeSimulatorImpl> sim;

    void Sample()
    {
        simNs.push_back(Simulator::Now().GetNanoSeconds());
        wallNs.push_back(sim->RealtimeNow().GetNanoSeconds());
        Simulator::Schedule(MilliSeconds(1), &Observer::Sample, this); // stays an observer's
    }
};

} // namespace

TEST_CASE("an observer's events never wake the thread, yet each runs at its own time, before "
          "what comes after it")
{
    const auto sim = FreshSimulator();
    Observer o;
    o.sim = sim;
    Simulator::ScheduleWithContext(FabemuRealtimeSimulatorImpl::kObserverContext, MilliSeconds(1),
                                   &Observer::Sample, &o);
    // A model event at 20.5 ms, and frames on a pipe some 45 ms in.
    double modelEventAt = -1;
    size_t samplesBeforeModelEvent = 0;
    Simulator::Schedule(MicroSeconds(20500), [&] {
        modelEventAt = Simulator::Now().GetSeconds() * 1e3;
        samplesBeforeModelEvent = o.simNs.size();
    });
    int fds[2];
    REQUIRE(pipe2(fds, O_NONBLOCK | O_CLOEXEC) == 0);
    double readAtMs = -1;
    size_t samplesBeforeRead = 0;
    sim->Watch(fds[0], [&] {
        char byte;
        while (read(fds[0], &byte, 1) == 1)
        {
        }
        // Into the model at the read's moment: the samples due by then run first.
        sim->RunInContext(0, [&] {
            readAtMs = Simulator::Now().GetSeconds() * 1e3;
            samplesBeforeRead = o.simNs.size();
        });
    });
    std::thread writer([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(45));
        (void)!write(fds[1], "x", 1);
    });
    const auto started = Clock::now();
    std::thread stopper([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(80));
        sim->Stop(); // from outside, as fabemu emulate stops it
    });
    Simulator::Run();
    const double stoppedAfterMs =
        std::chrono::duration<double, std::milli>(Clock::now() - started).count();
    writer.join();
    stopper.join();
    sim->Unwatch(fds[0]);
    close(fds[0]);
    close(fds[1]);

    // Each sample ran at its own simulated time, in order, with none skipped: up to
    // the stop, as waking for each would have had it.
    REQUIRE(o.simNs.size() >= 70);
    for (size_t i = 0; i < o.simNs.size(); ++i)
    {
        CHECK(o.simNs[i] == static_cast<int64_t>(i + 1) * 1'000'000);
    }
    CHECK(static_cast<double>(o.simNs.size()) <= stoppedAfterMs + 1);
    // The thread did not wake for them: a handful of waits (the model event, the
    // pipe, the stop, the longest wait's cap), not one a sample.
    CHECK(sim->GetSleeps() + sim->GetSpins() < 10);
    // So they ran late by the wall clock, in batches: at the model event, at the
    // read and at the stop.
    CHECK(o.wallNs[2] - o.simNs[2] > 10'000'000); // sample 3 ms ran at 20.5 ms or later
    // Yet before what came after them, with the model as it was at their time.
    CHECK(modelEventAt == doctest::Approx(20.5));
    CHECK(samplesBeforeModelEvent == 20);
    CHECK(readAtMs >= 44.0);
    CHECK(samplesBeforeRead == static_cast<size_t>(readAtMs));
    // Late on purpose: not the lag (only the model event's lateness is recorded).
    CHECK(sim->GetLateness().Count() == 1);
    Simulator::Destroy();
}

TEST_CASE("an observer's event removed before its time never runs, and leaves the simulator "
          "with nothing left to do")
{
    const auto sim = FreshSimulator();
    int samples = 0;
    EventId second;
    Simulator::ScheduleWithContext(
        FabemuRealtimeSimulatorImpl::kObserverContext, MilliSeconds(1), [&] {
            ++samples;
            // In the observer's context: the next sample.
            second = Simulator::Schedule(MilliSeconds(1), [&] { ++samples; });
        });
    bool finishedBefore = true;
    bool finishedAfter = false;
    Simulator::Schedule(MicroSeconds(1500), [&] {
        finishedBefore = sim->IsFinished(); // the second sample is still to come
        Simulator::Remove(second);
        finishedAfter = sim->IsFinished();
    });
    // Past the second sample's time; the observers are asked before every turn.
    std::thread stopper([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(30));
        sim->Stop();
    });
    Simulator::Run();
    stopper.join();
    CHECK(samples == 1);
    CHECK_FALSE(finishedBefore);
    CHECK(finishedAfter);
    Simulator::Destroy();
}

TEST_CASE("events another thread schedules while the simulation runs all run, on the simulation "
          "thread, never before what has run, with its own events scheduling without a lock")
{
    const auto sim = FreshSimulator();
    // The simulation's own chain: an event every 10 us, each scheduling the next.
    struct Chain
    {
        int left{3000};
        void Step()
        {
            if (--left > 0)
            {
                Simulator::Schedule(MicroSeconds(10), &Chain::Step, this);
            }
        }
    } chain;
    Simulator::Schedule(MicroSeconds(10), &Chain::Step, &chain);
    constexpr int kForeign = 2000;
    std::vector<int64_t> ranAtNs;
    std::vector<std::thread::id> ranOn;
    std::atomic<bool> started{false};
    Simulator::Schedule(Time(0), [&] { started = true; });
    std::thread other([&] {
        while (!started)
        {
            std::this_thread::yield();
        }
        for (int i = 0; i < kForeign; ++i)
        {
            Simulator::ScheduleWithContext(7, Time(0), [&] {
                ranAtNs.push_back(Simulator::Now().GetNanoSeconds());
                ranOn.push_back(std::this_thread::get_id());
                CHECK(Simulator::GetContext() == 7);
            });
            if (i % 100 == 0)
            {
                std::this_thread::sleep_for(std::chrono::microseconds(200));
            }
        }
    });
    std::thread stopper([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(150));
        sim->Stop();
    });
    Simulator::Run();
    other.join();
    stopper.join();
    CHECK(chain.left == 0);
    REQUIRE(ranAtNs.size() == static_cast<size_t>(kForeign)); // none lost, none twice
    CHECK(std::is_sorted(ranAtNs.begin(), ranAtNs.end()));
    CHECK(std::all_of(ranOn.begin(), ranOn.end(),
                      [](std::thread::id id) { return id == std::this_thread::get_id(); }));
    Simulator::Destroy();
}

TEST_CASE("an event another thread scheduled before a frame that went in first runs after that "
          "frame's time, not before it")
{
    const auto sim = FreshSimulator();
    int fds[2];
    REQUIRE(pipe2(fds, O_NONBLOCK | O_CLOEXEC) == 0);
    int64_t frameAtPs = -1;
    int64_t otherAtPs = -1;
    sim->Watch(fds[0], [&] {
        char byte;
        while (read(fds[0], &byte, 1) == 1)
        {
        }
        // Another thread schedules while this handler runs: its time is the wall
        // clock's now, and it waits in the inbox. The frame then goes in, later.
        std::thread scheduler([&] {
            Simulator::ScheduleWithContext(3, Time(0),
                                           [&] { otherAtPs = Simulator::Now().GetPicoSeconds(); });
        });
        scheduler.join();
        std::this_thread::sleep_for(std::chrono::microseconds(300));
        sim->RunInContext(0, [&] { frameAtPs = Simulator::Now().GetPicoSeconds(); });
    });
    std::thread writer([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
        (void)!write(fds[1], "x", 1);
    });
    RunAndClosePipe(sim, MilliSeconds(40), writer, fds);
    REQUIRE(frameAtPs > 0);
    REQUIRE(otherAtPs > 0);
    // Scheduled some 300 us before the frame's moment, but the frame had run by the time
    // the simulation took it: not earlier than what has run.
    CHECK(otherAtPs >= frameAtPs);
    Simulator::Destroy();
}
