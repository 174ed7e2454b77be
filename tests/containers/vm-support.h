// What the endpoint e2e tests share: whether VMs can run here, the image, processes.
#ifndef FABEMU_TESTS_VM_SUPPORT_H
#define FABEMU_TESTS_VM_SUPPORT_H

#include "containers/launcher/vm-launcher.h"
#include "emulator/fabemu/endpoints.h"

#include <csignal>
#include <filesystem>
#include <sstream>
#include <string>
#include <unistd.h>

namespace vmtest
{

/// Empty when this machine can run endpoint VMs; else why not.
inline std::string
WhyNoVms()
{
    if (geteuid() != 0)
    {
        return "not root: taps and bridges need root (CI runs these as root)";
    }
    if (access("/dev/net/tun", R_OK | W_OK) != 0)
    {
        return "no /dev/net/tun";
    }
    if (system("command -v qemu-system-x86_64 >/dev/null 2>&1") != 0)
    {
        return "qemu-system-x86_64 is not installed (scripts/install-deps installs it)";
    }
    return "";
}

inline std::string
Cache()
{
    return FABEMU_TEST_CACHE_DIR;
}

/// The image in the tests' cache (built by the containers-image fixture test).
inline std::string
Image()
{
    std::ostringstream err;
    const std::string path = fabemu::BuildImage(Cache(), "", err);
    if (path.empty())
    {
        throw std::runtime_error("image build failed: " + err.str());
    }
    return path;
}

inline bool
NetDeviceExists(const std::string& name)
{
    return std::filesystem::exists("/sys/class/net/" + name);
}

inline bool
ProcessExists(pid_t pid)
{
    return pid > 0 && kill(pid, 0) == 0;
}

inline fabemu::VmSpec
Spec(unsigned i, const std::string& device, const std::string& tag)
{
    fabemu::VmSpec s;
    s.name = "h" + std::to_string(i);
    s.ipv4 = "10.0.0." + std::to_string(i + 1) + "/24";
    char mac[32];
    std::snprintf(mac, sizeof(mac), "52:54:00:00:00:%02x", i + 1);
    s.mac = mac;
    s.device = device;
    s.tap = "fet" + tag + std::to_string(getpid() % 100000) + "_" + std::to_string(i);
    return s;
}

} // namespace vmtest

#endif
