/*
 * Tuning for the threads that carry real frames in real time (the simulation
 * thread and the tap readers). The real-time simulator waits for each event's
 * wall-clock moment by sleeping; with Linux's default 50 us timer slack a wait
 * of 1 us could last 51, which is the latency a frame would gain at every hop.
 *
 * How the thread shares the cores with the endpoint VMs is a trade-off, measured
 * on a 2-core host with two TCG VMs (docs/performance.md): at nice -10 (Shared)
 * the kernel lets a busy VM finish its slice before the emulator runs, so frames
 * batch up and the VMs keep their throughput, but the lag's p99 is about 1 ms;
 * under SCHED_FIFO (Realtime) the emulator preempts them at once, the lag's p99
 * falls to about 0.15 ms, and the preemptions cost the VMs about a quarter of
 * their ib_write_bw.
 */
#ifndef FABEMU_REALTIME_THREAD_H
#define FABEMU_REALTIME_THREAD_H

#include <chrono>
#include <string>

namespace fabemu
{

enum class ThreadScheduling
{
    Shared,   ///< nice -10: ahead of the VMs' QEMU when both want a core
    Realtime, ///< SCHED_FIFO priority 1, not inherited by threads or processes it starts
};

/// Tunes the calling thread: timer slack 1 ns, then \p how where permitted.
/// Returns what the thread got (CurrentThreadScheduling): "SCHED_FIFO", "nice -10",
/// or the nice it had when neither was permitted; a refusal is not an error, the
/// thread runs as it was.
std::string TuneRealtimeThread(ThreadScheduling how = ThreadScheduling::Shared);

/// The calling thread's scheduling, named as TuneRealtimeThread names it.
std::string CurrentThreadScheduling();

/// The CPU time the calling thread has used so far, user and system
/// (CLOCK_THREAD_CPUTIME_ID): what a frame costs the thread that carries it.
std::chrono::nanoseconds ThreadCpuTime();

} // namespace fabemu

#endif
