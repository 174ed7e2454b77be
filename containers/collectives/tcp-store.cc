#include "containers/collectives/tcp-store.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <netdb.h>
#include <poll.h>
#include <unistd.h>

namespace fabemu
{

namespace
{

/// Writes all of \p len bytes; false when the peer is gone.
bool
WriteAll(int fd, const void* data, size_t len)
{
    const char* p = static_cast<const char*>(data);
    while (len > 0)
    {
        const ssize_t n = ::send(fd, p, len, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR)
        {
            continue;
        }
        if (n <= 0)
        {
            return false;
        }
        p += n;
        len -= static_cast<size_t>(n);
    }
    return true;
}

/// Reads exactly \p len bytes; false at end of stream, an error, or when nothing
/// arrives before \p deadline (none: wait as long as it takes).
bool
ReadAll(int fd, void* data, size_t len,
        std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point{})
{
    char* p = static_cast<char*>(data);
    while (len > 0)
    {
        if (deadline != std::chrono::steady_clock::time_point{})
        {
            const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                deadline - std::chrono::steady_clock::now());
            pollfd pfd{fd, POLLIN, 0};
            const int r = ::poll(&pfd, 1, static_cast<int>(std::max<int64_t>(0, left.count())));
            if (r < 0 && errno == EINTR)
            {
                continue;
            }
            if (r <= 0)
            {
                return false;
            }
        }
        const ssize_t n = ::recv(fd, p, len, 0);
        if (n < 0 && errno == EINTR)
        {
            continue;
        }
        if (n <= 0)
        {
            return false;
        }
        p += n;
        len -= static_cast<size_t>(n);
    }
    return true;
}

bool
WriteBlock(int fd, const char* data, size_t len)
{
    const uint32_t n = htonl(static_cast<uint32_t>(len));
    return WriteAll(fd, &n, sizeof n) && (len == 0 || WriteAll(fd, data, len));
}

/// A length-prefixed block, at most \p limit bytes (a corrupt length is an error,
/// not a huge allocation).
bool
ReadBlock(int fd, std::vector<char>& out, std::chrono::steady_clock::time_point deadline = {},
          size_t limit = 64u << 20)
{
    uint32_t n = 0;
    if (!ReadAll(fd, &n, sizeof n, deadline))
    {
        return false;
    }
    n = ntohl(n);
    if (n > limit)
    {
        return false;
    }
    out.resize(n);
    return n == 0 || ReadAll(fd, out.data(), n, deadline);
}

} // namespace

TcpStoreServer::TcpStoreServer(uint16_t port)
{
    m_listen = ::socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
    const int family = m_listen >= 0 ? AF_INET6 : AF_INET;
    if (m_listen < 0)
    {
        m_listen = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    }
    if (m_listen < 0)
    {
        throw StoreError(std::string("store: socket: ") + std::strerror(errno));
    }
    const int one = 1;
    const int zero = 0;
    ::setsockopt(m_listen, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    int rc;
    if (family == AF_INET6)
    {
        ::setsockopt(m_listen, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof zero);
        sockaddr_in6 a{};
        a.sin6_family = AF_INET6;
        a.sin6_addr = in6addr_any;
        a.sin6_port = htons(port);
        rc = ::bind(m_listen, reinterpret_cast<sockaddr*>(&a), sizeof a);
    }
    else
    {
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_ANY);
        a.sin_port = htons(port);
        rc = ::bind(m_listen, reinterpret_cast<sockaddr*>(&a), sizeof a);
    }
    if (rc != 0 || ::listen(m_listen, 64) != 0)
    {
        const std::string why = std::strerror(errno);
        ::close(m_listen);
        throw StoreError("store: cannot listen on port " + std::to_string(port) + ": " + why);
    }
    sockaddr_storage bound{};
    socklen_t len = sizeof bound;
    ::getsockname(m_listen, reinterpret_cast<sockaddr*>(&bound), &len);
    m_port = ntohs(family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port
                                      : reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
    m_acceptor = std::thread([this] { Accept(); });
}

TcpStoreServer::~TcpStoreServer()
{
    {
        std::lock_guard<std::mutex> lock(m_mutex);
        m_stopping = true;
        for (int fd : m_clients)
        {
            ::shutdown(fd, SHUT_RDWR); // ends each server thread's read
        }
    }
    m_changed.notify_all();
    ::shutdown(m_listen, SHUT_RDWR); // ends accept
    m_acceptor.join();
    for (auto& t : m_servers)
    {
        t.join();
    }
    for (int fd : m_clients)
    {
        ::close(fd);
    }
    ::close(m_listen);
}

void
TcpStoreServer::Accept()
{
    for (;;)
    {
        const int fd = ::accept4(m_listen, nullptr, nullptr, SOCK_CLOEXEC);
        if (fd < 0 && errno == EINTR)
        {
            continue;
        }
        if (fd < 0 && errno != EINVAL) // EINVAL: shut down, the destructor's doing
        {
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
        std::lock_guard<std::mutex> lock(m_mutex);
        if (m_stopping)
        {
            if (fd >= 0)
            {
                ::close(fd);
            }
            return;
        }
        if (fd < 0)
        {
            continue; // a client that gave up, or no fd to spare for now: keep listening
        }
        m_clients.push_back(fd);
        m_servers.emplace_back([this, fd] { Serve(fd); });
    }
}

void
TcpStoreServer::Serve(int fd)
{
    ServeRequests(fd);
    ::shutdown(fd, SHUT_RDWR); // the client hears the end; the destructor closes fd
}

void
TcpStoreServer::ServeRequests(int fd)
{
    for (;;)
    {
        char op = 0;
        std::vector<char> key;
        std::vector<char> value;
        if (!ReadAll(fd, &op, 1) || !ReadBlock(fd, key, {}, 4096) || !ReadBlock(fd, value))
        {
            return; // the client left, or sent garbage: drop it
        }
        const std::string k(key.begin(), key.end());
        char status = 'K';
        std::vector<char> answer;
        if (op == 'S')
        {
            {
                std::lock_guard<std::mutex> lock(m_mutex);
                m_data[k] = std::move(value);
            }
            m_changed.notify_all();
        }
        else if (op == 'G')
        {
            const long waitMs =
                std::strtol(std::string(value.begin(), value.end()).c_str(), nullptr, 10);
            std::unique_lock<std::mutex> lock(m_mutex);
            const bool found =
                m_changed.wait_for(lock, std::chrono::milliseconds(std::max(0L, waitMs)),
                                   [&] { return m_stopping || m_data.count(k) > 0; });
            if (found && m_data.count(k) > 0)
            {
                answer = m_data[k];
            }
            else
            {
                status = 'T';
            }
        }
        else
        {
            return;
        }
        if (!WriteAll(fd, &status, 1) || !WriteBlock(fd, answer.data(), answer.size()))
        {
            return;
        }
    }
}

TcpStore::TcpStore(const std::string& host, uint16_t port, std::chrono::milliseconds timeout)
    : m_where(host + ":" + std::to_string(port)),
      m_timeout(timeout)
{
    addrinfo hints{};
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* found = nullptr;
    const int gai = ::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found);
    if (gai != 0)
    {
        throw StoreError("store " + m_where + ": cannot resolve '" + host +
                         "': " + ::gai_strerror(gai));
    }
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    std::string why;
    while (m_fd < 0)
    {
        for (addrinfo* a = found; a != nullptr && m_fd < 0; a = a->ai_next)
        {
            const int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
            if (fd >= 0 && ::connect(fd, a->ai_addr, a->ai_addrlen) == 0)
            {
                m_fd = fd;
                break;
            }
            why = std::strerror(errno);
            if (fd >= 0)
            {
                ::close(fd);
            }
        }
        if (m_fd < 0)
        {
            if (std::chrono::steady_clock::now() >= deadline)
            {
                ::freeaddrinfo(found);
                throw StoreError("store " + m_where + ": no answer in " +
                                 std::to_string(timeout.count() / 1000) + " s (" + why +
                                 "): is rank 0 running?");
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
        }
    }
    ::freeaddrinfo(found);
    const int one = 1;
    ::setsockopt(m_fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

TcpStore::~TcpStore()
{
    if (m_fd >= 0)
    {
        ::close(m_fd);
    }
}

std::string
TcpStore::LocalAddress() const
{
    sockaddr_storage a{};
    socklen_t len = sizeof a;
    char text[INET6_ADDRSTRLEN] = "";
    if (::getsockname(m_fd, reinterpret_cast<sockaddr*>(&a), &len) == 0)
    {
        if (a.ss_family == AF_INET)
        {
            ::inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(&a)->sin_addr, text, sizeof text);
        }
        else
        {
            ::inet_ntop(AF_INET6, &reinterpret_cast<sockaddr_in6*>(&a)->sin6_addr, text,
                        sizeof text);
        }
    }
    return text;
}

std::vector<char>
TcpStore::Call(char op, const std::string& key, const std::vector<char>& value,
               std::chrono::milliseconds wait)
{
    if (m_fd < 0)
    {
        throw StoreError("store " + m_where + ": the connection was lost (key '" + key + "')");
    }
    if (!WriteAll(m_fd, &op, 1) || !WriteBlock(m_fd, key.data(), key.size()) ||
        !WriteBlock(m_fd, value.data(), value.size()))
    {
        throw StoreError("store " + m_where + ": the server closed the connection (key '" + key +
                         "')");
    }
    // The server answers a get by its wait; allow the network a few seconds more.
    const auto deadline = std::chrono::steady_clock::now() + wait + std::chrono::seconds(5);
    char status = 0;
    std::vector<char> answer;
    if (!ReadAll(m_fd, &status, 1, deadline) || !ReadBlock(m_fd, answer, deadline))
    {
        // The answer may still come: the connection is out of step, so it goes.
        ::close(m_fd);
        m_fd = -1;
        throw StoreError("store " + m_where + ": no answer for key '" + key + "'");
    }
    if (status == 'T')
    {
        throw StoreError("store " + m_where + ": key '" + key + "' was not set in " +
                         std::to_string(wait.count() / 1000) + " s: a rank did not start?");
    }
    return answer;
}

void
TcpStore::set(const std::string& key, const std::vector<char>& data)
{
    Call('S', key, data, std::chrono::milliseconds(0));
}

std::vector<char>
TcpStore::get(const std::string& key)
{
    const std::string ms = std::to_string(m_timeout.count());
    return Call('G', key, std::vector<char>(ms.begin(), ms.end()), m_timeout);
}

void
TcpStore::wait(const std::vector<std::string>& keys)
{
    wait(keys, m_timeout);
}

void
TcpStore::wait(const std::vector<std::string>& keys, const std::chrono::milliseconds& timeout)
{
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    for (const auto& k : keys)
    {
        const auto left = std::max(std::chrono::milliseconds(0),
                                   std::chrono::duration_cast<std::chrono::milliseconds>(
                                       deadline - std::chrono::steady_clock::now()));
        const std::string ms = std::to_string(left.count());
        Call('G', k, std::vector<char>(ms.begin(), ms.end()), left);
    }
}

} // namespace fabemu
