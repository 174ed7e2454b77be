#include "../skip.h"
#include "emulator/edge/realtime-thread.h"

#include <doctest/doctest.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include <cstdlib>
#include <sched.h>
#include <thread>
#include <unistd.h>

using namespace fabemu;

namespace
{

/// The calling thread's scheduling as TuneRealtimeThread names it.
std::string
Actual()
{
    const int policy = sched_getscheduler(0) & ~SCHED_RESET_ON_FORK;
    if (policy == SCHED_FIFO)
    {
        return "SCHED_FIFO";
    }
    errno = 0;
    return "nice " + std::to_string(getpriority(PRIO_PROCESS, 0));
}

} // namespace

TEST_CASE("what TuneRealtimeThread reports is what the thread got, here and now")
{
    for (const auto how : {ThreadScheduling::Shared, ThreadScheduling::Realtime})
    {
        std::string said;
        std::string got;
        std::string reported; // what the live status says
        unsigned long slack = 0;
        std::thread t([&] {
            said = TuneRealtimeThread(how);
            got = Actual();
            reported = CurrentThreadScheduling();
            slack = static_cast<unsigned long>(prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0));
        });
        t.join();
        CAPTURE(said);
        CHECK(said == got);
        CHECK(reported == got);
        CHECK(slack <=
              1); // 1 ns, not the default 50 us (Linux reports 0 for a real-time thread: none)
        if (how == ThreadScheduling::Shared)
        {
            CHECK(said != "SCHED_FIFO");
        }
    }
}

TEST_CASE("as root: Realtime is SCHED_FIFO, Shared nice -10, and nothing started from a SCHED_FIFO "
          "thread inherits it")
{
    if (geteuid() != 0)
    {
        FABEMU_SKIP("SCHED_FIFO and a negative nice need root (CI runs this as root)");
    }
    std::string shared;
    std::thread([&] { shared = TuneRealtimeThread(ThreadScheduling::Shared); }).join();
    CHECK(shared == "nice -10");

    std::string realtime;
    std::string child;
    int forkedPolicy = -1;
    std::thread([&] {
        realtime = TuneRealtimeThread(ThreadScheduling::Realtime);
        std::thread([&] { child = Actual(); }).join();
        const pid_t pid = fork();
        if (pid == 0)
        {
            _exit(sched_getscheduler(0) & ~SCHED_RESET_ON_FORK);
        }
        int status = 0;
        waitpid(pid, &status, 0);
        forkedPolicy = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    }).join();
    CHECK(realtime == "SCHED_FIFO");
    CHECK(child.rfind("nice", 0) == 0); // a thread it starts runs SCHED_OTHER
    CHECK(forkedPolicy == SCHED_OTHER); // and so does a process (QEMU, ip, a command)
}

TEST_CASE("ThreadCpuTime counts the calling thread's own work, not another's nor its sleep")
{
    using namespace std::chrono;
    // The kernel's own account of a thread's CPU time, by another interface.
    const auto rusageCpu = [] {
        rusage u{};
        getrusage(RUSAGE_THREAD, &u);
        return seconds(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
               microseconds(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
    };
    // A thread that works for 60 ms of wall time, beside one that sleeps as long.
    nanoseconds worked{0};
    nanoseconds workedByRusage{0};
    nanoseconds slept{0};
    std::thread worker([&] {
        const auto start = ThreadCpuTime();
        const auto startRusage = rusageCpu();
        volatile uint64_t x = 0;
        for (const auto end = steady_clock::now() + milliseconds(60); steady_clock::now() < end;)
        {
            x = x + 1;
        }
        worked = ThreadCpuTime() - start;
        workedByRusage = rusageCpu() - startRusage;
    });
    std::thread sleeper([&slept] {
        const auto start = ThreadCpuTime();
        std::this_thread::sleep_for(milliseconds(60));
        slept = ThreadCpuTime() - start;
    });
    worker.join();
    sleeper.join();
    MESSAGE("worker " << duration<double, std::milli>(worked).count() << " ms (getrusage "
                      << duration<double, std::milli>(workedByRusage).count() << " ms), sleeper "
                      << duration<double, std::milli>(slept).count() << " ms");
    // However busy the machine, the worker's count agrees with the kernel's other
    // account of the same thread (to its tick), stays within its 60 ms of wall time,
    // and the sleeper's is next to nothing.
    CHECK(worked > milliseconds(0));
    CHECK(worked <= milliseconds(70));
    CHECK(std::abs(duration_cast<microseconds>(worked - workedByRusage).count()) <= 10'000);
    CHECK(slept < milliseconds(5));
}
