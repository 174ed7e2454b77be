#include "emulator/edge/realtime-thread.h"

#include <sys/prctl.h>
#include <sys/resource.h>

#include <sched.h>
#include <time.h>

namespace fabemu
{

std::string
TuneRealtimeThread(ThreadScheduling how)
{
    (void)prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
    if (how == ThreadScheduling::Realtime)
    {
        sched_param p{};
        p.sched_priority =
            1; // the lowest real-time priority: any other real-time thread comes first
        // SCHED_RESET_ON_FORK: a thread or process started from here runs SCHED_OTHER.
        if (sched_setscheduler(0, SCHED_FIFO | SCHED_RESET_ON_FORK, &p) == 0)
        {
            return CurrentThreadScheduling();
        }
    }
    (void)setpriority(PRIO_PROCESS, 0, -10); // 0: this thread (Linux nice is per thread)
    return CurrentThreadScheduling();
}

std::string
CurrentThreadScheduling()
{
    if ((sched_getscheduler(0) & ~SCHED_RESET_ON_FORK) == SCHED_FIFO)
    {
        return "SCHED_FIFO";
    }
    return "nice " + std::to_string(getpriority(PRIO_PROCESS, 0));
}

std::chrono::nanoseconds
ThreadCpuTime()
{
    timespec ts{};
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
    {
        return std::chrono::nanoseconds(0);
    }
    return std::chrono::seconds(ts.tv_sec) + std::chrono::nanoseconds(ts.tv_nsec);
}

} // namespace fabemu
