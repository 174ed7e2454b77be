#include "emulator/fabemu/status-server.h"

#include <boost/asio.hpp>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <thread>
#include <unistd.h>

namespace fabemu
{

namespace asio = boost::asio;
using Local = asio::local::stream_protocol;

void
LiveStatus::Set(const std::string& key, nlohmann::json value)
{
    std::lock_guard<std::mutex> lock(m_mutex);
    m_document[key] = std::move(value);
    if (key == "simulation")
    {
        m_when = std::chrono::steady_clock::now();
    }
}

std::string
LiveStatus::Read() const
{
    std::lock_guard<std::mutex> lock(m_mutex);
    nlohmann::json j = m_document;
    j["age_ms"] = std::chrono::duration_cast<std::chrono::milliseconds>(
                      std::chrono::steady_clock::now() - m_when)
                      .count();
    return j.dump() + "\n";
}

struct StatusServer::Impl
{
    asio::io_context io;
    Local::acceptor acceptor{io};
    std::shared_ptr<const LiveStatus> status;
    std::thread thread;

    void Accept()
    {
        acceptor.async_accept([this](boost::system::error_code ec, Local::socket socket) {
            if (ec)
            {
                return; // closed: the server is going away
            }
            auto peer = std::make_shared<Local::socket>(std::move(socket));
            auto doc = std::make_shared<std::string>(status->Read());
            asio::async_write(*peer, asio::buffer(*doc),
                              [peer, doc](boost::system::error_code, size_t) {
                                  boost::system::error_code ignored;
                                  peer->shutdown(Local::socket::shutdown_both, ignored);
                              });
            Accept();
        });
    }
};

StatusServer::StatusServer(std::string path, std::shared_ptr<const LiveStatus> status)
    : m_path(std::move(path)),
      m_impl(std::make_unique<Impl>())
{
    m_impl->status = std::move(status);
    boost::system::error_code ec;
    std::error_code fsEc;
    if (std::filesystem::exists(m_path, fsEc))
    {
        Local::socket probe(m_impl->io);
        probe.connect(Local::endpoint(m_path), ec);
        if (!ec)
        {
            throw StatusError("status socket " + m_path + " is served by another emulator");
        }
        std::filesystem::remove(m_path, fsEc); // left by a process that is gone
    }
    const Local::endpoint endpoint(m_path);
    m_impl->acceptor.open(endpoint.protocol(), ec);
    if (!ec)
    {
        m_impl->acceptor.bind(endpoint, ec);
    }
    // Owner only, before anyone can connect: the counters are the owner's business.
    if (!ec && chmod(m_path.c_str(), S_IRUSR | S_IWUSR) != 0)
    {
        ec.assign(errno, boost::system::system_category());
    }
    if (!ec)
    {
        m_impl->acceptor.listen(asio::socket_base::max_listen_connections, ec);
    }
    if (ec)
    {
        std::filesystem::remove(m_path, fsEc);
        throw StatusError("status socket " + m_path + ": " + ec.message());
    }
    m_impl->Accept();
    m_impl->thread = std::thread([this] { m_impl->io.run(); });
}

StatusServer::~StatusServer()
{
    m_impl->io.stop();
    if (m_impl->thread.joinable())
    {
        m_impl->thread.join();
    }
    boost::system::error_code ec;
    m_impl->acceptor.close(ec);
    std::error_code fsEc;
    std::filesystem::remove(m_path, fsEc);
}

namespace
{

std::string
RuntimeDir()
{
    const char* xdg = std::getenv("XDG_RUNTIME_DIR");
    return xdg && *xdg ? xdg : "/tmp";
}

} // namespace

std::string
StatusSocketPath(long pid)
{
    return RuntimeDir() + "/fabemu-" + std::to_string(pid) + ".status";
}

long
PidOfStatusSocket(const std::string& name)
{
    // Exactly as StatusSocketPath writes it: digits without sign, space or leading zero,
    // a pid that fits pid_t (kill(2) of a wrapped one would reach another process group).
    static const std::string head = "fabemu-";
    static const std::string tail = ".status";
    if (name.size() <= head.size() + tail.size() || name.compare(0, head.size(), head) != 0 ||
        name.compare(name.size() - tail.size(), tail.size(), tail) != 0)
    {
        return 0;
    }
    const std::string digits = name.substr(head.size(), name.size() - head.size() - tail.size());
    if (digits.size() > 10 || digits[0] == '0' ||
        digits.find_first_not_of("0123456789") != std::string::npos)
    {
        return 0;
    }
    const long long pid = std::stoll(digits); // at most 10 digits: no overflow
    return pid <= std::numeric_limits<pid_t>::max() ? static_cast<long>(pid) : 0;
}

std::vector<std::string>
FindStatusSockets()
{
    std::vector<std::string> found;
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(RuntimeDir(), ec))
    {
        const long pid = PidOfStatusSocket(entry.path().filename().string());
        if (pid > 0 && (kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM))
        {
            found.push_back(entry.path().string());
        }
    }
    std::sort(found.begin(), found.end());
    return found;
}

void
SweepStaleStatusSockets()
{
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(RuntimeDir(), ec))
    {
        const long pid = PidOfStatusSocket(entry.path().filename().string());
        if (pid > 0 && kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH)
        {
            std::filesystem::remove(entry.path(), ec); // its emulator was killed outright
        }
    }
}

std::string
ReadStatus(const std::string& path, std::chrono::milliseconds timeout)
{
    asio::io_context io;
    Local::socket socket(io);
    boost::system::error_code ec;
    socket.connect(Local::endpoint(path), ec);
    if (ec)
    {
        throw StatusError(path + ": " + ec.message() + " (is the emulation still running?)");
    }
    std::string doc;
    bool done = false;
    asio::async_read(socket, asio::dynamic_buffer(doc),
                     [&](boost::system::error_code readEc, size_t) {
                         done = readEc == asio::error::eof || !readEc;
                     });
    io.run_for(timeout);
    if (!done || doc.empty())
    {
        throw StatusError(path + ": no status within " + std::to_string(timeout.count()) + " ms");
    }
    return doc;
}

} // namespace fabemu
