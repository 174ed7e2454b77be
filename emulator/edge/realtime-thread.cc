#include "realtime-thread.h"

#include <sys/prctl.h>
#include <sys/resource.h>

namespace fabemu
{

void
TuneRealtimeThread()
{
    (void)prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
    (void)setpriority(PRIO_PROCESS, 0, -10); // 0: this thread (Linux nice is per thread)
}

} // namespace fabemu
