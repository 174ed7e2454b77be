#include "emulator/fabemu/endpoints.h"

#include "containers/launcher/vm-launcher.h"
#include "containers/netns/netns-endpoint.h"
#include "containers/probe/host-rdma-probe.h"
#include "emulator/fabemu/exit-codes.h"
#include "emulator/fabemu/host-command.h"

#include "ns3/host-address.h"

#include <boost/asio.hpp>
#include <fmt/format.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <tuple>
#include <unistd.h>

namespace fabemu
{

std::string
DefaultCacheDir()
{
    if (const char* c = std::getenv("FABEMU_CACHE"))
    {
        return c;
    }
    if (const char* x = std::getenv("XDG_CACHE_HOME"))
    {
        return std::string(x) + "/fabemu";
    }
    const char* home = std::getenv("HOME");
    return std::string(home ? home : "/tmp") + "/.cache/fabemu";
}

std::string
BuildImage(const std::string& cache, const std::string& extra, std::ostream& err)
{
    std::string cmd = fmt::format("{} --cache {} --agent {}", ShellQuote(FABEMU_IMAGE_SCRIPT),
                                  ShellQuote(cache), ShellQuote(FABEMU_AGENT_PATH));
    if (const std::string tool = FABEMU_GUEST_TOOLS; !tool.empty())
    {
        cmd += " --tool " + ShellQuote(tool);
    }
    if (!extra.empty())
    {
        cmd += " --extra " + ShellQuote(extra);
    }
    std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(cmd.c_str(), "r"), pclose);
    if (!pipe)
    {
        err << "fabemu image: cannot run " << FABEMU_IMAGE_SCRIPT << "\n";
        return "";
    }
    std::string path;
    std::array<char, 4096> buf;
    while (fgets(buf.data(), buf.size(), pipe.get()))
    {
        path = buf.data();
    }
    const int status = pclose(pipe.release());
    while (!path.empty() && (path.back() == '\n' || path.back() == ' '))
    {
        path.pop_back();
    }
    if (status != 0 || path.empty())
    {
        return ""; // the script said why on stderr
    }
    return path;
}

namespace
{

} // namespace

LinuxBridge::LinuxBridge() : m_name("febr" + std::to_string(getpid()))
{
    Ip("link add " + m_name + " type bridge");
    Ip("link set " + m_name + " up");
}

LinuxBridge::~LinuxBridge()
{
    const std::string cmd = "ip link del " + m_name + " 2>/dev/null";
    (void)!std::system(cmd.c_str());
}

void
LinuxBridge::Join(const std::string& tap)
{
    Ip("link set " + tap + " master " + m_name);
    Ip("link set " + tap + " up");
}

void
LinuxBridge::Ip(const std::string& args)
{
    const std::string cmd = "ip " + args + " 2>/dev/null";
    if (std::system(cmd.c_str()) != 0)
    {
        throw LaunchError("bridge: 'ip " + args + "' failed");
    }
}

namespace
{

/// Waits for SIGINT or SIGTERM (the endpoints' destructors then clean up).
void
HoldUntilSignal(std::ostream& out, const char* who)
{
    out << "holding; SIGINT or SIGTERM tears everything down\n" << std::flush;
    boost::asio::io_context io;
    boost::asio::signal_set signals(io, SIGINT, SIGTERM);
    signals.async_wait([&out, who](const boost::system::error_code&, int sig) {
        out << who << ": signal " << sig << ": shutting down\n";
    });
    io.run();
}

/// Runs each --run command on every endpoint in turn (\p runOne gives its exit
/// code and output), prints them, then holds if asked; the exit code of it all.
template <typename Endpoints, typename RunOne>
int
RunEachThenHold(const VmOptions& opt, Endpoints& endpoints, RunOne runOne, std::ostream& out)
{
    int worst = 0;
    for (const auto& cmd : opt.run)
    {
        for (auto& ep : endpoints)
        {
            const auto [name, exitCode, text] = runOne(*ep, cmd);
            out << fmt::format("--- {}: {} (exit {})\n{}", name, cmd, exitCode, text);
            worst = std::max(worst, exitCode == 0 ? 0 : 1);
        }
    }
    if (opt.hold)
    {
        HoldUntilSignal(out, "fabemu vm");
    }
    return worst == 0 ? kExitOk : kExitFailure;
}

/// fabemu vm --backend netns: a network namespace per endpoint.
int
RunNamespaces(const VmOptions& opt, std::ostream& out, std::ostream& err)
{
    std::string device = opt.device;
    if (opt.noRdma)
    {
        device = "none";
    }
    else
    {
        const auto host = ProbeHostRdma();
        if (!host.available)
        {
            err << "fabemu vm: --backend netns needs Soft-RoCE in namespaces: " << host.reason
                << " (use the VM backend, the default; or --no-rdma for plain IP namespaces)\n";
            return kExitFailure;
        }
    }
    try
    {
        NetnsEndpoint::SweepStale();
        std::unique_ptr<LinuxBridge> bridge;
        if (opt.bridge)
        {
            bridge = std::make_unique<LinuxBridge>();
        }
        std::vector<std::unique_ptr<NetnsEndpoint>> eps;
        for (unsigned i = 0; i < opt.count; ++i)
        {
            NetnsSpec spec;
            spec.name = "h" + std::to_string(i);
            spec.netns = fmt::format("fe{}n{}", getpid(), i);
            spec.hostIf = fmt::format("fe{}t{}", getpid(), i);
            spec.ipv4 = ns3::HostIpv4Text(i) + "/24";
            spec.mac = ns3::HostMacText(i);
            spec.mtu = opt.mtu;
            spec.device = device;
            eps.push_back(std::make_unique<NetnsEndpoint>(spec));
            if (bridge)
            {
                bridge->Join(spec.hostIf);
            }
            out << fmt::format("{}: namespace {} ready on {} ({}), after {} ms\n", spec.name,
                               spec.netns, spec.hostIf,
                               device == "none" ? "no RDMA device" : device + "0",
                               eps.back()->ReadyTime().count())
                << std::flush;
        }
        return RunEachThenHold(
            opt, eps,
            [](NetnsEndpoint& ep, const std::string& cmd) {
                const auto r = ep.Run(cmd, std::chrono::seconds(120));
                return std::make_tuple(ep.Spec().name, r.exitCode, r.out);
            },
            out);
    }
    catch (const std::exception& e)
    {
        err << "fabemu vm: " << e.what() << "\n";
        return kExitFailure;
    }
}

} // namespace

int
RunVms(const VmOptions& opt, std::ostream& out, std::ostream& err)
{
    if (opt.count < 1 || opt.count > 64)
    {
        err << "fabemu vm: --count must be 1..64, not " << opt.count << "\n";
        return kExitBadInput;
    }
    if (opt.device != "rxe" && opt.device != "siw")
    {
        err << "fabemu vm: --device must be rxe or siw, not '" << opt.device << "'\n";
        return kExitBadInput;
    }
    if (opt.accel != "auto" && opt.accel != "kvm" && opt.accel != "tcg")
    {
        err << "fabemu vm: --accel must be auto, kvm or tcg, not '" << opt.accel << "'\n";
        return kExitBadInput;
    }
    if (opt.backend != "vm" && opt.backend != "netns")
    {
        err << "fabemu vm: --backend must be vm or netns, not '" << opt.backend << "'\n";
        return kExitBadInput;
    }
    if (opt.noRdma && opt.backend != "netns")
    {
        err << "fabemu vm: --no-rdma is for --backend netns (a VM always has its RDMA device)\n";
        return kExitBadInput;
    }
    if (geteuid() != 0)
    {
        err << "fabemu vm: taps and bridges need root\n";
        return kExitFailure;
    }
    if (opt.backend == "netns")
    {
        return RunNamespaces(opt, out, err);
    }
    const std::string image =
        BuildImage(opt.cache.empty() ? DefaultCacheDir() : opt.cache, "", err);
    if (image.empty())
    {
        return kExitFailure;
    }
    try
    {
        const Accel accel = opt.accel == "kvm"   ? Accel::Kvm
                            : opt.accel == "tcg" ? Accel::Tcg
                                                 : Accel::Auto;
        VmLauncher launcher(VmImage::In(image), accel);
        std::unique_ptr<LinuxBridge> bridge;
        if (opt.bridge)
        {
            bridge = std::make_unique<LinuxBridge>();
        }
        std::vector<VmSpec> specs;
        for (unsigned i = 0; i < opt.count; ++i)
        {
            VmSpec spec;
            spec.name = "h" + std::to_string(i);
            spec.ipv4 = ns3::HostIpv4Text(i) + "/24";
            spec.mac = ns3::HostMacText(i);
            spec.mtu = opt.mtu;
            spec.device = opt.device;
            spec.tap = fmt::format("fe{}t{}", getpid(), i);
            specs.push_back(spec);
        }
        std::vector<std::unique_ptr<Vm>> vms = launcher.StartAll(specs);
        for (const auto& vm : vms)
        {
            if (bridge)
            {
                bridge->Join(vm->Spec().tap);
            }
            out << fmt::format("{}: {} ready on tap {} ({}), guest boot {} ms, ready after {} ms\n",
                               vm->Spec().name, opt.device + "0", vm->Spec().tap,
                               launcher.GetAccel() == Accel::Kvm ? "KVM" : "TCG",
                               vm->GuestBootTime().count(), vm->ReadyTime().count())
                << std::flush;
        }
        return RunEachThenHold(
            opt, vms,
            [](Vm& vm, const std::string& cmd) {
                const auto r = vm.Agent().Run(cmd, std::chrono::seconds(120));
                return std::make_tuple(vm.Spec().name, r.exitCode, r.out + r.err);
            },
            out);
    }
    catch (const std::exception& e)
    {
        err << "fabemu vm: " << e.what() << "\n";
        return kExitFailure;
    }
}

} // namespace fabemu
