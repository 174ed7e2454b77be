// Real endpoint VMs (validation of the endpoint issue): boot, RDMA tools between
// two VMs on a plain Linux bridge, a VM killed mid-command, and signals.
#include "../skip.h"
#include "vm-support.h"

#include <doctest/doctest.h>
#include <sys/wait.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <thread>

using namespace fabemu;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace
{

#define REQUIRE_VMS()                               \
    do                                              \
    {                                               \
        const std::string why = vmtest::WhyNoVms(); \
        if (!why.empty())                           \
        {                                           \
            FABEMU_SKIP(why);                       \
        }                                           \
    } while (0)

/// A plain Linux bridge for the test, removed at scope exit.
struct TestBridge
{
    std::string name = "febr" + std::to_string(getpid());
    TestBridge()
    {
        REQUIRE(system(("ip link add " + name + " type bridge && ip link set " + name + " up")
                           .c_str()) == 0);
    }
    ~TestBridge() { (void)!system(("ip link del " + name + " 2>/dev/null").c_str()); }
    void Join(const std::string& tap)
    {
        REQUIRE(system(("ip link set " + tap + " master " + name + " && ip link set " + tap + " up")
                           .c_str()) == 0);
    }
};

/// Two VMs with \p device joined on a fresh bridge (all torn down with the struct).
struct BridgedPair
{
    VmLauncher launcher{VmImage::In(vmtest::Image())};
    TestBridge bridge;
    std::unique_ptr<Vm> a;
    std::unique_ptr<Vm> b;
    BridgedPair(const std::string& device, const std::string& tag)
    {
        auto vms = launcher.StartAll({vmtest::Spec(0, device, tag), vmtest::Spec(1, device, tag)});
        a = std::move(vms[0]);
        b = std::move(vms[1]);
        bridge.Join(a->Spec().tap);
        bridge.Join(b->Spec().tap);
    }
};

/// Runs \p server on a, then \p client on b; both must exit 0. With \p attempts > 1 a
/// failed attempt is printed, whole, and the pair run again (see the siw case).
void
Pair(Vm& a, Vm& b, const std::string& server, const std::string& client, int attempts = 1)
{
    CAPTURE(client);
    for (int attempt = 1;; ++attempt)
    {
        const uint64_t id = a.Agent().Start(server, 120s);
        std::this_thread::sleep_for(1500ms); // let the server listen
        const CommandResult c = b.Agent().Run(client, 120s);
        const CommandResult s = a.Agent().Wait(id, 130s);
        const bool ok = c.exitCode == 0 && s.exitCode == 0;
        if (!ok && attempt < attempts)
        {
            std::cout << "--- " << client << ": attempt " << attempt << " of " << attempts
                      << " failed; client (exit " << c.exitCode << ", signal " << c.signal
                      << "): " << c.out << c.err << "; server (exit " << s.exitCode << ", signal "
                      << s.signal << "): " << s.out << s.err << "\n";
            continue;
        }
        INFO("client (exit " << c.exitCode << ", signal " << c.signal << "): " << c.out << c.err);
        INFO("server (exit " << s.exitCode << ", signal " << s.signal << "): " << s.out << s.err);
        CHECK(c.exitCode == 0);
        CHECK(s.exitCode == 0);
        std::cout << "--- " << client << "\n"
                  << c.out.substr(c.out.size() > 800 ? c.out.size() - 800 : 0);
        return;
    }
}

} // namespace

TEST_CASE("one VM boots; ibv_devices lists rxe0, or siw0 with siw")
{
    REQUIRE_VMS();
    VmLauncher launcher(VmImage::In(vmtest::Image()));
    for (const char* device : {"rxe", "siw"})
    {
        CAPTURE(device);
        auto vm = launcher.Start(vmtest::Spec(0, device, device));
        const auto r = vm->Agent().Run("ibv_devices", 30s);
        CHECK(r.exitCode == 0);
        CHECK(r.out.find(std::string(device) + "0") != std::string::npos);
        std::cout << device << " VM: guest boot " << vm->GuestBootTime().count()
                  << " ms, launch to ready " << vm->ReadyTime().count() << " ms ("
                  << (launcher.GetAccel() == Accel::Kvm ? "KVM" : "TCG") << ")\n";
        CHECK(vm->ReadyTime() < 60s);
    }
}

TEST_CASE("the KVM probe's outcome is kept for this boot, and a second launcher reuses it")
{
    REQUIRE_VMS();
    const VmImage image = VmImage::In(vmtest::Image());
    VmLauncher first(image);
    if (access("/dev/kvm", R_OK | W_OK) != 0)
    {
        CHECK(first.GetAccel() == Accel::Tcg); // nothing to probe, nothing kept
        FABEMU_SKIP("no usable /dev/kvm: the probe's record is not made here");
    }
    std::ifstream bootId("/proc/sys/kernel/random/boot_id");
    std::string id;
    REQUIRE(std::getline(bootId, id));
    const fs::path record = fs::path(image.kernel).parent_path() / ("accel-" + id);
    REQUIRE(fs::exists(record));
    std::ifstream in(record);
    std::string kept;
    std::getline(in, kept);
    CHECK(kept == (first.GetAccel() == Accel::Kvm ? "kvm" : "tcg"));
    VmLauncher second(image);
    CHECK(second.GetAccel() == first.GetAccel());
}

TEST_CASE("VMs booted together: all ready; one that cannot start stops those already started")
{
    REQUIRE_VMS();
    VmLauncher launcher(VmImage::In(vmtest::Image()));
    {
        auto vms = launcher.StartAll({vmtest::Spec(0, "rxe", "a"), vmtest::Spec(1, "siw", "a")});
        REQUIRE(vms.size() == 2);
        CHECK(vms[0]->Agent().Run("ibv_devices", 30s).out.find("rxe0") != std::string::npos);
        CHECK(vms[1]->Agent().Run("ibv_devices", 30s).out.find("siw0") != std::string::npos);
    }
    const VmSpec good = vmtest::Spec(0, "rxe", "b");
    try
    {
        launcher.StartAll({good, vmtest::Spec(1, "nic", "b")});
        FAIL("a VM with device 'nic' was started");
    }
    catch (const LaunchError& e)
    {
        CHECK(std::string(e.what()).find("endpoint h1") != std::string::npos);
    }
    CHECK_FALSE(vmtest::NetDeviceExists(good.tap));
    for (const auto& e : fs::directory_iterator("/tmp"))
    {
        CHECK(e.path().filename().string().rfind("fabemu-vm-" + std::to_string(getpid()) + "-",
                                                 0) == std::string::npos);
    }
    CHECK(system(("pgrep -P " + std::to_string(getpid()) + " qemu >/dev/null").c_str()) != 0);
}

TEST_CASE("two rxe VMs on a Linux bridge: pingpong, perftest and rping all succeed")
{
    REQUIRE_VMS();
    BridgedPair vms("rxe", "r");
    Vm* a = vms.a.get();
    Vm* b = vms.b.get();
    const std::string peer = "10.0.0.1";
    // GID 1 is the IPv4-mapped RoCEv2 GID; -g/-x pick it.
    Pair(*a, *b, "ibv_rc_pingpong -d rxe0 -g 1 -n 20",
         "ibv_rc_pingpong -d rxe0 -g 1 -n 20 " + peer);
    Pair(*a, *b, "ibv_ud_pingpong -d rxe0 -g 1 -n 20",
         "ibv_ud_pingpong -d rxe0 -g 1 -n 20 " + peer);
    Pair(*a, *b, "ib_write_bw -d rxe0 -x 1 -F -n 100 -s 65536",
         "ib_write_bw -d rxe0 -x 1 -F -n 100 -s 65536 " + peer);
    Pair(*a, *b, "ib_read_bw -d rxe0 -x 1 -F -n 100 -s 65536",
         "ib_read_bw -d rxe0 -x 1 -F -n 100 -s 65536 " + peer);
    Pair(*a, *b, "ib_send_lat -d rxe0 -x 1 -F -n 200",
         "ib_send_lat -d rxe0 -x 1 -F -n 200 " + peer);
    Pair(*a, *b, "rping -s -a " + peer + " -C 10 -v", "rping -c -a " + peer + " -C 10 -v");
}

TEST_CASE("two siw VMs on a Linux bridge: rping succeeds")
{
    REQUIRE_VMS();
    BridgedPair vms("siw", "s");
    // Two attempts: once in about 40 CI runs the siw client saw a DISCONNECT in its first
    // iteration and the server hung until killed. Only the guests' kernels and a Linux
    // bridge are in this path; a second failure fails the test.
    Pair(*vms.a, *vms.b, "rping -s -a 10.0.0.1 -C 10 -v", "rping -c -a 10.0.0.1 -C 10 -v", 2);
}

TEST_CASE("a VM killed mid-command: a clear error naming it, and nothing left behind")
{
    REQUIRE_VMS();
    VmLauncher launcher(VmImage::In(vmtest::Image()));
    auto vm = launcher.Start(vmtest::Spec(0, "rxe", "k"));
    const std::string tap = vm->Spec().tap;
    const std::string runDir = vm->RunDir();
    const pid_t qemu = vm->Pid();
    CHECK(vmtest::NetDeviceExists(tap));
    CHECK(fs::exists(runDir));
    const uint64_t id = vm->Agent().Start("sleep 60", 90s);
    std::this_thread::sleep_for(1s);
    vm->Kill();
    try
    {
        vm->Agent().Wait(id, 10s);
        FAIL("the command 'finished' on a dead VM");
    }
    catch (const AgentError& e)
    {
        const std::string what = e.what();
        CHECK(what.find("endpoint h0") != std::string::npos);
        CHECK(what.find("lost") != std::string::npos);
    }
    vm.reset();
    CHECK_FALSE(vmtest::ProcessExists(qemu));
    CHECK_FALSE(vmtest::NetDeviceExists(tap));
    CHECK_FALSE(fs::exists(runDir));
}

namespace
{

struct Held
{
    pid_t pid{-1};
    FILE* out{nullptr};
};

/// Starts `fabemu vm --count 1 --bridge --hold` and waits until it holds.
Held
StartHolding()
{
    int fds[2];
    REQUIRE(pipe(fds) == 0);
    const pid_t pid = fork();
    if (pid == 0)
    {
        dup2(fds[1], 1);
        close(fds[0]);
        execl(FABEMU_BINARY, "fabemu", "vm", "--count", "1", "--bridge", "--hold", "--cache",
              FABEMU_TEST_CACHE_DIR, static_cast<char*>(nullptr));
        _exit(127);
    }
    close(fds[1]);
    Held h{pid, fdopen(fds[0], "r")};
    char line[512];
    bool holding = false;
    while (!holding && fgets(line, sizeof(line), h.out))
    {
        holding = std::string(line).find("holding") != std::string::npos;
    }
    REQUIRE(holding);
    return h;
}

std::vector<pid_t>
Children(pid_t parent)
{
    std::vector<pid_t> kids;
    for (const auto& e : fs::directory_iterator("/proc"))
    {
        const std::string name = e.path().filename().string();
        if (name.find_first_not_of("0123456789") != std::string::npos)
        {
            continue;
        }
        std::ifstream stat(e.path() / "stat");
        std::string pid, comm, state;
        pid_t ppid = 0;
        if (stat >> pid >> comm >> state >> ppid && ppid == parent)
        {
            kids.push_back(std::stoi(pid));
        }
    }
    return kids;
}

bool
RunDirsOf(pid_t owner)
{
    for (const auto& e : fs::directory_iterator("/tmp"))
    {
        if (e.path().filename().string().rfind("fabemu-vm-" + std::to_string(owner) + "-", 0) == 0)
        {
            return true;
        }
    }
    return false;
}

} // namespace

TEST_CASE("SIGINT, SIGTERM or SIGKILL to fabemu vm: no VM, tap, bridge or run folder outlives it")
{
    REQUIRE_VMS();
    vmtest::Image();
    for (int sig : {SIGINT, SIGTERM, SIGKILL})
    {
        CAPTURE(sig);
        Held h = StartHolding();
        const auto qemus = Children(h.pid);
        REQUIRE(qemus.size() == 1);
        const std::string tap = "fe" + std::to_string(h.pid) + "t0";
        const std::string bridge = "febr" + std::to_string(h.pid);
        CHECK(vmtest::NetDeviceExists(tap));
        CHECK(vmtest::NetDeviceExists(bridge));
        kill(h.pid, sig);
        int status = 0;
        waitpid(h.pid, &status, 0);
        fclose(h.out);
        for (int i = 0; i < 100 && vmtest::ProcessExists(qemus[0]); ++i)
        {
            std::this_thread::sleep_for(
                50ms); // PR_SET_PDEATHSIG is delivered at once; reaping takes a moment
        }
        CHECK_FALSE(vmtest::ProcessExists(qemus[0]));
        CHECK_FALSE(vmtest::NetDeviceExists(tap)); // QEMU's tap goes with QEMU
        if (sig == SIGKILL)
        {
            // A killed process cleans nothing: the next start sweeps what it left.
            VmLauncher::SweepStale("/tmp");
        }
        CHECK_FALSE(vmtest::NetDeviceExists(bridge));
        CHECK_FALSE(RunDirsOf(h.pid));
    }
}
