// Plugins (issue 22, memory): the iWARP fabric and ns-3's TCP/IP stack under it are
// loaded only when a scenario names that fabric, and Open MPI with ns-3's mpi module only
// for a partitioned run, so every other run leaves their pages out. This program links
// fabemu's runner as fabemu does, and nothing of iWARP or MPI.
#include "emulator/fabemu/cli.h"
#include "emulator/runner/fabric.h"
#include "emulator/runner/partitioned-run.h"
#include "emulator/runner/scenario-fabric.h"

#include "ns3/type-id.h"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <link.h>
#include <sstream>
#include <stdexcept>
#include <string>
#include <unistd.h>

using namespace fabemu;

namespace
{

/// Whether a shared object whose file name holds \p part is loaded in this process.
bool
Loaded(const std::string& part)
{
    struct Search
    {
        const std::string* part;
        bool found;
    } search{&part, false};
    dl_iterate_phdr(
        [](dl_phdr_info* info, size_t, void* data) {
            auto* s = static_cast<Search*>(data);
            if (info->dlpi_name != nullptr &&
                std::string(info->dlpi_name).find(*s->part) != std::string::npos)
            {
                s->found = true;
            }
            return 0;
        },
        &search);
    return search.found;
}

/// The message of what \p f throws, or "" when it throws nothing.
template <typename F>
std::string
Thrown(F f)
{
    try
    {
        f();
    }
    catch (const std::exception& e)
    {
        return e.what();
    }
    return "";
}

Scenario
IwarpWith(const std::string& name, const std::string& value)
{
    Scenario s;
    s.name = "plugin";
    s.file = "fabric-plugin-test";
    s.fabric.type = "iwarp";
    s.fabric.cc = "dctcp";
    s.fabric.pfc = false;
    s.topology.builder = "star";
    s.topology.hosts = 2;
    s.fabric.set.push_back({name, value, {}});
    return s;
}

} // namespace

// One case, in order: what is loaded can only grow in a process.
TEST_CASE("the iWARP fabric and ns-3's TCP/IP stack load only when a run names that fabric")
{
    // Built-in fabrics come and go without it.
    REQUIRE_FALSE(Loaded("libfabemu-iwarp"));
    REQUIRE_FALSE(Loaded("libns3-internet"));
    CHECK(FabricRegistry::Create("roce") != nullptr);
    CHECK(FabricRegistry::Create("infiniband") != nullptr);
    CHECK_FALSE(Loaded("libfabemu-iwarp"));
    CHECK_FALSE(Loaded("libns3-internet"));
    ns3::TypeId tid;
    CHECK_FALSE(ns3::TypeId::LookupByNameFailSafe("ns3::IwarpQp", &tid));

    // Moved away ($FABEMU_PLUGIN_DIR), the plugin is named in fabemu's error, and nothing
    // aborts: a run-time failure, exit code 1.
    const auto scenario = std::filesystem::temp_directory_path() /
                          ("fabric-plugin-test-" + std::to_string(getpid()) + ".yaml");
    std::ofstream(scenario) << "name: iw\nduration: 1ms\nfabric: {type: iwarp, cc: dctcp}\n"
                               "topology: {builder: star, hosts: 2}\n"
                               "workloads:\n  - {type: permutation, hosts: all, bytes: 1000}\n";
    setenv("FABEMU_PLUGIN_DIR", "/nonexistent-plugins", 1);
    const auto results =
        scenario.parent_path() / ("fabric-plugin-test-out-" + std::to_string(getpid()));
    for (const std::vector<std::string>& args :
         {std::vector<std::string>{"validate", scenario.string()},
          std::vector<std::string>{"run", scenario.string(), "--out", results.string()}})
    {
        std::ostringstream out;
        std::ostringstream err;
        const int rc = RunFabemu(args, out, err);
        CAPTURE(args[0]);
        CAPTURE(err.str());
        CHECK(rc == 1);
        CHECK(err.str().find("the iwarp fabric's plugin does not load: "
                             "/nonexistent-plugins/libfabemu-runner-iwarp.so") !=
              std::string::npos);
    }
    CHECK_FALSE(std::filesystem::exists(results)); // no results folder, no leftovers
    unsetenv("FABEMU_PLUGIN_DIR");
    std::filesystem::remove(scenario);
    CHECK_FALSE(Loaded("libfabemu-iwarp"));

    // A plugin that is not there, or that is no fabric's, is named in a clear error.
    const std::string missing = Thrown([] { LoadFabricPlugin("iwarp", "/nonexistent/x.so"); });
    CHECK(missing.find("the iwarp fabric's plugin does not load") != std::string::npos);
    CHECK(missing.find("/nonexistent/x.so") != std::string::npos);
    const std::string notFabric = Thrown([] { LoadFabricPlugin("iwarp", "libz.so.1"); });
    CHECK(notFabric.find("libz.so.1 has no fabemu_make_fabric()") != std::string::npos);
    CHECK_FALSE(Loaded("libfabemu-iwarp"));

    // An iWARP scenario's fabric.set names iWARP's models: checking it loads the plugin,
    // and a wrong attribute is still refused by name.
    CHECK_NOTHROW(CheckAttributes(IwarpWith("ns3::IwarpQp::Crc", "true")));
    CHECK(Loaded("libfabemu-iwarp"));
    CHECK(Loaded("libns3-internet"));
    CHECK(ns3::TypeId::LookupByNameFailSafe("ns3::IwarpQp", &tid));
    const std::string wrong =
        Thrown([] { CheckAttributes(IwarpWith("ns3::IwarpQp::Crcc", "true")); });
    CHECK(wrong.find("no attribute 'Crcc'; did you mean 'Crc'?") != std::string::npos);

    // The fabric itself comes from the plugin, once loaded.
    const auto iwarp = FabricRegistry::Create("iwarp");
    REQUIRE(iwarp != nullptr);
    CHECK(iwarp->TotalsLine({{"ecn_marks", 3}, {"tcp_retransmissions", 2}}) ==
          "ECN marks 3, ECN echoes 0, TCP retransmissions 2");
    const bool once = LoadFabricPlugin("iwarp", FABEMU_IWARP_PLUGIN) ==
                      LoadFabricPlugin("iwarp", FABEMU_IWARP_PLUGIN);
    CHECK(once);
}

#ifdef FABEMU_MPI_PLUGIN
TEST_CASE("Open MPI and ns-3's mpi module load only for a partitioned run")
{
    REQUIRE_FALSE(Loaded("libmpi.so"));
    REQUIRE_FALSE(Loaded("libfabemu-ns3-mpi"));
    const std::string tag = std::to_string(getpid());
    const auto scenario =
        std::filesystem::temp_directory_path() / ("fabric-plugin-test-mpi-" + tag + ".yaml");
    std::ofstream(scenario) << "name: roce\nduration: 1ms\nfabric: {type: roce}\n"
                               "topology: {builder: star, hosts: 2}\n"
                               "workloads:\n  - {type: permutation, hosts: all, bytes: 1000}\n";
    const auto results = scenario.parent_path() / ("fabric-plugin-test-mpi-out-" + tag);
    std::ostringstream out;
    std::ostringstream err;
    CHECK(RunFabemu({"run", scenario.string(), "--out", results.string(), "--quiet"}, out, err) ==
          0);
    CAPTURE(err.str());
    CHECK(std::filesystem::exists(results / "fct.csv"));
    CHECK_FALSE(Loaded("libmpi.so"));
    CHECK_FALSE(Loaded("libfabemu-ns3-mpi"));
    std::filesystem::remove_all(results);
    std::filesystem::remove(scenario);

    // Moved away ($FABEMU_PLUGIN_DIR), the plugin is named in the partitioned run's error.
    setenv("FABEMU_PLUGIN_DIR", "/nonexistent-plugins", 1);
    const std::string moved = Thrown([] { PartitionedRun run("gtw"); });
    unsetenv("FABEMU_PLUGIN_DIR");
    CHECK(moved.find("the partitioned run's plugin does not load: "
                     "/nonexistent-plugins/libfabemu-runner-mpi.so") != std::string::npos);
    CHECK_FALSE(Loaded("libmpi.so"));

    // Loaded (as a partitioned run does before MPI starts), it brings Open MPI and ns-3's
    // distributed engines, which register their TypeIds.
    CHECK(LoadPlugin("the partitioned run", FABEMU_MPI_PLUGIN, kRankCommEntry, true) != nullptr);
    CHECK(Loaded("libmpi.so"));
    CHECK(Loaded("libfabemu-ns3-mpi"));
    ns3::TypeId tid;
    CHECK(ns3::TypeId::LookupByNameFailSafe("ns3::DistributedSimulatorImpl", &tid));
    CHECK(ns3::TypeId::LookupByNameFailSafe("ns3::NullMessageSimulatorImpl", &tid));
}
#endif
