// fabemu validate makes every check run makes before it simulates, and both name
// the key responsible as FILE:LINE:COL.
#include "../run-in-process.h"
#include "../scratch-dir.h"
#include "emulator/fabemu/cli.h"
#include "emulator/fabemu/exit-codes.h"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

using namespace fabemu;
namespace fs = std::filesystem;

namespace
{

using Outcome = RunOutcome;

Outcome
Fabemu(const std::vector<std::string>& args)
{
    return FabemuInProcess(args);
}

} // namespace

TEST_CASE("a switch buffer too small for its ports: validate and run both exit 2 at the "
          "fabric.buffer key")
{
    const ScratchDir dir("preflight");
    const fs::path file = dir / "small-buffer.yaml";
    std::ofstream(file) << "name: small-buffer\n"
                           "fabric:\n"
                           "  type: roce\n"
                           "  buffer: 100KB\n"
                           "topology: {builder: star, hosts: 4}\n"
                           "workloads:\n"
                           "  - {type: bulk, src: h0, dst: h1, bytes: 1MB}\n";
    const std::string where =
        file.string() + ":4:3: fabric.buffer: the fabric cannot be built as configured: ";
    const auto v = Fabemu({"validate", file.string()});
    CHECK(v.code == kExitBadInput);
    CHECK(v.err.find(where) == 0);
    CHECK(v.err.find("cannot hold reserve") != std::string::npos);
    CHECK(v.out.empty());
    const auto r = Fabemu({"run", file.string(), "--out", (dir / "out").string(), "--quiet"});
    CHECK(r.code == kExitBadInput);
    CHECK(r.err.find(where) == 0);
    CHECK_FALSE(fs::exists(dir / "out"));
    // Given by --set, the value has no place in the file.
    const auto set =
        Fabemu({"validate", file.string(), "--set", "ns3::SwitchMmu::BufferSize=65536"});
    CHECK(set.code == kExitBadInput);
    CHECK(set.err.find("fabric.set: ns3::SwitchMmu::BufferSize: the fabric cannot be built") !=
          std::string::npos);
}

TEST_CASE("values a model would abort on are reported at their fabric.set line instead")
{
    const ScratchDir dir("preflight-set");
    const fs::path ib = dir / "ib.yaml";
    std::ofstream(ib) << "name: arb\n"
                         "fabric:\n"
                         "  type: infiniband\n"
                         "  set:\n"
                         "    ns3::IbPort::NumDataVls: 2\n"
                         "    ns3::IbPort::VlArbLow: \"0:16,5:32\"\n"
                         "topology: {builder: star, hosts: 3}\n";
    auto v = Fabemu({"validate", ib.string()});
    CHECK(v.code == kExitBadInput);
    CHECK(v.err.find(ib.string() +
                     ":6:5: fabric.set: ns3::IbPort::VlArbLow: VlArbLow entry '5:32'") == 0);
    const fs::path cc = dir / "cc.yaml";
    std::ofstream(cc) << "name: cc\n"
                         "fabric:\n"
                         "  set:\n"
                         "    ns3::RoceNic::CongestionControl: ns3::Timely\n";
    v = Fabemu({"validate", cc.string()});
    CHECK(v.code == kExitBadInput);
    CHECK(v.err.find(cc.string() + ":4:5: fabric.set: ns3::RoceNic::CongestionControl") == 0);
}
