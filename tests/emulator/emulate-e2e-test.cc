// Real Soft-RoCE endpoints over the modelled RoCEv2 fabric (the emulator issue, first slice).
#include "../containers/vm-support.h"
#include "../skip.h"
#include "emulate.h"

#include <doctest/doctest.h>

#include <iostream>
#include <sstream>

using namespace fabemu;

namespace
{

EmulateResult
Emulate(std::vector<std::string> servers, std::vector<std::string> runs)
{
    EmulateOptions opt;
    opt.count = 2;
    opt.cache = vmtest::Cache();
    opt.servers = std::move(servers);
    opt.run = std::move(runs);
    std::ostringstream out;
    std::ostringstream err;
    EmulateResult r = RunEmulation(opt, out, err);
    INFO(out.str() << err.str());
    CHECK(r.exitCode == 0);
    std::cout << out.str();
    return r;
}

void
CheckCarried(const EmulateResult& r, uint64_t atLeast)
{
    for (const auto& c : r.commands)
    {
        CAPTURE(c.cmd);
        CHECK(c.exitCode == 0);
    }
    CHECK(r.framesFromEndpoints >= atLeast); // the traffic really crossed the model
    CHECK(r.framesToEndpoints >= atLeast);
    CHECK(r.arpReplies >= 2);                // the edge answered ARP for both
    CHECK(r.pfcFrames == 0);                 // two endpoints at 100 Gb/s: no congestion
    for (const auto& [why, n] : r.edgeDrops)
    {
        CAPTURE(why);
        CHECK(why != "bad_icrc"); // nothing the endpoints sent arrived corrupt
    }
    CHECK(r.lagMaxMs > 0); // lag was measured all through the run
}

} // namespace

TEST_CASE("ib_write_bw between two rxe VMs across the emulated RoCEv2 fabric")
{
    const std::string why = vmtest::WhyNoVms();
    if (!why.empty())
    {
        FABEMU_SKIP(why);
    }
    const auto r = Emulate({"h0: ib_write_bw -d rxe0 -x 1 -F -n 100 -s 65536"},
                           {"h1: ib_write_bw -d rxe0 -x 1 -F -n 100 -s 65536 {h0}"});
    CheckCarried(r, 1000);
    REQUIRE(r.commands.size() == 2);
    CHECK(r.commands[1].out.find("BW average") != std::string::npos);
}

TEST_CASE("rping (rdma_cm) between two rxe VMs across the emulated RoCEv2 fabric")
{
    const std::string why = vmtest::WhyNoVms();
    if (!why.empty())
    {
        FABEMU_SKIP(why);
    }
    const auto r = Emulate({"h0: rping -s -a {h0} -C 10 -v"}, {"h1: rping -c -a {h0} -C 10 -v"});
    CheckCarried(r, 20);
    size_t pings = 0;
    for (size_t pos = r.commands[1].out.find("ping data"); pos != std::string::npos;
         pos = r.commands[1].out.find("ping data", pos + 1))
    {
        ++pings;
    }
    CHECK(pings == 10);
}

TEST_CASE("bad emulate input is refused before anything starts")
{
    EmulateOptions opt;
    opt.count = 2;
    opt.run = {"h7: true"};
    std::ostringstream out;
    std::ostringstream err;
    CHECK(RunEmulation(opt, out, err).exitCode == 2);
    CHECK(err.str().find("h7") != std::string::npos);
    opt.run = {"no colon here"};
    CHECK(RunEmulation(opt, out, err).exitCode == 2);
    opt.run = {};
    opt.rate = "fast";
    CHECK(RunEmulation(opt, out, err).exitCode == 2);
    opt.rate = "100Gbps";
    opt.count = 1;
    CHECK(RunEmulation(opt, out, err).exitCode == 2);
}
