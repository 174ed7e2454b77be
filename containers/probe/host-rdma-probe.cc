#include "containers/probe/host-rdma-probe.h"

#include <sys/utsname.h>

#include <filesystem>

namespace fabemu
{

namespace fs = std::filesystem;

std::pair<int, int>
KernelMajorMinor(const std::string& release)
{
    int major = 0;
    int minor = 0;
    if (std::sscanf(release.c_str(), "%d.%d", &major, &minor) != 2)
    {
        return {0, 0};
    }
    return {major, minor};
}

namespace
{

bool
ModuleFileExists(const fs::path& root, const std::string& release)
{
    const fs::path dir = root / "lib/modules" / release / "kernel/drivers/infiniband/sw/rxe";
    std::error_code ec;
    if (!fs::is_directory(dir, ec))
    {
        return false;
    }
    for (const auto& entry : fs::directory_iterator(dir, ec))
    {
        if (entry.path().filename().string().rfind("rdma_rxe.ko", 0) == 0)
        {
            return true;
        }
    }
    return false;
}

} // namespace

HostRdmaSupport
ProbeHostRdma(const ProbeInputs& in)
{
    HostRdmaSupport s;
    s.kernelRelease = in.kernelRelease;
    if (s.kernelRelease.empty())
    {
        utsname u{};
        uname(&u);
        s.kernelRelease = u.release;
    }
    const fs::path root(in.root);
    std::error_code ec;
    const bool loaded = fs::exists(root / "sys/module/rdma_rxe", ec);
    const bool modulesOn = fs::exists(root / "proc/modules", ec);
    const bool loadable = modulesOn && ModuleFileExists(root, s.kernelRelease);
    s.rxeDriver = loaded || loadable;

    const auto [major, minor] = KernelMajorMinor(s.kernelRelease);
    s.perNamespace = major > 7 || (major == 7 && minor >= 1);

    if (!s.rxeDriver)
    {
        s.reason = "host kernel " + s.kernelRelease + " has no rdma_rxe (not loaded" +
                   (modulesOn ? ", no module file" : ", module loading is off") +
                   "): endpoints run as QEMU VMs";
    }
    else if (!s.perNamespace)
    {
        s.reason = "host kernel " + s.kernelRelease +
                   " has rdma_rxe, but rxe works only in the initial network namespace before "
                   "Linux 7.1: endpoints run as QEMU VMs";
    }
    else
    {
        s.available = true;
        s.reason = "host kernel " + s.kernelRelease +
                   " has rdma_rxe with per-namespace support: containers can hold rxe devices";
    }
    return s;
}

} // namespace fabemu
