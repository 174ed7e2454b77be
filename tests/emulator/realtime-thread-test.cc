#include "../skip.h"
#include "emulator/edge/realtime-thread.h"

#include <doctest/doctest.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>

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
