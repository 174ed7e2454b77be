#include "containers/launcher/vm-launcher.h"

#include <sys/prctl.h>
#include <sys/wait.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <deque>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>
#include <unistd.h>
#include <vector>

namespace fabemu
{

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

namespace
{

std::string
Tail(const std::string& path, size_t lines)
{
    std::ifstream in(path);
    std::deque<std::string> last;
    std::string line;
    while (std::getline(in, line))
    {
        last.push_back(line);
        if (last.size() > lines)
        {
            last.pop_front();
        }
    }
    std::string out;
    for (const auto& l : last)
    {
        out += "  | " + l + "\n";
    }
    return out.empty() ? "  | (nothing)\n" : out;
}

bool
ProcessAlive(pid_t pid)
{
    return pid > 0 && (kill(pid, 0) == 0 || errno == EPERM);
}

/// Where the KVM probe's outcome for this boot of the host is kept: beside the image's
/// kernel, named by the kernel's boot id. "" when the boot id cannot be read.
std::string
ProbeRecord(const VmImage& image)
{
    std::ifstream in("/proc/sys/kernel/random/boot_id");
    std::string id;
    if (!std::getline(in, id) || id.empty() || image.kernel.empty())
    {
        return "";
    }
    return (fs::path(image.kernel).parent_path() / ("accel-" + id)).string();
}

std::string
Slurp(const std::string& path)
{
    std::ifstream in(path);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

/// Writes \p text to \p path whole or not at all (a rename), so that runs at the same
/// time read either nothing or the record. Best effort: a read-only cache only asks again.
void
Record(const std::string& path, const std::string& text)
{
    if (path.empty())
    {
        return;
    }
    const std::string tmp = path + "." + std::to_string(getpid());
    {
        std::ofstream out(tmp);
        out << text;
        if (!out)
        {
            std::error_code ec;
            fs::remove(tmp, ec);
            return;
        }
    }
    std::error_code ec;
    fs::rename(tmp, path, ec);
    if (ec)
    {
        fs::remove(tmp, ec);
        return;
    }
    // Records of earlier boots answer nothing now (nor what a crash left half-written).
    for (const auto& e : fs::directory_iterator(fs::path(path).parent_path(), ec))
    {
        const std::string name = e.path().filename().string();
        if (name.rfind("accel-", 0) == 0 && e.path() != fs::path(path))
        {
            fs::remove(e.path(), ec);
        }
    }
}

} // namespace

VmImage
VmImage::In(const std::string& dir)
{
    VmImage image{dir + "/vmlinuz", dir + "/initramfs.cpio.gz"};
    for (const auto& f : {image.kernel, image.initramfs})
    {
        if (!fs::exists(f))
        {
            throw LaunchError("VM image incomplete: " + f + " is missing (run fabemu image build)");
        }
    }
    return image;
}

Vm::~Vm()
{
    Shutdown(std::chrono::seconds(3));
}

bool
Vm::Alive()
{
    if (m_pid <= 0)
    {
        return false;
    }
    int status = 0;
    if (waitpid(m_pid, &status, WNOHANG) == m_pid)
    {
        m_pid = -1;
        return false;
    }
    return true;
}

std::string
Vm::ConsoleTail(size_t lines) const
{
    return Tail(m_runDir + "/console.log", lines);
}

void
Vm::Reap(milliseconds timeout)
{
    const auto deadline = Clock::now() + timeout;
    while (m_pid > 0 && Clock::now() < deadline)
    {
        if (!Alive())
        {
            return;
        }
        std::this_thread::sleep_for(milliseconds(20));
    }
    if (m_pid > 0)
    {
        kill(m_pid, SIGKILL);
        waitpid(m_pid, nullptr, 0);
        m_pid = -1;
    }
}

void
Vm::Shutdown(milliseconds timeout)
{
    if (m_agent && m_pid > 0)
    {
        m_agent->Shutdown();
    }
    m_agent.reset();
    Reap(timeout);
    if (!m_runDir.empty())
    {
        std::error_code ec;
        fs::remove_all(m_runDir, ec);
        m_runDir.clear();
    }
}

void
Vm::Kill()
{
    if (m_pid > 0)
    {
        kill(m_pid, SIGKILL);
        waitpid(m_pid, nullptr, 0);
        m_pid = -1;
    }
}

VmLauncher::VmLauncher(VmImage image, Accel accel, std::string runRoot)
    : m_image(std::move(image)),
      m_accel(accel),
      m_runRoot(std::move(runRoot))
{
    SweepStale(m_runRoot);
    if (m_accel == Accel::Auto)
    {
        // KVM only where /dev/kvm is usable and a probe VM boots with it in time: on
        // machines with broken nested virtualisation KVM guests hang at boot.
        // The probe costs up to 10 s where KVM hangs, so its outcome is kept beside the
        // image for the rest of this boot of the host (a new boot id asks again).
        // Only the two outcomes that say something of KVM are kept: it booted, or it
        // hung (not ready in time); any other failure (no QEMU, no tap) asks again next
        // time. A kept "kvm" counts only where this process may open /dev/kvm.
        const std::string known = ProbeRecord(m_image);
        const std::string before = known.empty() ? "" : Slurp(known);
        const bool usable = access("/dev/kvm", R_OK | W_OK) == 0;
        m_accel = Accel::Tcg;
        if (before == "kvm\n" && usable)
        {
            m_accel = Accel::Kvm;
        }
        else if (before != "tcg\n" && usable)
        {
            try
            {
                VmSpec probe{"kvm-probe", "",    "52:54:00:ff:ff:fe",
                             1500,        "rxe", "fekvm" + std::to_string(getpid()),
                             256};
                auto vm = AwaitReady(Spawn(probe, true), std::chrono::seconds(10));
                m_accel = Accel::Kvm;
                Record(known, "kvm\n");
            }
            catch (const LaunchError& e)
            {
                if (std::string(e.what()).find(": not ready within ") != std::string::npos)
                {
                    Record(known, "tcg\n"); // KVM hangs here
                }
            }
        }
    }
}

void
VmLauncher::SweepStale(const std::string& runRoot)
{
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(runRoot, ec))
    {
        const std::string name = entry.path().filename().string();
        pid_t owner = 0;
        if (name.rfind("fabemu-vm-", 0) == 0 &&
            std::sscanf(name.c_str(), "fabemu-vm-%d-", &owner) == 1 && !ProcessAlive(owner))
        {
            fs::remove_all(entry.path(), ec);
        }
    }
    // Bridges made for plain-bridge runs are named febr<owner pid>.
    for (const auto& entry : fs::directory_iterator("/sys/class/net", ec))
    {
        const std::string name = entry.path().filename().string();
        pid_t owner = 0;
        // Exactly febr<digits>: a name reaches a shell below, and device names may hold ';'.
        if (std::sscanf(name.c_str(), "febr%d", &owner) == 1 &&
            name == "febr" + std::to_string(owner) && !ProcessAlive(owner))
        {
            std::string cmd = "ip link del " + name + " 2>/dev/null";
            if (std::system(cmd.c_str()) != 0)
            {
                // Someone else removed it first.
            }
        }
    }
}

std::unique_ptr<Vm>
VmLauncher::Start(const VmSpec& spec, std::chrono::seconds readyTimeout)
{
    return AwaitReady(Spawn(spec, m_accel == Accel::Kvm), readyTimeout);
}

std::vector<std::unique_ptr<Vm>>
VmLauncher::StartAll(const std::vector<VmSpec>& specs, std::chrono::seconds readyTimeout)
{
    // QEMUs start from this thread (PR_SET_PDEATHSIG follows the forking thread), as
    // many at once as there are cores (a TCG boot keeps one busy, so each still boots in
    // its usual time), and their readiness is awaited in turn. On a failure the VMs
    // already spawned stop with their handles.
    const size_t together = std::max(1u, std::thread::hardware_concurrency());
    std::vector<std::unique_ptr<Vm>> vms;
    for (size_t first = 0; first < specs.size(); first += together)
    {
        const size_t end = std::min(specs.size(), first + together);
        for (size_t i = first; i < end; ++i)
        {
            vms.push_back(Spawn(specs[i], m_accel == Accel::Kvm));
        }
        for (size_t i = first; i < end; ++i)
        {
            vms[i] = AwaitReady(std::move(vms[i]), readyTimeout);
        }
    }
    return vms;
}

std::unique_ptr<Vm>
VmLauncher::Spawn(const VmSpec& spec, bool kvm)
{
    if (spec.device != "rxe" && spec.device != "siw")
    {
        throw LaunchError("endpoint " + spec.name + ": device '" + spec.device +
                          "' is not rxe or siw");
    }
    std::unique_ptr<Vm> vm(new Vm());
    vm->m_spec = spec;
    std::string tmpl =
        m_runRoot + "/fabemu-vm-" + std::to_string(getpid()) + "-" + spec.name + "-XXXXXX";
    std::vector<char> buf(tmpl.begin(), tmpl.end());
    buf.push_back('\0');
    if (!mkdtemp(buf.data()))
    {
        throw LaunchError("endpoint " + spec.name + ": cannot create a run folder under " +
                          m_runRoot + ": " + strerror(errno));
    }
    vm->m_runDir = buf.data();
    const std::string sock = vm->m_runDir + "/agent.sock";
    const std::string console = vm->m_runDir + "/console.log";

    std::ostringstream append;
    append << "console=ttyS0 panic=-1 quiet fabemu.name=" << spec.name << " fabemu.mtu=" << spec.mtu
           << " fabemu.dev=" << spec.device;
    if (!spec.ipv4.empty())
    {
        append << " fabemu.ip=" << spec.ipv4;
    }
    if (spec.tcpEcn)
    {
        append << " fabemu.tcp_ecn=1";
    }
    std::vector<std::string> args = {
        "qemu-system-x86_64", "-accel", kvm ? "kvm" : "tcg", "-m", std::to_string(spec.memoryMb),
        "-nographic", "-nodefaults", "-no-user-config", "-no-reboot", "-kernel", m_image.kernel,
        "-initrd", m_image.initramfs, "-append", append.str(), "-serial", "file:" + console,
        "-netdev", "tap,id=n0,ifname=" + spec.tap + ",script=no,downscript=no,vhost=off",
        // Checksums offloaded by the guest break once frames leave for a user-space fabric.
        "-device",
        "virtio-net-pci,netdev=n0,mac=" + spec.mac +
            ",csum=off,guest_csum=off,host_mtu=" + std::to_string(spec.mtu),
        "-chardev", "socket,id=agent,path=" + sock + ",server=on,wait=off", "-device",
        "virtio-serial-pci", "-device", "virtserialport,chardev=agent,name=org.fabemu.agent"};

    // Everything the child needs is made before the fork: other threads may hold the
    // allocator's lock at that moment (VMs boot side by side), so the child allocates nothing.
    const std::string logPath = vm->m_runDir + "/qemu.log";
    std::vector<char*> argv;
    for (auto& a : args)
    {
        argv.push_back(a.data());
    }
    argv.push_back(nullptr);
    const auto t0 = Clock::now();
    const pid_t pid = fork();
    if (pid < 0)
    {
        throw LaunchError("endpoint " + spec.name + ": fork failed: " + strerror(errno));
    }
    if (pid == 0)
    {
        prctl(PR_SET_PDEATHSIG, SIGKILL); // QEMU dies with us, whatever kills us
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, nullptr); // our caller may block signals for its own use
        const int log = open(logPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (log >= 0)
        {
            dup2(log, 1);
            dup2(log, 2);
        }
        // QEMU opens its tap by name and needs none of ours (another VM's agent socket,
        // the edges' taps): holding them would keep them open after their owner closed them.
        if (close_range(3, ~0U, 0) != 0) // kernels before 5.9
        {
            for (int fd = 3; fd < 1024; ++fd)
            {
                close(fd);
            }
        }
        execvp(argv[0], argv.data());
        _exit(127);
    }
    vm->m_pid = pid;
    vm->m_started = t0;
    vm->m_agent = std::make_unique<AgentClient>(spec.name, sock);
    return vm;
}

std::unique_ptr<Vm>
VmLauncher::AwaitReady(std::unique_ptr<Vm> vm, std::chrono::seconds readyTimeout)
{
    auto fail = [&vm](const std::string& why) {
        const std::string tail = vm->ConsoleTail(15);
        const std::string qemu = Tail(vm->m_runDir + "/qemu.log", 5);
        vm->Kill();
        return LaunchError("endpoint " + vm->m_spec.name + ": " + why + "\nconsole:\n" + tail +
                           "qemu:\n" + qemu);
    };
    nlohmann::json ready;
    const auto t0 = vm->m_started;
    const auto deadline = t0 + readyTimeout;
    try
    {
        vm->m_agent->Connect(milliseconds(10000)); // QEMU makes the socket as it starts
    }
    catch (const AgentError& e)
    {
        throw fail(e.what());
    }
    for (;;)
    {
        if (!vm->Alive())
        {
            throw fail("QEMU exited during boot");
        }
        try
        {
            ready = vm->m_agent->WaitReady(milliseconds(500));
            break;
        }
        catch (const AgentTimeout&)
        {
            if (Clock::now() >= deadline)
            {
                throw fail("not ready within " + std::to_string(readyTimeout.count()) + " s");
            }
        }
        catch (const AgentError& e)
        {
            throw fail(e.what());
        }
    }
    if (ready.value("init", "") != "ok")
    {
        throw fail("its set-up failed: " + ready.value("init", "?"));
    }
    vm->m_guestBoot = milliseconds(ready.value("uptime_ms", int64_t{0}));
    vm->m_ready = std::chrono::duration_cast<milliseconds>(Clock::now() - t0);
    return vm;
}

} // namespace fabemu
