/*
 * Tuning for the threads that carry real frames in real time (the simulation
 * thread and the tap readers). The real-time simulator waits for each event's
 * wall-clock moment by sleeping; with Linux's default 50 us timer slack a wait
 * of 1 us could last 51, which is the latency a frame would gain at every hop.
 */
#ifndef FABEMU_REALTIME_THREAD_H
#define FABEMU_REALTIME_THREAD_H

namespace fabemu
{

/// For the calling thread: timer slack 1 ns, and nice -10 (ahead of the VMs'
/// QEMU when both want a core) where permitted. Failures are ignored: the
/// thread then runs as before.
void TuneRealtimeThread();

} // namespace fabemu

#endif
