/*
 * Host side of the guest agent's protocol (containers/agent/agent-protocol.h):
 * connect to the Unix socket QEMU exposes for the VM's virtio-serial port,
 * wait for the agent to be ready, run commands with timeouts and collect
 * their output. Boost.Asio underneath; every call has a deadline.
 */
#ifndef FABEMU_AGENT_CLIENT_H
#define FABEMU_AGENT_CLIENT_H

#include "containers/agent/agent-protocol.h"

#include <boost/asio.hpp>
#include <nlohmann/json.hpp>

#include <chrono>
#include <deque>
#include <map>
#include <stdexcept>
#include <string>

namespace fabemu
{

/// The guest's agent kills a command at its timeout; the host waits this much longer
/// for word of that: its exit, and what it printed until then.
constexpr std::chrono::seconds kAgentTimeoutGrace{5};

/// An agent call that failed: the message names the endpoint and what happened.
class AgentError : public std::runtime_error
{
  public:
    using std::runtime_error::runtime_error;
};

/// No answer in time; the connection is still open and may be used again.
class AgentTimeout : public AgentError
{
  public:
    using AgentError::AgentError;
};

struct CommandResult
{
    int exitCode{-1}; ///< -1 when killed by a signal
    int signal{0};
    bool timedOut{false};
    std::string out;
    std::string err;
};

class AgentClient
{
  public:
    using Millis = std::chrono::milliseconds;

    /// \param endpoint the endpoint's name, for messages
    AgentClient(std::string endpoint, std::string socketPath);
    ~AgentClient();

    /// Connects; the socket may not exist yet, so this retries until \p timeout.
    void Connect(Millis timeout);
    /// Waits for the ready event (AgentTimeout if not yet; the connection stays).
    nlohmann::json WaitReady(Millis timeout);
    /// Starts a command; its output is collected until Wait.
    uint64_t Start(const std::string& cmd, Millis timeout);
    /// Waits for a started command's exit.
    CommandResult Wait(uint64_t id, Millis timeout);
    /// What a started command has printed so far (its output, then its errors), as
    /// received up to now: what is left of it when Wait gave up.
    std::string OutputSoFar(uint64_t id) const;
    CommandResult Run(const std::string& cmd, Millis timeout);
    void Kill(uint64_t id);
    /// A file's bytes from the guest.
    std::string Fetch(const std::string& path, Millis timeout);
    /// Asks the guest to power off; does not wait.
    void Shutdown();
    const std::string& Endpoint() const { return m_endpoint; }

  private:
    void Send(const nlohmann::json& msg);
    /// The next message, or throws AgentError at the deadline or on a lost connection.
    AgentEvent Receive(std::chrono::steady_clock::time_point deadline);
    /// Reads messages until one matches \p id and \p event (others are filed).
    AgentEvent Expect(uint64_t id, const std::string& event, Millis timeout);
    void File(const AgentEvent& msg);

    std::string m_endpoint;
    std::string m_path;
    boost::asio::io_context m_io;
    boost::asio::local::stream_protocol::socket m_socket;
    boost::asio::streambuf m_inbox;
    uint64_t m_nextId{1};
    std::map<uint64_t, CommandResult> m_running;
    std::map<uint64_t, bool> m_done;
    std::deque<AgentEvent> m_pending; ///< messages read while waiting for another
};

} // namespace fabemu

#endif
