// fabemu-agent: the guest side of the endpoint VMs' control channel.
//
// Runs as PID 1 of the VM's initramfs once /init has set the endpoint up. It
// reads commands from the virtio-serial port, runs each with /bin/sh -c in its
// own process group, streams its stdout and stderr, and reports its exit. As
// PID 1 it also reaps every orphan. Single-threaded: one poll() loop.
#include "containers/agent/agent-protocol.h"

#include <nlohmann/json.hpp>
#include <sys/reboot.h>
#include <sys/wait.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <iostream>
#include <map>
#include <poll.h>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

using nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace
{

struct Child
{
    pid_t pid{-1};
    int out{-1};
    int err{-1};
    bool exited{false};
    int status{0};
    bool timedOut{false};
    Clock::time_point deadline{Clock::time_point::max()};
};

int g_port = -1;
std::map<int64_t, Child> g_children;

void
Send(const json& msg)
{
    const std::string line = msg.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
    size_t done = 0;
    while (done < line.size())
    {
        const ssize_t n = write(g_port, line.data() + done, line.size() - done);
        if (n < 0 && errno == EINTR)
        {
            continue;
        }
        if (n <= 0)
        {
            return; // the host went away: nothing to tell
        }
        done += static_cast<size_t>(n);
    }
}

std::string
ReadFile(const std::string& path)
{
    std::ifstream in(path, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

void
Run(int64_t id, const std::string& cmd, int64_t timeoutMs)
{
    int out[2];
    int err[2];
    if (g_children.count(id) || pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0)
    {
        Send(
            {{"event", "error"}, {"id", id}, {"message", "cannot start: duplicate id or no pipe"}});
        return;
    }
    const pid_t pid = fork();
    if (pid == 0)
    {
        setsid();
        dup2(out[1], 1);
        dup2(err[1], 2);
        const int null = open("/dev/null", O_RDONLY);
        dup2(null, 0);
        execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
        _exit(127);
    }
    close(out[1]);
    close(err[1]);
    Child c;
    c.pid = pid;
    c.out = out[0];
    c.err = err[0];
    if (timeoutMs > 0)
    {
        c.deadline = Clock::now() + std::chrono::milliseconds(timeoutMs);
    }
    g_children[id] = c;
}

void
Handle(const std::string& line)
{
    std::string error;
    const auto request = fabemu::ParseAgentRequest(line, error);
    if (!request)
    {
        Send({{"event", "error"}, {"message", error}});
        return;
    }
    const std::string& op = request->op;
    const int64_t id = request->id;
    if (op == "run")
    {
        Run(id, request->cmd, request->timeoutMs);
    }
    else if (op == "kill")
    {
        auto it = g_children.find(id);
        if (it != g_children.end() && !it->second.exited)
        {
            kill(-it->second.pid, SIGKILL);
        }
    }
    else if (op == "fetch")
    {
        const std::string& path = request->path;
        if (access(path.c_str(), R_OK) != 0)
        {
            Send({{"event", "error"}, {"id", id}, {"message", "cannot read " + path}});
        }
        else
        {
            Send({{"event", "file"}, {"id", id}, {"data", fabemu::Base64Encode(ReadFile(path))}});
        }
    }
    else if (op == "ping")
    {
        Send({{"event", "pong"}, {"id", id}});
    }
    else if (op == "shutdown")
    {
        for (auto& [cid, c] : g_children)
        {
            if (!c.exited)
            {
                kill(-c.pid, SIGKILL);
            }
        }
        sync();
        reboot(RB_POWER_OFF);
    }
    else
    {
        Send({{"event", "error"}, {"id", id}, {"message", "unknown op '" + op + "'"}});
    }
}

/// Reads what a child wrote; closes the pipe at its end.
void
Drain(int64_t id, int& fd, const char* stream)
{
    char buf[16384];
    const ssize_t n = read(fd, buf, sizeof(buf));
    if (n > 0)
    {
        Send({{"event", stream}, {"id", id}, {"data", std::string(buf, static_cast<size_t>(n))}});
    }
    else if (n == 0 || (errno != EINTR && errno != EAGAIN))
    {
        close(fd);
        fd = -1;
    }
}

void
Reap()
{
    int status = 0;
    pid_t pid;
    while ((pid = waitpid(-1, &status, WNOHANG)) > 0)
    {
        for (auto& [id, c] : g_children)
        {
            if (c.pid == pid)
            {
                c.exited = true;
                c.status = status;
            }
        }
        // Anything else was an orphan: PID 1 reaps it and moves on.
    }
}

void
Finish()
{
    for (auto it = g_children.begin(); it != g_children.end();)
    {
        Child& c = it->second;
        if (c.exited && c.out < 0 && c.err < 0)
        {
            json done = {{"event", "exit"}, {"id", it->first}, {"timed_out", c.timedOut}};
            if (WIFEXITED(c.status))
            {
                done["code"] = WEXITSTATUS(c.status);
            }
            else
            {
                done["signal"] = WTERMSIG(c.status);
            }
            Send(done);
            it = g_children.erase(it);
        }
        else
        {
            ++it;
        }
    }
}

} // namespace

int
main(int argc, char** argv)
{
    std::string port;
    std::string name = "endpoint";
    std::string device;
    std::string status = "/run/fabemu-init.status";
    for (int i = 1; i + 1 < argc; i += 2)
    {
        const std::string key = argv[i];
        if (key == "--port")
        {
            port = argv[i + 1];
        }
        else if (key == "--name")
        {
            name = argv[i + 1];
        }
        else if (key == "--device")
        {
            device = argv[i + 1];
        }
        else if (key == "--status")
        {
            status = argv[i + 1];
        }
    }
    g_port = open(port.c_str(), O_RDWR | O_CLOEXEC);
    if (g_port < 0)
    {
        std::cerr << "fabemu-agent: cannot open port '" << port << "': " << strerror(errno) << "\n";
        // As PID 1 we must not exit: keep the VM up for its console to be read.
        for (;;)
        {
            pause();
        }
    }
    signal(SIGPIPE, SIG_IGN);
    std::string init = ReadFile(status);
    while (!init.empty() && (init.back() == '\n' || init.back() == ' '))
    {
        init.pop_back();
    }
    double uptime = 0;
    std::istringstream(ReadFile("/proc/uptime")) >> uptime;
    Send({{"event", "ready"},
          {"name", name},
          {"device", device},
          {"init", init.empty() ? "ok" : init},
          {"uptime_ms", static_cast<int64_t>(uptime * 1000)}});

    std::string inbox;
    for (;;)
    {
        std::vector<pollfd> fds{{g_port, POLLIN, 0}};
        std::vector<std::pair<int64_t, bool>> who{{0, false}};
        auto wake = Clock::now() + std::chrono::milliseconds(200);
        for (auto& [id, c] : g_children)
        {
            if (c.out >= 0)
            {
                fds.push_back({c.out, POLLIN, 0});
                who.emplace_back(id, false);
            }
            if (c.err >= 0)
            {
                fds.push_back({c.err, POLLIN, 0});
                who.emplace_back(id, true);
            }
            wake = std::min(wake, c.deadline);
        }
        const auto waitMs = std::chrono::duration_cast<std::chrono::milliseconds>(
                                std::max(wake - Clock::now(), Clock::duration::zero()))
                                .count();
        poll(fds.data(), fds.size(), static_cast<int>(waitMs));
        if (fds[0].revents & POLLIN)
        {
            char buf[65536];
            const ssize_t n = read(g_port, buf, sizeof(buf));
            if (n > 0)
            {
                inbox.append(buf, static_cast<size_t>(n));
                size_t nl;
                while ((nl = inbox.find('\n')) != std::string::npos)
                {
                    const std::string line = inbox.substr(0, nl);
                    inbox.erase(0, nl + 1);
                    if (!line.empty())
                    {
                        Handle(line);
                    }
                }
            }
        }
        else if (fds[0].revents & (POLLHUP | POLLERR))
        {
            usleep(100000); // the host is not connected (yet): do not spin
        }
        for (size_t i = 1; i < fds.size(); ++i)
        {
            if (fds[i].revents & (POLLIN | POLLHUP | POLLERR))
            {
                auto it = g_children.find(who[i].first);
                if (it != g_children.end())
                {
                    Drain(it->first, who[i].second ? it->second.err : it->second.out,
                          who[i].second ? "stderr" : "stdout");
                }
            }
        }
        const auto now = Clock::now();
        for (auto& [id, c] : g_children)
        {
            if (!c.exited && now >= c.deadline && !c.timedOut)
            {
                c.timedOut = true;
                kill(-c.pid, SIGKILL);
            }
        }
        Reap();
        Finish();
    }
}
