/*
 * Can this host give containers a Soft-RoCE device, or do endpoints need VMs?
 *
 * rxe needs the rdma_rxe driver in the host kernel (loaded, or loadable), and
 * works outside the initial network namespace only from Linux 7.1 on (its
 * UDP 4791 socket lived in init_net before). Where either is missing, the
 * endpoints are QEMU VMs with their own kernel.
 */
#ifndef FABEMU_HOST_RDMA_PROBE_H
#define FABEMU_HOST_RDMA_PROBE_H

#include <string>

namespace fabemu
{

/// What the probe looks at: "/" and the running kernel's release by default.
struct ProbeInputs
{
    std::string root{"/"};
    std::string kernelRelease; ///< empty: uname(2)
};

struct HostRdmaSupport
{
    bool rxeDriver{false};    ///< rdma_rxe loaded, built in, or loadable
    bool perNamespace{false}; ///< kernel >= 7.1: rxe works in a container's netns
    bool available{false};    ///< containers can have rxe devices here
    std::string kernelRelease;
    std::string reason; ///< one line: why (un)available
};

HostRdmaSupport ProbeHostRdma(const ProbeInputs& in = {});

/// Parses "6.1.0-28-amd64" into {6, 1}; {0, 0} when unreadable.
std::pair<int, int> KernelMajorMinor(const std::string& release);

} // namespace fabemu

#endif
