/*
 * Starts endpoint VMs with QEMU and owns them: each Vm is one QEMU process,
 * its tap (QEMU creates it and it vanishes with QEMU), its run folder (agent
 * socket, console log) and its agent connection. A Vm shuts down and cleans
 * up when destroyed; QEMU dies with its parent even when the parent is killed
 * (PR_SET_PDEATHSIG), and run folders of dead owners are swept at the next
 * start.
 */
#ifndef FABEMU_VM_LAUNCHER_H
#define FABEMU_VM_LAUNCHER_H

#include "containers/launcher/agent-client.h"

#include <sys/types.h>

#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>

namespace fabemu
{

/// A VM that could not be started: the message names it and ends with its console's tail.
class LaunchError : public std::runtime_error
{
  public:
    using std::runtime_error::runtime_error;
};

struct VmImage
{
    std::string kernel;
    std::string initramfs;
    /// The image built in \p dir (build-image.sh's output folder).
    static VmImage In(const std::string& dir);
};

struct VmSpec
{
    std::string name;          ///< h0, h1, ...: in messages and the guest's hostname
    std::string ipv4;          ///< with prefix, e.g. 10.0.0.1/24
    std::string mac;           ///< e.g. 52:54:00:00:00:01
    uint32_t mtu{1500};        ///< eth0's MTU (>= 4200 for IB MTU 4096)
    std::string device{"rxe"}; ///< rxe | siw
    std::string tap;           ///< host tap name (QEMU creates it)
    uint32_t memoryMb{512};
    bool tcpEcn{false}; ///< the guest's TCP asks for ECN (net.ipv4.tcp_ecn=1)
};

enum class Accel
{
    Auto, ///< KVM if a probe VM boots with it in time, else TCG
    Kvm,
    Tcg,
};

class Vm
{
  public:
    ~Vm();
    Vm(const Vm&) = delete;
    Vm& operator=(const Vm&) = delete;

    const VmSpec& Spec() const { return m_spec; }
    pid_t Pid() const { return m_pid; }
    AgentClient& Agent() { return *m_agent; }
    /// Guest uptime when its agent said ready, and host wall time from launch to ready.
    std::chrono::milliseconds GuestBootTime() const { return m_guestBoot; }
    std::chrono::milliseconds ReadyTime() const { return m_ready; }
    bool Alive();
    /// The last \p lines of the guest console.
    std::string ConsoleTail(size_t lines = 20) const;
    const std::string& RunDir() const { return m_runDir; }
    /// Powers the guest off, waits up to \p timeout, then kills QEMU.
    void Shutdown(std::chrono::milliseconds timeout = std::chrono::seconds(5));
    /// Kills QEMU at once (as a crash would).
    void Kill();

  private:
    friend class VmLauncher;
    Vm() = default;
    void Reap(std::chrono::milliseconds timeout);

    VmSpec m_spec;
    pid_t m_pid{-1};
    std::string m_runDir;
    std::unique_ptr<AgentClient> m_agent;
    std::chrono::milliseconds m_guestBoot{0};
    std::chrono::milliseconds m_ready{0};
    std::chrono::steady_clock::time_point m_started; ///< when QEMU was started
};

class VmLauncher
{
  public:
    VmLauncher(VmImage image, Accel accel = Accel::Auto, std::string runRoot = "/tmp");

    /// Boots a VM and waits until its device is ACTIVE and its agent ready.
    /// Throws LaunchError naming the VM, with its console's tail, on any failure.
    std::unique_ptr<Vm> Start(const VmSpec& spec,
                              std::chrono::seconds readyTimeout = std::chrono::seconds(90));

    /// Boots the VMs of \p specs side by side, as many at once as there are cores, and
    /// waits until all are ready, in order.
    /// Throws as Start does for the first that fails; the others are stopped.
    std::vector<std::unique_ptr<Vm>> StartAll(
        const std::vector<VmSpec>& specs,
        std::chrono::seconds readyTimeout = std::chrono::seconds(90));

    Accel GetAccel() const { return m_accel; }

    /// Removes run folders and bridges left by FabricEmu processes that are gone.
    static void SweepStale(const std::string& runRoot = "/tmp");

  private:
    /// Starts QEMU for \p spec; the boot goes on (AwaitReady connects to its agent).
    std::unique_ptr<Vm> Spawn(const VmSpec& spec, bool kvm);
    /// Waits until \p vm's device is ACTIVE and its agent ready, or kills it and throws.
    static std::unique_ptr<Vm> AwaitReady(std::unique_ptr<Vm> vm,
                                          std::chrono::seconds readyTimeout);
    VmImage m_image;
    Accel m_accel;
    std::string m_runRoot;
};

} // namespace fabemu

#endif
