/*
 * The lighter endpoint backend, for hosts whose kernel gives Soft-RoCE (or
 * Soft-iWARP) devices to network namespaces: one namespace per endpoint, its
 * eth0 one end of a veth pair whose other end, on the host, is where a VM's tap
 * would be (same name, fe<pid>t<i>), so a bridge or the emulator's edge takes it
 * alike. No kernel to boot: an endpoint is ready in milliseconds.
 *
 * Whether the host can do it is ProbeHostRdma's answer (containers/probe);
 * where it cannot, endpoints are VMs. A namespace made with device "none" has
 * no RDMA device: plain IP endpoints, which also lets this backend be tested
 * on hosts without rxe.
 */
#ifndef FABEMU_NETNS_ENDPOINT_H
#define FABEMU_NETNS_ENDPOINT_H

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>

namespace fabemu
{

class NetnsError : public std::runtime_error
{
  public:
    using std::runtime_error::runtime_error;
};

struct NetnsSpec
{
    std::string name;   ///< the endpoint, e.g. "h0" (errors name it)
    std::string netns;  ///< the namespace, e.g. "fe1234n0"
    std::string hostIf; ///< the host end of the veth, e.g. "fe1234t0"
    std::string ipv4;   ///< with its prefix, e.g. "10.0.0.1/24"
    std::string mac;    ///< e.g. "52:54:00:00:00:01"
    unsigned mtu{1500};
    std::string device{"rxe"}; ///< rxe, siw or none
};

class NetnsEndpoint
{
  public:
    /// Makes the namespace, the veth pair (offloads off both ends: frames carry
    /// real checksums and are never longer than the MTU), addresses, and the RDMA
    /// device on eth0. Throws NetnsError naming the endpoint and the step that
    /// failed; whatever was made is removed again.
    explicit NetnsEndpoint(NetnsSpec spec);
    /// Kills what still runs in the namespace and deletes it (the veth goes too).
    ~NetnsEndpoint();
    NetnsEndpoint(const NetnsEndpoint&) = delete;
    NetnsEndpoint& operator=(const NetnsEndpoint&) = delete;

    struct Result
    {
        int exitCode{-1}; ///< -1: killed (timeout) or could not start
        std::string out;  ///< stdout and stderr as they came
        bool timedOut{false};
    };
    /// Runs \p cmd with /bin/sh inside the namespace; killed after \p timeout.
    Result Run(const std::string& cmd, std::chrono::milliseconds timeout);
    /// The same in two steps: Start returns at once, Wait collects (at most
    /// \p timeout after it was started). Each command once.
    uint64_t Start(const std::string& cmd, std::chrono::milliseconds timeout);
    Result Wait(uint64_t id);
    /// Kills every command still running, and refuses any later Start
    /// (thread-safe: from a signal watcher).
    void KillAll();

    const NetnsSpec& Spec() const { return m_spec; }
    /// Milliseconds from the start of the constructor to a usable endpoint.
    std::chrono::milliseconds ReadyTime() const { return m_ready; }

    /// Deletes namespaces fe<pid>n<i> whose process <pid> is gone (a killed run's).
    static void SweepStale();

  private:
    void Teardown();
    struct Running
    {
        pid_t pid;
        int out;
        std::string cmd;
        std::chrono::steady_clock::time_point deadline;
        std::chrono::milliseconds timeout;
    };
    NetnsSpec m_spec;
    std::mutex m_mutex; ///< guards m_running (KillAll comes from another thread)
    std::map<uint64_t, Running> m_running;
    uint64_t m_nextId{1};
    std::atomic<bool> m_killed{false};
    bool m_made{false};
    std::chrono::milliseconds m_ready{0};
};

} // namespace fabemu

#endif
