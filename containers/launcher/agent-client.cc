#include "containers/launcher/agent-client.h"

#include "containers/agent/agent-protocol.h"

#include <thread>

namespace fabemu
{

namespace asio = boost::asio;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

AgentClient::AgentClient(std::string endpoint, std::string socketPath)
    : m_endpoint(std::move(endpoint)),
      m_path(std::move(socketPath)),
      m_socket(m_io)
{
}

AgentClient::~AgentClient()
{
    boost::system::error_code ec;
    m_socket.close(ec);
}

void
AgentClient::Send(const json& msg)
{
    const std::string line = msg.dump() + "\n";
    boost::system::error_code ec;
    asio::write(m_socket, asio::buffer(line), ec);
    if (ec)
    {
        throw AgentError("endpoint " + m_endpoint + ": cannot send to its agent (" + ec.message() +
                         "); has the VM exited?");
    }
}

AgentEvent
AgentClient::Receive(Clock::time_point deadline)
{
    if (!m_pending.empty())
    {
        AgentEvent msg = std::move(m_pending.front());
        m_pending.pop_front();
        return msg;
    }
    boost::system::error_code result = asio::error::would_block;
    asio::async_read_until(m_socket, m_inbox, '\n',
                           [&result](const boost::system::error_code& ec, size_t) { result = ec; });
    m_io.restart();
    m_io.run_until(deadline);
    if (result == asio::error::would_block)
    {
        m_socket.cancel();
        m_io.restart();
        m_io.run(); // let the cancelled read finish
        throw AgentTimeout("endpoint " + m_endpoint + ": no answer from its agent in time");
    }
    if (result)
    {
        throw AgentError("endpoint " + m_endpoint + ": connection to its agent lost (" +
                         result.message() + "); the VM has exited or died");
    }
    std::istream in(&m_inbox);
    std::string line;
    std::getline(in, line);
    std::string error;
    auto msg = ParseAgentEvent(line, error);
    if (!msg)
    {
        throw AgentError("endpoint " + m_endpoint + ": its agent sent garbage (" +
                         error.substr(0, 120) + "): " + line.substr(0, 80));
    }
    return std::move(*msg);
}

void
AgentClient::Connect(Millis timeout)
{
    const auto deadline = Clock::now() + timeout;
    boost::system::error_code ec;
    for (;;)
    {
        m_socket.connect(asio::local::stream_protocol::endpoint(m_path), ec);
        if (!ec)
        {
            break;
        }
        m_socket.close();
        if (Clock::now() >= deadline)
        {
            throw AgentError("endpoint " + m_endpoint + ": cannot connect to " + m_path + " (" +
                             ec.message() + ")");
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
}

json
AgentClient::WaitReady(Millis timeout)
{
    const auto deadline = Clock::now() + timeout;
    for (;;)
    {
        AgentEvent msg = Receive(deadline);
        if (msg.event == "ready")
        {
            return std::move(msg.raw);
        }
    }
}

void
AgentClient::File(const AgentEvent& msg)
{
    auto it = m_running.find(msg.id);
    if (it == m_running.end())
    {
        return;
    }
    if (msg.event == "stdout")
    {
        it->second.out += msg.data;
    }
    else if (msg.event == "stderr")
    {
        it->second.err += msg.data;
    }
    else if (msg.event == "exit")
    {
        it->second.exitCode = msg.code.value_or(-1);
        it->second.signal = msg.signal;
        it->second.timedOut = msg.timedOut;
        m_done[msg.id] = true;
    }
}

AgentEvent
AgentClient::Expect(uint64_t id, const std::string& event, Millis timeout)
{
    const auto deadline = Clock::now() + timeout;
    std::deque<AgentEvent> other;
    for (;;)
    {
        AgentEvent msg = Receive(deadline);
        if (msg.id == id && (msg.event == event || msg.event == "error"))
        {
            for (auto& o : other)
            {
                m_pending.push_back(std::move(o));
            }
            return msg;
        }
        other.push_back(std::move(msg));
    }
}

uint64_t
AgentClient::Start(const std::string& cmd, Millis timeout)
{
    const uint64_t id = m_nextId++;
    m_running[id] = CommandResult{};
    Send({{"op", "run"}, {"id", id}, {"cmd", cmd}, {"timeout_ms", timeout.count()}});
    return id;
}

CommandResult
AgentClient::Wait(uint64_t id, Millis timeout)
{
    const auto deadline = Clock::now() + timeout;
    while (!m_done[id])
    {
        const AgentEvent msg = Receive(deadline);
        if (msg.event == "error" && msg.id == id)
        {
            throw AgentError("endpoint " + m_endpoint + ": " +
                             (msg.raw.contains("message") ? msg.message : "error"));
        }
        File(msg);
    }
    CommandResult r = m_running[id];
    m_running.erase(id);
    m_done.erase(id);
    return r;
}

std::string
AgentClient::OutputSoFar(uint64_t id) const
{
    const auto it = m_running.find(id);
    return it == m_running.end() ? std::string() : it->second.out + it->second.err;
}

CommandResult
AgentClient::Run(const std::string& cmd, Millis timeout)
{
    // The guest kills the command at the timeout; the host waits a little longer for word of it.
    return Wait(Start(cmd, timeout), timeout + kAgentTimeoutGrace);
}

void
AgentClient::Kill(uint64_t id)
{
    Send({{"op", "kill"}, {"id", id}});
}

std::string
AgentClient::Fetch(const std::string& path, Millis timeout)
{
    const uint64_t id = m_nextId++;
    Send({{"op", "fetch"}, {"id", id}, {"path", path}});
    const AgentEvent msg = Expect(id, "file", timeout);
    if (msg.event == "error")
    {
        throw AgentError("endpoint " + m_endpoint + ": " +
                         (msg.raw.contains("message") ? msg.message : "fetch failed"));
    }
    std::string bytes;
    if (!Base64Decode(msg.data, bytes))
    {
        throw AgentError("endpoint " + m_endpoint + ": bad base64 for " + path);
    }
    return bytes;
}

void
AgentClient::Shutdown()
{
    try
    {
        Send({{"op", "shutdown"}});
    }
    catch (const AgentError&)
    {
        // Already gone: nothing to shut down.
    }
}

} // namespace fabemu
