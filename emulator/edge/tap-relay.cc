#include "emulator/edge/tap-relay.h"

#include "emulator/edge/realtime-thread.h"

#include <sys/eventfd.h>

#include <cerrno>
#include <cstring>
#include <poll.h>
#include <pthread.h>
#include <unistd.h>

namespace fabemu
{

TapRelay::TapRelay(std::vector<Member> members) : m_members(std::move(members))
{
    m_wakeFd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (m_wakeFd < 0)
    {
        throw TapError("relay: eventfd: " + std::string(strerror(errno)));
    }
}

TapRelay::~TapRelay()
{
    Stop();
    close(m_wakeFd);
}

void
TapRelay::Start()
{
    m_stop = false;
    m_thread = std::thread(&TapRelay::Loop, this);
}

void
TapRelay::Stop()
{
    if (m_thread.joinable())
    {
        m_stop = true;
        const uint64_t one = 1;
        (void)!write(m_wakeFd, &one, sizeof(one));
        m_thread.join();
    }
}

void
TapRelay::Forward(size_t from, const uint8_t* frame, size_t len)
{
    ++m_read;
    if (len < 14)
    {
        return; // not even an Ethernet header
    }
    // The one other port whose endpoint owns the destination MAC; none for a group
    // address or nobody's, which go to every other port (as a learning bridge floods).
    size_t owner = m_members.size();
    for (size_t i = 0; i < m_members.size() && !(frame[0] & 1); ++i)
    {
        if (i != from && std::memcmp(frame, m_members[i].mac.data(), 6) == 0)
        {
            owner = i;
            break;
        }
    }
    for (size_t i = 0; i < m_members.size(); ++i)
    {
        if (i != from && (owner == m_members.size() || i == owner))
        {
            m_members[i].port->Queue(std::vector<uint8_t>(frame, frame + len));
        }
    }
}

void
TapRelay::Loop()
{
    // Tuned as the emulator's simulation thread is by default (scheduling: shared),
    // so that the two differ only by the model.
    (void)pthread_setname_np(pthread_self(), "fabemu-relay");
    m_scheduling = TuneRealtimeThread(ThreadScheduling::Shared);
    std::vector<pollfd> fds;
    for (const auto& m : m_members)
    {
        fds.push_back({m.port->Fd(), POLLIN, 0});
    }
    fds.push_back({m_wakeFd, POLLIN, 0});
    std::vector<std::vector<uint8_t>> refused;
    struct NoteCpu // on every way out
    {
        std::chrono::nanoseconds& cpu;
        ~NoteCpu() { cpu = ThreadCpuTime(); }
    } noteCpu{m_cpu};
    while (!m_stop)
    {
        if (poll(fds.data(), fds.size(), 500) < 0 && errno != EINTR)
        {
            return;
        }
        for (size_t i = 0; i < m_members.size(); ++i)
        {
            if (fds[i].revents & POLLIN)
            {
                m_members[i].port->ReadAvailable(
                    [this, i](const uint8_t* frame, size_t len, TapPort::Clock::time_point) {
                        Forward(i, frame, len);
                    });
            }
        }
        for (auto& m : m_members)
        {
            if (m.port->HasQueued())
            {
                m_written += m.port->Flush(refused).first;
                m_refused += refused.size();
                refused.clear();
            }
        }
    }
}

} // namespace fabemu
