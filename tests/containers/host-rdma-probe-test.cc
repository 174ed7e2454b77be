#include "../scratch-dir.h"
#include "containers/probe/host-rdma-probe.h"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

using namespace fabemu;
namespace fs = std::filesystem;

namespace
{

/// A scratch folder shaped like a host's /, removed at scope exit.
struct FakeRoot
{
    const ScratchDir dir{"probe"};
    void Touch(const std::string& rel)
    {
        fs::create_directories((dir / rel).parent_path());
        std::ofstream(dir / rel) << "";
    }
};

} // namespace

TEST_CASE("kernel releases parse to major and minor")
{
    CHECK(KernelMajorMinor("6.1.0-28-amd64") == std::pair{6, 1});
    CHECK(KernelMajorMinor("7.1.3") == std::pair{7, 1});
    CHECK(KernelMajorMinor("garbage") == std::pair{0, 0});
}

TEST_CASE("a kernel without rdma_rxe and without modules means VMs, and says why")
{
    FakeRoot root;
    const auto s = ProbeHostRdma({root.dir.string(), "6.1.0-28-amd64"});
    CHECK_FALSE(s.available);
    CHECK_FALSE(s.rxeDriver);
    CHECK(s.reason.find("module loading is off") != std::string::npos);
    CHECK(s.reason.find("QEMU VMs") != std::string::npos);
}

TEST_CASE("a loadable rdma_rxe on a kernel before 7.1 still means VMs")
{
    FakeRoot root;
    root.Touch("proc/modules");
    root.Touch("lib/modules/6.8.0/kernel/drivers/infiniband/sw/rxe/rdma_rxe.ko.zst");
    const auto s = ProbeHostRdma({root.dir.string(), "6.8.0"});
    CHECK(s.rxeDriver);
    CHECK_FALSE(s.perNamespace);
    CHECK_FALSE(s.available);
    CHECK(s.reason.find("initial network namespace") != std::string::npos);
}

TEST_CASE("a loaded rdma_rxe on Linux 7.1 lets containers hold rxe devices")
{
    FakeRoot root;
    fs::create_directories(root.dir / "sys/module/rdma_rxe");
    const auto s = ProbeHostRdma({root.dir.string(), "7.1.0"});
    CHECK(s.available);
    CHECK(s.perNamespace);
}

TEST_CASE("this build machine's kernel is reported unavailable with its reason")
{
    // FINDINGS: the build machines' kernel has neither CONFIG_INFINIBAND nor modules.
    const auto s = ProbeHostRdma();
    if (s.available)
    {
        MESSAGE("this host does provide rxe: " << s.reason);
    }
    CHECK_FALSE(s.reason.empty());
    CHECK(s.reason.find(s.kernelRelease) != std::string::npos);
}
