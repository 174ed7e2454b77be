#include "emulator/runner/fabric.h"

#include "emulator/edge/realtime-simulator.h"

#include "ns3/abort.h"
#include "ns3/simulator.h"
#include "ns3/type-id.h"
#include "ns3/uinteger.h"

#include <fmt/format.h>

#include <cstdlib>
#include <dlfcn.h>
#include <filesystem>
#include <map>
#include <mutex>
#include <stdexcept>
#include <utility>

namespace fabemu
{

// One line per fabric: each is defined in its own file (roce-fabric.cc, ...), built into
// fabemu or into a plugin of its own (iwarp-fabric.cc: FABEMU_IWARP_PLUGIN).
std::unique_ptr<Fabric> MakeRoceFabric();
std::unique_ptr<Fabric> MakeInfinibandFabric();

namespace
{

struct Registered
{
    std::string name;
    FabricRegistry::Factory make; ///< built in, or null for a plugin
    std::string plugin;           ///< the plugin's file
};

const std::vector<Registered>&
Factories()
{
    static const std::vector<Registered> factories = {
        {"roce", &MakeRoceFabric, ""},
        {"infiniband", &MakeInfinibandFabric, ""},
        {"iwarp", nullptr, FABEMU_IWARP_PLUGIN},
    };
    return factories;
}

const Registered&
Find(const std::string& type)
{
    for (const auto& f : Factories())
    {
        if (f.name == type)
        {
            return f;
        }
    }
    throw std::invalid_argument(fmt::format("no fabric '{}' (there are: {})", type,
                                            fmt::join(FabricRegistry::Names(), ", ")));
}

} // namespace

void*
LoadPlugin(const std::string& what, const std::string& path, const char* entry, bool global)
{
    static std::mutex mutex;
    static std::map<std::pair<std::string, std::string>, void*> loaded;
    const std::lock_guard<std::mutex> lock(mutex);
    if (const auto it = loaded.find({path, entry}); it != loaded.end())
    {
        return it->second;
    }
    // RTLD_NOW: a symbol missing from fabemu shows here, named, and not as a crash later.
    void* handle = dlopen(path.c_str(), RTLD_NOW | (global ? RTLD_GLOBAL : RTLD_LOCAL));
    if (handle == nullptr)
    {
        throw std::runtime_error(fmt::format("{}'s plugin does not load: {}", what, dlerror()));
    }
    void* function = dlsym(handle, entry);
    if (function == nullptr)
    {
        dlclose(handle);
        throw std::runtime_error(fmt::format("{}'s plugin {} has no {}()", what, path, entry));
    }
    loaded.emplace(std::make_pair(path, std::string(entry)), function);
    return function;
}

FabricPluginEntry
LoadFabricPlugin(const std::string& type, const std::string& path)
{
    return reinterpret_cast<FabricPluginEntry>(
        LoadPlugin(fmt::format("the {} fabric", type), path, kFabricPluginEntry));
}

std::string
PluginPath(const std::string& built)
{
    const char* dir = std::getenv("FABEMU_PLUGIN_DIR");
    if (dir == nullptr || *dir == '\0')
    {
        return built;
    }
    return (std::filesystem::path(dir) / std::filesystem::path(built).filename()).string();
}

void
FabricRegistry::Load(const std::string& type)
{
    const Registered& f = Find(type);
    if (!f.make)
    {
        (void)LoadFabricPlugin(f.name, PluginPath(f.plugin));
    }
}

std::unique_ptr<Fabric>
FabricRegistry::Create(const std::string& type)
{
    const Registered& f = Find(type);
    if (f.make)
    {
        return f.make();
    }
    return std::unique_ptr<Fabric>(LoadFabricPlugin(f.name, PluginPath(f.plugin))());
}

std::vector<std::string>
FabricRegistry::Names()
{
    std::vector<std::string> names;
    for (const auto& f : Factories())
    {
        names.push_back(f.name);
    }
    return names;
}

void
Fabric::SetModeDefaults(const Scenario&, RunMode) const
{
}

bool
Fabric::GuestTcpEcn(const Scenario&) const
{
    return false;
}

std::vector<std::unique_ptr<EdgePort>>
Fabric::Uplinks(const Scenario& s, const std::vector<RealHost>&,
                const std::vector<EndpointAddress>&, uint32_t)
{
    throw std::invalid_argument(
        fmt::format("the {} fabric takes no real endpoints", s.fabric.type));
}

std::string
Fabric::TotalsLine(const nlohmann::json& t) const
{
    return fmt::format("PFC pause frames {}, ECN marks {}, CNPs {}",
                       t["pfc_pause_frames"].get<uint64_t>(), t["ecn_marks"].get<uint64_t>(),
                       t["cnps"].get<uint64_t>());
}

std::string
Fabric::Notes(const FabricTotals&) const
{
    return "";
}

uint32_t
IpMtuForPathMtu(uint32_t pathMtu)
{
    return pathMtu <= 1024 ? 1500 : 4200;
}

void
Fabric::CountUntil(ns3::Time)
{
}

bool
Fabric::SetPartition(std::vector<uint32_t>)
{
    return false;
}

void
Fabric::Check(const Scenario&, const ns3::TopologySpec&) const
{
}

std::string
Fabric::PcapNote(const Scenario&) const
{
    return "";
}

uint32_t
RecordSetup::SampleContext() const
{
    return mode == RunMode::Emulation ? ns3::FabemuRealtimeSimulatorImpl::kObserverContext
                                      : ns3::Simulator::NO_CONTEXT;
}

std::vector<uint32_t>
ExternalHosts(const Scenario& s, RunMode mode)
{
    std::vector<uint32_t> hosts;
    if (mode == RunMode::Emulation)
    {
        for (const auto& e : s.endpoints)
        {
            hosts.push_back(e.index);
        }
    }
    return hosts;
}

uint8_t
RocePriority()
{
    ns3::TypeId::AttributeInformation info;
    ns3::TypeId::LookupByName("ns3::RoceNic").LookupAttributeByName("Priority", &info);
    return static_cast<uint8_t>(
        ns3::DynamicCast<const ns3::UintegerValue>(info.initialValue)->Get());
}

} // namespace fabemu

namespace fabemu
{

nlohmann::json
Fabric::Deadlock() const
{
    return nullptr;
}

bool
Fabric::DeadlockMayClear() const
{
    return false;
}

uint64_t
Fabric::Progress() const
{
    return 0;
}

void
Fabric::StartPauseStorm(uint32_t host, ns3::Time)
{
    NS_ABORT_MSG("h" << host << ": a pause storm needs a fabric with PFC (roce)");
}

} // namespace fabemu
