/*
 * Frame I/O on a Linux network interface the emulator does not own (a tap that
 * QEMU holds, or the host end of a namespace's veth): an AF_PACKET socket bound
 * to it, with PACKET_IGNORE_OUTGOING so the frames we write are not read back.
 * Frames are read in batches either by a thread of the port's own (Start) or by
 * a caller that polls Fd() (ReadAvailable); writes come from the simulation
 * thread.
 */
#ifndef FABEMU_TAP_PORT_H
#define FABEMU_TAP_PORT_H

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace fabemu
{

class TapError : public std::runtime_error
{
  public:
    using std::runtime_error::runtime_error;
};

class TapPort
{
  public:
    using Clock = std::chrono::steady_clock;
    /// Called with each frame read (no FCS), on the thread that reads, with the moment
    /// the kernel received it from the endpoint (its receive stamp, on the steady clock;
    /// the moment of the read where the kernel gave none). The frame is in the reader's
    /// buffer: valid, and the handler's to change, until it returns.
    using Handler = std::function<void(uint8_t* frame, size_t len, Clock::time_point arrived)>;

    /// Opens \p ifname; throws TapError naming it on failure. Reading starts with Start.
    /// Our side of every tap takes frames up to this MTU: any the guests send at any
    /// fabric MTU (the guest's virtio MTU is what limits them).
    static constexpr unsigned kMtu = 9000;

    explicit TapPort(std::string ifname);
    ~TapPort();
    TapPort(const TapPort&) = delete;
    TapPort& operator=(const TapPort&) = delete;

    /// Reads on a thread of its own, calling \p handler there.
    void Start(Handler handler);
    void Stop();
    /// Or, without that thread: reads the frames waiting now (non-blocking), for a
    /// caller that polls Fd() itself; at most \p maxBatches system calls' worth, so a
    /// handler that does real work cannot be kept reading by a fast sender (the
    /// descriptor stays readable, and the next poll returns for the rest).
    void ReadAvailable(const Handler& handler, unsigned maxBatches = ~0u);
    int Fd() const { return m_fd; }

    enum class WriteStatus
    {
        Written,
        Full,   ///< the endpoint is not taking frames (the tap's ring is full): try again later
        Failed, ///< the interface refused this frame (down, too long, ...)
    };
    /**
     * \brief Writes one frame. The socket bypasses the tap's qdisc, so a full tap
     * ring (QEMU not reading because the guest is not taking frames) comes back as
     * Full instead of a silent drop in the tap driver.
     */
    WriteStatus Write(const uint8_t* frame, size_t len);

    /// Batched writing: Queue keeps a copy, Flush writes what is queued with one
    /// sendmmsg. Frames the tap refused for being full (the first such and every
    /// one after it) come back in \p refused, in order; other failures are counted
    /// and dropped. Returns the frames and bytes written.
    void Queue(std::vector<uint8_t> frame);
    std::pair<uint64_t, uint64_t> Flush(std::vector<std::vector<uint8_t>>& refused);
    bool HasQueued() const { return !m_outgoing.empty(); }

    const std::string& Name() const { return m_ifname; }
    uint64_t FramesRead() const { return m_read; }
    uint64_t FramesWritten() const { return m_written; }
    uint64_t WriteFailures() const { return m_writeFailures; }
    /// System calls that wrote at least one frame (Write, and Flush's batches).
    uint64_t WriteCalls() const { return m_writeCalls; }
    /// Frames read with no receive stamp from the kernel (their arrival is the read's
    /// moment).
    uint64_t Unstamped() const { return m_unstamped; }
    /// Frames longer than 9 KiB (no endpoint MTU allows them), dropped on reading.
    uint64_t Truncated() const { return m_truncated; }
    /// Frames the endpoint sent that the kernel dropped before we read them
    /// (the socket's buffer was full), so far.
    uint64_t SocketDrops();

  private:
    void ReadLoop(Handler handler);

    std::string m_ifname;
    int m_fd{-1};
    int m_wake[2]{-1, -1};
    std::thread m_reader;
    std::atomic<bool> m_stop{false};
    std::atomic<uint64_t> m_read{0};
    std::vector<std::vector<uint8_t>> m_outgoing;
    static constexpr unsigned kReadBatch = 16;
    static constexpr size_t kReadSlot = 9216; ///< a jumbo frame; longer ones are truncated
    std::vector<uint8_t> m_buffer = std::vector<uint8_t>(kReadBatch * kReadSlot);
    /// recvmmsg's headers for a batch, into m_buffer: made once, not zeroed and filled
    /// again (2 KiB) for every read.
    struct ReadHeaders;
    std::unique_ptr<ReadHeaders> m_readHeaders;
    uint64_t m_written{0};
    uint64_t m_writeFailures{0};
    uint64_t m_writeCalls{0};
    uint64_t m_socketDrops{0};
    uint64_t m_truncated{0};
    uint64_t m_unstamped{0};
};

} // namespace fabemu

#endif
