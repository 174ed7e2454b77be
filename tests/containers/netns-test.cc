// The network-namespace endpoint backend: what can be checked on any root host
// (namespaces, veth, addresses, offloads, commands, timeouts, clean-up), and the
// RDMA device where the host kernel gives namespaces one (skipped here, saying why).
#include "../shell.h"
#include "../skip.h"
#include "containers/netns/netns-endpoint.h"
#include "containers/probe/host-rdma-probe.h"
#include "emulator/fabemu/endpoints.h"

#include <doctest/doctest.h>

#include <chrono>
#include <unistd.h>

using namespace fabemu;

namespace
{

std::string
WhyNotHere()
{
    if (geteuid() != 0)
    {
        return "network namespaces need root";
    }
    if (!HaveTool("ip") || !HaveTool("ethtool") || !HaveTool("busybox"))
    {
        return "needs ip, ethtool and busybox (scripts/install-deps)";
    }
    return "";
}

NetnsSpec
Spec(unsigned i, const std::string& device = "none")
{
    NetnsSpec s;
    s.name = "h" + std::to_string(i);
    s.netns = "fe" + std::to_string(getpid()) + "n" + std::to_string(i);
    s.hostIf = "fe" + std::to_string(getpid()) + "t" + std::to_string(i);
    s.ipv4 = "10.0.0." + std::to_string(i + 1) + "/24";
    s.mac = "52:54:00:00:00:0" + std::to_string(i + 1);
    s.mtu = 4200;
    s.device = device;
    return s;
}

bool
NamespaceExists(const std::string& ns)
{
    return RunCommand("ip netns list").find(ns) != std::string::npos;
}

bool
LinkExists(const std::string& name)
{
    return std::system(("ip link show " + name + " >/dev/null 2>&1").c_str()) == 0;
}

} // namespace

TEST_CASE(
    "two namespaces on a bridge: addresses, MAC, MTU and offloads as asked; they reach each other")
{
    if (const auto why = WhyNotHere(); !why.empty())
    {
        FABEMU_SKIP(why);
    }
    std::string ns0;
    std::string if1;
    {
        LinuxBridge bridge;
        NetnsEndpoint a(Spec(0));
        NetnsEndpoint b(Spec(1));
        ns0 = a.Spec().netns;
        if1 = b.Spec().hostIf;
        bridge.Join(a.Spec().hostIf);
        bridge.Join(b.Spec().hostIf);
        MESSAGE("ready after " << a.ReadyTime().count() << " ms and " << b.ReadyTime().count()
                               << " ms");

        const auto link =
            a.Run("ip -o link show eth0; ip -o -4 addr show eth0", std::chrono::seconds(5));
        CHECK(link.exitCode == 0);
        CHECK(link.out.find("mtu 4200") != std::string::npos);
        CHECK(link.out.find("52:54:00:00:00:01") != std::string::npos);
        CHECK(link.out.find("10.0.0.1/24") != std::string::npos);
        const auto offloads = a.Run("ethtool -k eth0", std::chrono::seconds(5));
        CHECK(offloads.out.find("tx-checksumming: off") != std::string::npos);
        CHECK(offloads.out.find("generic-segmentation-offload: off") != std::string::npos);
        CHECK(RunCommand("ethtool -k " + a.Spec().hostIf).find("tcp-segmentation-offload: off") !=
              std::string::npos);

        // A frame as large as the MTU allows crosses whole (IB MTU 4096 needs 4200).
        const auto ping =
            b.Run("busybox ping -c 2 -W 2 -s 4000 10.0.0.1", std::chrono::seconds(10));
        INFO(ping.out);
        CHECK(ping.exitCode == 0);
        CHECK(ping.out.find("2 packets received") != std::string::npos);
        CHECK(NamespaceExists(ns0));
    }
    // Nothing outlives the endpoints.
    CHECK_FALSE(NamespaceExists(ns0));
    CHECK_FALSE(LinkExists(if1));
}

TEST_CASE("a command past its timeout is killed with everything it started; its output is kept")
{
    if (const auto why = WhyNotHere(); !why.empty())
    {
        FABEMU_SKIP(why);
    }
    NetnsEndpoint a(Spec(0));
    const auto start = std::chrono::steady_clock::now();
    const auto r = a.Run("echo started; sleep 30 & sleep 30", std::chrono::milliseconds(500));
    const auto took = std::chrono::steady_clock::now() - start;
    CHECK(r.timedOut);
    CHECK(r.exitCode == -1);
    CHECK(r.out.find("started") != std::string::npos);
    CHECK(r.out.find("endpoint h0") != std::string::npos);
    CHECK(took < std::chrono::seconds(5));
    CHECK(RunCommand("ip netns pids " + a.Spec().netns).empty()); // the background sleep too
    const auto fails = a.Run("exit 7", std::chrono::seconds(5));
    CHECK(fails.exitCode == 7);
    CHECK_FALSE(fails.timedOut);
}

TEST_CASE("a step that fails names the endpoint and the step, and leaves nothing behind")
{
    if (const auto why = WhyNotHere(); !why.empty())
    {
        FABEMU_SKIP(why);
    }
    NetnsSpec bad = Spec(3);
    bad.mac = "zz:zz:zz:zz:zz:zz";
    try
    {
        NetnsEndpoint e(bad);
        FAIL("an endpoint with a malformed MAC was made");
    }
    catch (const NetnsError& e)
    {
        const std::string what = e.what();
        CHECK(what.find("endpoint h3") != std::string::npos);
        CHECK(what.find("MAC") != std::string::npos);
    }
    CHECK_FALSE(NamespaceExists(bad.netns));
    CHECK_FALSE(LinkExists(bad.hostIf));
    NetnsSpec odd = Spec(4);
    odd.device = "mlx5";
    CHECK_THROWS_WITH_AS(NetnsEndpoint{odd}, doctest::Contains("rxe, siw or none"), NetnsError);
}

TEST_CASE("a killed run's namespaces are swept by the next; a live run's are not")
{
    if (const auto why = WhyNotHere(); !why.empty())
    {
        FABEMU_SKIP(why);
    }
    const std::string stale = "fe999999999n0"; // no such process
    REQUIRE(std::system(("ip netns add " + stale).c_str()) == 0);
    NetnsEndpoint live(Spec(0));
    NetnsEndpoint::SweepStale();
    CHECK_FALSE(NamespaceExists(stale));
    CHECK(NamespaceExists(live.Spec().netns));
}

TEST_CASE(
    "Soft-RoCE in a namespace: refused here with the probe's reason, or made where the kernel can")
{
    if (const auto why = WhyNotHere(); !why.empty())
    {
        FABEMU_SKIP(why);
    }
    const auto host = ProbeHostRdma();
    if (!host.available)
    {
        // Where it cannot, fabemu says why in one line and points at the VMs.
        const std::string out = RunCommand(std::string(FABEMU_BINARY) +
                                           " vm --backend netns --count 1 2>&1; echo rc=$?");
        CHECK(out.find(host.reason) != std::string::npos);
        CHECK(out.find("rc=1") != std::string::npos);
        FABEMU_SKIP("a namespace with rxe0 cannot be made here: " + host.reason);
    }
    NetnsEndpoint a(Spec(0, "rxe"));
    const auto devices = a.Run("rdma link show", std::chrono::seconds(5));
    CHECK(devices.out.find("rxe0") != std::string::npos);
}
