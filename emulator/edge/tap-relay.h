/*
 * A bare user-space relay between endpoint taps: the emulator's frame I/O
 * (TapPort: AF_PACKET, batched reads and writes, one thread tuned as the
 * simulation thread is) with no fabric model behind it. Each frame goes to the
 * port whose endpoint owns its destination MAC, or to every other port when the
 * MAC is a group address or nobody's.
 *
 * It is a baseline, not a fabric: `fabemu emulate --relay` runs the same VMs and
 * commands over it, so that a slowdown can be split into what any user-space hop
 * costs on the host (relay against bridge) and what the model adds (emulator
 * against relay).
 */
#ifndef FABEMU_TAP_RELAY_H
#define FABEMU_TAP_RELAY_H

#include "emulator/edge/tap-port.h"

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace fabemu
{

class TapRelay
{
  public:
    using Mac = std::array<uint8_t, 6>;
    struct Member
    {
        std::unique_ptr<TapPort> port;
        Mac mac; ///< the endpoint's own MAC, behind this port
    };

    explicit TapRelay(std::vector<Member> members);
    ~TapRelay();
    TapRelay(const TapRelay&) = delete;
    TapRelay& operator=(const TapRelay&) = delete;

    /// Starts relaying on a thread of its own (named fabemu-relay).
    void Start();
    /// Stops and joins the thread; idempotent.
    void Stop();

    /// Frames read from the endpoints, and written to them, so far.
    uint64_t FramesRead() const { return m_read; }
    uint64_t FramesWritten() const { return m_written; }
    /// Frames a full tap refused: dropped, as a bridge's tap would drop them.
    uint64_t FramesRefused() const { return m_refused; }
    /// The scheduling the relay's thread got (TuneRealtimeThread's words); read after Stop.
    const std::string& Scheduling() const { return m_scheduling; }
    /// The CPU time the relay's thread used (user and system), read after Stop.
    std::chrono::nanoseconds ThreadCpu() const { return m_cpu; }

  private:
    void Loop();
    /// Queues \p frame on the port for its destination MAC (every other one for a
    /// group or unknown MAC); \p from is the port it came in on.
    void Forward(size_t from, const uint8_t* frame, size_t len);

    std::vector<Member> m_members;
    int m_wakeFd{-1};
    std::thread m_thread;
    std::atomic<bool> m_stop{false};
    std::atomic<uint64_t> m_read{0};
    std::atomic<uint64_t> m_written{0};
    std::atomic<uint64_t> m_refused{0};
    std::string m_scheduling;          ///< written by the thread, read after it is joined
    std::chrono::nanoseconds m_cpu{0}; ///< likewise
};

} // namespace fabemu

#endif
