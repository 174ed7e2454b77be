/*
 * The live status of a running emulation: a Unix-domain stream socket (mode
 * 0600, so only its owner reads it) that answers every connection with one
 * JSON document of the run's counters as they are now, then closes. Read it
 * with `fabemu status` (or any client: `socat - UNIX-CONNECT:PATH`).
 *
 * The document is published by the simulation thread (LiveStatus::Publish)
 * and served from the server's own thread (Boost.Asio), so a client never
 * touches, waits for or slows the simulation.
 */
#ifndef FABEMU_STATUS_SERVER_H
#define FABEMU_STATUS_SERVER_H

#include <nlohmann/json.hpp>

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

namespace fabemu
{

class StatusError : public std::runtime_error
{
  public:
    using std::runtime_error::runtime_error;
};

/// The latest document, shared between the threads that write its parts (the
/// simulation its counters, the command runner its commands) and the server.
class LiveStatus
{
  public:
    /// Replaces the member \p key of the document.
    void Set(const std::string& key, nlohmann::json value);
    /// The document, with "age_ms": how long ago the simulation last published.
    std::string Read() const;

  private:
    mutable std::mutex m_mutex;
    nlohmann::json m_document = nlohmann::json::object();
    std::chrono::steady_clock::time_point m_when{std::chrono::steady_clock::now()};
};

class StatusServer
{
  public:
    /// Binds \p path (a stale socket there is replaced; a live one is an error),
    /// makes it 0600 and serves \p status until destroyed, which removes the path.
    StatusServer(std::string path, std::shared_ptr<const LiveStatus> status);
    ~StatusServer();
    StatusServer(const StatusServer&) = delete;
    StatusServer& operator=(const StatusServer&) = delete;

    const std::string& Path() const { return m_path; }

  private:
    struct Impl;
    std::string m_path;
    std::unique_ptr<Impl> m_impl;
};

/// Where the emulator of process \p pid serves its status:
/// $XDG_RUNTIME_DIR (or /tmp) / fabemu-PID.status.
std::string StatusSocketPath(long pid);

/// The pid in the name of a status socket ("fabemu-PID.status", as StatusSocketPath
/// writes it), or 0 for any other name (a sign, a leading zero, a pid beyond pid_t).
long PidOfStatusSocket(const std::string& name);

/// The sockets of running emulators (those whose process is alive).
std::vector<std::string> FindStatusSockets();

/// Removes the sockets left by emulators that were killed outright (SIGKILL: no
/// destructor ran); the next emulation calls it before it opens its own.
void SweepStaleStatusSockets();

/// Connects to \p path and returns the document it serves; throws StatusError
/// naming the path when nothing answers within \p timeout.
std::string ReadStatus(const std::string& path,
                       std::chrono::milliseconds timeout = std::chrono::milliseconds(2000));

} // namespace fabemu

#endif
