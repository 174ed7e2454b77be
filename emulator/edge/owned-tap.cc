#include "emulator/edge/owned-tap.h"

#include <linux/if_tun.h>
#include <net/if.h>
#include <sys/ioctl.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <unistd.h>

namespace fabemu
{

OwnedTap::OwnedTap(const std::string& name, unsigned ringFrames) : m_name(name)
{
    m_fd = open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC);
    if (m_fd < 0)
    {
        throw TapError("open /dev/net/tun: " + std::string(strerror(errno)));
    }
    ifreq ifr{};
    ifr.ifr_flags = IFF_TAP | IFF_NO_PI;
    std::strncpy(ifr.ifr_name, name.c_str(), IFNAMSIZ - 1);
    if (ioctl(m_fd, TUNSETIFF, &ifr) != 0)
    {
        const std::string why = strerror(errno);
        close(m_fd);
        throw TapError("creating tap " + name + ": " + why);
    }
    const std::string cmd = "sysctl -qw net.ipv6.conf." + name +
                            ".disable_ipv6=1 && ip link set dev " + name + " txqueuelen " +
                            std::to_string(ringFrames) + " up";
    if (std::system(cmd.c_str()) != 0)
    {
        close(m_fd);
        throw TapError("configuring tap " + name + " failed: " + cmd);
    }
}

OwnedTap::~OwnedTap()
{
    close(m_fd);
}

bool
OwnedTap::Send(const std::vector<uint8_t>& frame)
{
    return write(m_fd, frame.data(), frame.size()) == static_cast<ssize_t>(frame.size());
}

std::vector<std::vector<uint8_t>>
OwnedTap::Drain()
{
    std::vector<std::vector<uint8_t>> frames;
    std::vector<uint8_t> buf(65536);
    ssize_t n;
    while ((n = read(m_fd, buf.data(), buf.size())) > 0)
    {
        frames.emplace_back(buf.begin(), buf.begin() + n);
    }
    return frames;
}

size_t
OwnedTap::Discard(size_t length)
{
    static thread_local std::vector<uint8_t> buf(65536);
    size_t count = 0;
    ssize_t n;
    while ((n = read(m_fd, buf.data(), buf.size())) > 0)
    {
        count += length == 0 || static_cast<size_t>(n) == length;
    }
    return count;
}

std::string
OwnedTap::WhyNot()
{
    if (geteuid() != 0)
    {
        return "needs root to create tap devices";
    }
    if (access("/dev/net/tun", R_OK | W_OK) != 0)
    {
        return "no /dev/net/tun on this host";
    }
    return "";
}

} // namespace fabemu
