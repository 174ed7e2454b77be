#include "containers/netns/netns-endpoint.h"

#include <sys/wait.h>

#include <array>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <poll.h>
#include <unistd.h>

namespace fabemu
{

namespace
{

/// Runs a host command (no shell metacharacters in our arguments); its exit status.
int
Sh(const std::string& cmd)
{
    return std::system((cmd + " >/dev/null 2>&1").c_str());
}

bool
Alive(long pid)
{
    return kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM;
}

/// Kills a command's process group, then waits (up to two seconds) until none of it is
/// left: SIGKILL is delivered asynchronously, and a background child of the command is
/// reparented, not reaped by us.
void
KillGroup(pid_t pgid)
{
    kill(-pgid, SIGKILL);
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    while (kill(-pgid, 0) == 0 && std::chrono::steady_clock::now() < until)
    {
        while (waitpid(-pgid, nullptr, WNOHANG) > 0) // the leader, and any we adopted
        {
        }
        usleep(2000);
    }
}

} // namespace

NetnsEndpoint::NetnsEndpoint(NetnsSpec spec) : m_spec(std::move(spec))
{
    const auto start = std::chrono::steady_clock::now();
    if (m_spec.device != "rxe" && m_spec.device != "siw" && m_spec.device != "none")
    {
        throw NetnsError("endpoint " + m_spec.name + ": device must be rxe, siw or none, not '" +
                         m_spec.device + "'");
    }
    const std::string ns = m_spec.netns;
    const std::string in = "ip netns exec " + ns + " ";
    const std::string mtu = std::to_string(m_spec.mtu);
    const std::pair<std::string, std::string> steps[] = {
        {"ip netns add " + ns, "creating network namespace " + ns},
        {"ip link add " + m_spec.hostIf + " mtu " + mtu + " type veth peer name eth0 mtu " + mtu +
             " netns " + ns,
         "creating the veth pair " + m_spec.hostIf + " / eth0"},
        {"ip -n " + ns + " link set lo up", "bringing lo up"},
        {"ip -n " + ns + " link set eth0 address " + m_spec.mac + " up",
         "setting eth0's MAC " + m_spec.mac},
        {"ip -n " + ns + " addr add " + m_spec.ipv4 + " dev eth0",
         "adding " + m_spec.ipv4 + " to eth0"},
        {"ip link set " + m_spec.hostIf + " up", "bringing " + m_spec.hostIf + " up"},
        // Real checksums and MTU-sized frames, as virtio with csum=off gives (FINDINGS).
        {"ethtool -K " + m_spec.hostIf + " tx off tso off gso off gro off",
         "turning offloads off on " + m_spec.hostIf},
        {in + "ethtool -K eth0 tx off tso off gso off gro off", "turning offloads off on eth0"},
    };
    try
    {
        for (const auto& [cmd, what] : steps)
        {
            if (Sh(cmd) != 0)
            {
                throw NetnsError("endpoint " + m_spec.name + ": " + what + " failed (" + cmd + ")");
            }
            m_made = true;
        }
        if (m_spec.device != "none")
        {
            const std::string dev = m_spec.device + "0";
            const std::string cmd =
                in + "rdma link add " + dev + " type " + m_spec.device + " netdev eth0";
            if (Sh(cmd) != 0)
            {
                throw NetnsError("endpoint " + m_spec.name +
                                 ": the host kernel would not give namespace " + ns + " a " +
                                 m_spec.device + " device (" + cmd + "); see fabemu doctor");
            }
        }
    }
    catch (...)
    {
        Teardown();
        throw;
    }
    m_ready = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::steady_clock::now() - start);
}

NetnsEndpoint::~NetnsEndpoint()
{
    Teardown();
}

void
NetnsEndpoint::Teardown()
{
    if (!m_made)
    {
        return;
    }
    // Nothing may outlive the endpoint: kill what runs in it, then delete it.
    {
        std::lock_guard<std::mutex> lock(m_mutex);
        for (const auto& [id, run] : m_running)
        {
            KillGroup(run.pid);
            waitpid(run.pid, nullptr, 0);
            close(run.out);
        }
        m_running.clear();
    }
    Sh("ip netns pids " + m_spec.netns + " | xargs -r kill -9");
    Sh("ip netns del " + m_spec.netns);
    Sh("ip link del " + m_spec.hostIf); // gone with the namespace already, normally
    m_made = false;
}

NetnsEndpoint::Result
NetnsEndpoint::Run(const std::string& cmd, std::chrono::milliseconds timeout)
{
    return Wait(Start(cmd, timeout));
}

uint64_t
NetnsEndpoint::Start(const std::string& cmd, std::chrono::milliseconds timeout)
{
    if (m_killed)
    {
        throw NetnsError("endpoint " + m_spec.name + ": stopped; '" + cmd + "' not started");
    }
    int out[2];
    if (pipe2(out, O_CLOEXEC) != 0)
    {
        throw NetnsError("endpoint " + m_spec.name + ": pipe: " + strerror(errno));
    }
    const pid_t pid = fork();
    if (pid < 0)
    {
        close(out[0]);
        close(out[1]);
        throw NetnsError("endpoint " + m_spec.name + ": fork: " + strerror(errno));
    }
    if (pid == 0)
    {
        setpgid(0, 0); // its own group: a timeout kills the whole command
        dup2(out[1], 1);
        dup2(out[1], 2);
        execlp("ip", "ip", "netns", "exec", m_spec.netns.c_str(), "/bin/sh", "-c", cmd.c_str(),
               static_cast<char*>(nullptr));
        _exit(127);
    }
    setpgid(pid, pid); // also from here: no race with a KillAll right after
    close(out[1]);
    std::lock_guard<std::mutex> lock(m_mutex);
    const uint64_t id = m_nextId++;
    m_running[id] = {pid, out[0], cmd, std::chrono::steady_clock::now() + timeout, timeout};
    return id;
}

NetnsEndpoint::Result
NetnsEndpoint::Wait(uint64_t id)
{
    Running run;
    {
        std::lock_guard<std::mutex> lock(m_mutex);
        auto it = m_running.find(id);
        if (it == m_running.end())
        {
            throw NetnsError("endpoint " + m_spec.name + ": no command " + std::to_string(id));
        }
        run = it->second;
    }
    Result r;
    std::array<char, 4096> buf;
    for (;;)
    {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            run.deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0)
        {
            r.timedOut = true;
            KillGroup(run.pid);
            break;
        }
        pollfd pfd{run.out, POLLIN, 0};
        const int ready = poll(&pfd, 1, static_cast<int>(left.count()));
        if (ready < 0 && errno != EINTR)
        {
            break;
        }
        if (ready <= 0)
        {
            continue; // the deadline decides
        }
        const ssize_t n = read(run.out, buf.data(), buf.size());
        if (n == 0)
        {
            break; // the command closed its output: it has ended
        }
        if (n > 0)
        {
            r.out.append(buf.data(), static_cast<size_t>(n));
        }
    }
    int status = 0;
    waitpid(run.pid, &status, 0);
    {
        std::lock_guard<std::mutex> lock(m_mutex);
        close(run.out);
        m_running.erase(id);
    }
    r.exitCode = !r.timedOut && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    if (r.timedOut)
    {
        r.out += "fabemu: endpoint " + m_spec.name + ": '" + run.cmd + "' killed after " +
                 std::to_string(run.timeout.count()) + " ms\n";
    }
    return r;
}

void
NetnsEndpoint::KillAll()
{
    std::lock_guard<std::mutex> lock(m_mutex);
    m_killed = true; // and nothing starts afterwards
    for (const auto& [id, run] : m_running)
    {
        kill(-run.pid, SIGKILL);
    }
}

void
NetnsEndpoint::SweepStale()
{
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator("/var/run/netns", ec))
    {
        const std::string name = entry.path().filename().string();
        long pid = 0;
        unsigned index = 0;
        char tail = 0;
        if (std::sscanf(name.c_str(), "fe%ldn%u%c", &pid, &index, &tail) == 2 && !Alive(pid))
        {
            Sh("ip netns pids " + name + " | xargs -r kill -9");
            Sh("ip netns del " + name);
        }
    }
}

} // namespace fabemu
