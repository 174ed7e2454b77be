#include "realtime-thread.h"

#include <cstdlib>
#include <sys/prctl.h>
#include <sys/resource.h>

namespace fabemu
{

void
TuneRealtimeThread()
{
    (void)prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
    const char* nice = std::getenv("FABEMU_NICE");
    (void)setpriority(PRIO_PROCESS, 0, nice ? std::atoi(nice) : -10); // 0: this thread (Linux nice is per thread)
}

} // namespace fabemu
