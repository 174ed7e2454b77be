#include "emulator/edge/tap-port.h"

#include "emulator/edge/frame-buffers.h"
#include "emulator/edge/realtime-thread.h"

#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <netlink/netlink.h>
#include <netlink/route/link.h>
#include <sys/socket.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <memory>
#include <poll.h>
#include <unistd.h>

#ifndef PACKET_IGNORE_OUTGOING
#define PACKET_IGNORE_OUTGOING 23
#endif
#ifndef PACKET_QDISC_BYPASS
#define PACKET_QDISC_BYPASS 20
#endif

namespace fabemu
{

namespace
{

/// Brings \p ifname up through rtnetlink (libnl-route), with our side's MTU at
/// TapPort::kMtu; every handle freed on every path.
void
BringUp(const std::string& ifname)
{
    std::unique_ptr<nl_sock, void (*)(nl_sock*)> sock(nl_socket_alloc(), nl_socket_free);
    if (!sock || nl_connect(sock.get(), NETLINK_ROUTE) != 0)
    {
        throw TapError(ifname + ": cannot open a netlink socket");
    }
    rtnl_link* raw = nullptr;
    int rc = rtnl_link_get_kernel(sock.get(), 0, ifname.c_str(), &raw);
    std::unique_ptr<rtnl_link, void (*)(rtnl_link*)> link(raw, rtnl_link_put);
    if (rc != 0)
    {
        throw TapError(ifname + ": " + nl_geterror(rc));
    }
    std::unique_ptr<rtnl_link, void (*)(rtnl_link*)> change(rtnl_link_alloc(), rtnl_link_put);
    rtnl_link_set_flags(change.get(), IFF_UP);
    // QEMU leaves our side at 1500: frames of a larger path MTU (the guest's own
    // MTU is 4200 or more then) would fail to go out through it (EMSGSIZE).
    rtnl_link_set_mtu(change.get(), TapPort::kMtu);
    rc = rtnl_link_change(sock.get(), link.get(), change.get(), 0);
    if (rc != 0)
    {
        throw TapError(ifname + ": cannot bring it up: " + nl_geterror(rc));
    }
}

} // namespace

struct TapPort::ReadHeaders
{
    /// Room for a frame's receive stamp (SCM_TIMESTAMPNS).
    struct alignas(cmsghdr) Control
    {
        char bytes[CMSG_SPACE(sizeof(timespec))];
    };

    std::array<mmsghdr, kReadBatch> msgs{};
    std::array<iovec, kReadBatch> iov{};
    std::array<sockaddr_ll, kReadBatch> from{};
    std::array<Control, kReadBatch> control{};

    explicit ReadHeaders(uint8_t* buffer)
    {
        for (unsigned i = 0; i < kReadBatch; ++i)
        {
            iov[i] = {buffer + i * kReadSlot, kReadSlot};
            msgs[i].msg_hdr.msg_iov = &iov[i];
            msgs[i].msg_hdr.msg_iovlen = 1;
            msgs[i].msg_hdr.msg_name = &from[i];
            msgs[i].msg_hdr.msg_control = control[i].bytes;
            Reset(i);
        }
    }

    /// Sets again what recvmmsg wrote back into header \p i: its lengths and flags.
    void Reset(unsigned i)
    {
        msgs[i].msg_len = 0;
        msgs[i].msg_hdr.msg_namelen = sizeof(from[i]);
        msgs[i].msg_hdr.msg_controllen = sizeof(control[i].bytes);
        msgs[i].msg_hdr.msg_flags = 0;
    }
};

TapPort::TapPort(std::string ifname)
    : m_ifname(std::move(ifname)),
      m_readHeaders(std::make_unique<ReadHeaders>(m_buffer.data()))
{
    const unsigned index = if_nametoindex(m_ifname.c_str());
    if (index == 0)
    {
        throw TapError("interface " + m_ifname + " does not exist");
    }
    BringUp(m_ifname); // QEMU creates the tap but leaves our side of it down
    m_fd = socket(AF_PACKET, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, htons(ETH_P_ALL));
    if (m_fd < 0)
    {
        throw TapError("AF_PACKET socket for " + m_ifname + ": " + strerror(errno));
    }
    const int one = 1;
    if (setsockopt(m_fd, SOL_PACKET, PACKET_IGNORE_OUTGOING, &one, sizeof(one)) != 0)
    {
        const std::string why = strerror(errno);
        close(m_fd);
        throw TapError(m_ifname + ": PACKET_IGNORE_OUTGOING: " + why +
                       " (without it the emulator would read back its own frames)");
    }
    // Straight to the driver: a tap whose ring is full then says ENOBUFS (the
    // lossless edge holds the frame) where its qdisc would have accepted it and
    // the tap driver dropped it unseen.
    if (setsockopt(m_fd, SOL_PACKET, PACKET_QDISC_BYPASS, &one, sizeof(one)) != 0)
    {
        const std::string why = strerror(errno);
        close(m_fd);
        throw TapError(m_ifname + ": PACKET_QDISC_BYPASS: " + why);
    }
    // A VM's burst must not overflow the socket while the reader thread waits for
    // a core: 8 MiB (SO_RCVBUFFORCE passes rmem_max as root; otherwise as allowed).
    const int rcvbuf = 8 << 20;
    if (setsockopt(m_fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof(rcvbuf)) != 0)
    {
        (void)setsockopt(m_fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
    }
    // Every frame read carries the moment the kernel received it: a frame that waited
    // for the reading thread to wake enters the model at its own time.
    if (setsockopt(m_fd, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof(one)) != 0)
    {
        const std::string why = strerror(errno);
        close(m_fd);
        throw TapError(m_ifname + ": SO_TIMESTAMPNS: " + why);
    }
    sockaddr_ll addr{};
    addr.sll_family = AF_PACKET;
    addr.sll_protocol = htons(ETH_P_ALL);
    addr.sll_ifindex = static_cast<int>(index);
    if (bind(m_fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0)
    {
        const std::string why = strerror(errno);
        close(m_fd);
        throw TapError("bind to " + m_ifname + ": " + why);
    }
    if (pipe2(m_wake, O_CLOEXEC | O_NONBLOCK) != 0)
    {
        close(m_fd);
        throw TapError("pipe: " + std::string(strerror(errno)));
    }
}

TapPort::~TapPort()
{
    Stop();
    for (int fd : {m_fd, m_wake[0], m_wake[1]})
    {
        if (fd >= 0)
        {
            close(fd);
        }
    }
}

void
TapPort::Start(Handler handler)
{
    m_stop = false;
    m_reader = std::thread(&TapPort::ReadLoop, this, std::move(handler));
}

void
TapPort::Stop()
{
    if (m_reader.joinable())
    {
        m_stop = true;
        const char c = 0;
        (void)!write(m_wake[1], &c, 1);
        m_reader.join();
    }
}

void
TapPort::ReadLoop(Handler handler)
{
    TuneRealtimeThread();
    pollfd fds[2] = {{m_fd, POLLIN, 0}, {m_wake[0], POLLIN, 0}};
    while (!m_stop)
    {
        if (poll(fds, 2, 500) < 0 && errno != EINTR)
        {
            return;
        }
        ReadAvailable(handler);
    }
}

void
TapPort::ReadAvailable(const Handler& handler, unsigned maxBatches)
{
    // Up to kBatch frames a system call; a short batch means the socket is empty,
    // so an idle tap costs one call per wake-up, not two.
    constexpr unsigned kBatch = kReadBatch;
    ReadHeaders& h = *m_readHeaders;
    for (unsigned batch = 0; batch < maxBatches; ++batch)
    {
        const int n = recvmmsg(m_fd, h.msgs.data(), kBatch, MSG_DONTWAIT, nullptr);
        if (n <= 0)
        {
            return;
        }
        // The stamps are on the real-time clock: moved onto the steady clock by the
        // difference between the two now, never later than now.
        const Clock::time_point readAt = Clock::now();
        timespec realNow{};
        clock_gettime(CLOCK_REALTIME, &realNow);
        for (unsigned i = 0; i < static_cast<unsigned>(n); ++i)
        {
            // What the kernel wrote into header i is read, and the header set again,
            // before the handler runs.
            msghdr& hdr = h.msgs[i].msg_hdr;
            const bool outgoing = h.from[i].sll_pkttype == PACKET_OUTGOING;
            const bool truncated = hdr.msg_flags & MSG_TRUNC;
            const size_t len = h.msgs[i].msg_len;
            const cmsghdr* c = CMSG_FIRSTHDR(&hdr);
            timespec stamp{};
            const bool stamped =
                c && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_TIMESTAMPNS;
            if (stamped)
            {
                std::memcpy(&stamp, CMSG_DATA(c), sizeof(stamp));
            }
            h.Reset(i);
            if (outgoing)
            {
                continue; // kernels without PACKET_IGNORE_OUTGOING honoured
            }
            if (truncated)
            {
                ++m_truncated; // longer than any frame the fabric takes: dropped here
                continue;
            }
            ++m_read;
            Clock::time_point arrived = readAt;
            if (stamped)
            {
                const int64_t agoNs = (realNow.tv_sec - stamp.tv_sec) * 1'000'000'000LL +
                                      (realNow.tv_nsec - stamp.tv_nsec);
                arrived -= std::chrono::nanoseconds(std::max<int64_t>(agoNs, 0));
            }
            else
            {
                ++m_unstamped;
            }
            handler(static_cast<uint8_t*>(h.iov[i].iov_base), len, arrived);
        }
        if (static_cast<unsigned>(n) < kBatch)
        {
            return;
        }
    }
}

uint64_t
TapPort::SocketDrops()
{
    // PACKET_STATISTICS reads and resets the kernel's counter.
    tpacket_stats stats{};
    socklen_t len = sizeof(stats);
    if (getsockopt(m_fd, SOL_PACKET, PACKET_STATISTICS, &stats, &len) == 0)
    {
        m_socketDrops += stats.tp_drops;
    }
    return m_socketDrops;
}

void
TapPort::Queue(std::vector<uint8_t> frame)
{
    m_outgoing.push_back(std::move(frame));
}

std::pair<uint64_t, uint64_t>
TapPort::Flush(std::vector<std::vector<uint8_t>>& refused)
{
    uint64_t frames = 0;
    uint64_t bytes = 0;
    size_t next = 0;
    while (next < m_outgoing.size())
    {
        constexpr size_t kBatch = 64;
        const size_t n = std::min(kBatch, m_outgoing.size() - next);
        // Only the n headers used are set (a batch of 64 zeroed is 5 KiB, for one frame).
        std::array<mmsghdr, kBatch> msgs;
        std::array<iovec, kBatch> iov;
        for (size_t i = 0; i < n; ++i)
        {
            iov[i] = {m_outgoing[next + i].data(), m_outgoing[next + i].size()};
            msgs[i] = {};
            msgs[i].msg_hdr.msg_iov = &iov[i];
            msgs[i].msg_hdr.msg_iovlen = 1;
        }
        const int sent = sendmmsg(m_fd, msgs.data(), static_cast<unsigned>(n), MSG_DONTWAIT);
        if (sent > 0)
        {
            ++m_writeCalls;
            for (int i = 0; i < sent; ++i)
            {
                bytes += m_outgoing[next + i].size();
                FrameBuffers::Give(std::move(m_outgoing[next + i]));
            }
            frames += sent;
            m_written += sent;
            next += sent;
            continue;
        }
        if (errno == ENOBUFS || errno == EAGAIN)
        {
            break; // the endpoint is not taking frames: the rest waits
        }
        ++m_writeFailures; // this one cannot go; the ones after it still may
        ++next;
    }
    for (; next < m_outgoing.size(); ++next)
    {
        refused.push_back(std::move(m_outgoing[next]));
    }
    m_outgoing.clear();
    return {frames, bytes};
}

TapPort::WriteStatus
TapPort::Write(const uint8_t* frame, size_t len)
{
    const ssize_t n = send(m_fd, frame, len, MSG_DONTWAIT);
    if (n == static_cast<ssize_t>(len))
    {
        ++m_written;
        ++m_writeCalls;
        return WriteStatus::Written;
    }
    if (n < 0 && (errno == ENOBUFS || errno == EAGAIN))
    {
        return WriteStatus::Full;
    }
    ++m_writeFailures;
    return WriteStatus::Failed;
}

} // namespace fabemu
