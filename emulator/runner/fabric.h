// The one seam between the runners (simulation and emulation) and a fabric: every
// fabric is one Fabric subclass and one line in FabricRegistry. run.cc and
// emulate.cc know no fabric by name.
#ifndef FABEMU_FABRIC_H
#define FABEMU_FABRIC_H

#include "emulator/edge/edge-port.h"
#include "scenarios/src/scenario.h"

#include "ns3/nstime.h"
#include "ns3/rdma-fabric.h"
#include "ns3/topology-spec.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace fabemu
{

/// Simulation: plain discrete-event ns-3. Emulation: real time, real endpoints on uplinks.
enum class RunMode
{
    Simulation,
    Emulation,
};

/// Where and how often a fabric records.
struct RecordSetup
{
    std::filesystem::path dir; ///< pcaps and CSVs go here; empty: nowhere
    ns3::Time queueInterval;   ///< the queue samplers' grid
    RunMode mode{RunMode::Simulation};
    /// The context the queue samplers' events run in: in an emulation, the real-time
    /// simulator's observers' (the thread does not wake for a sample); else the caller's.
    uint32_t SampleContext() const;
};

/// summary.json's fabric part: "totals" (six keys every fabric has, then its own),
/// "switch_drops" (by reason) and "peak_queue_bytes".
struct FabricTotals
{
    uint64_t fabricDrops{0};
    uint64_t congestionDrops{0}; ///< buffer_full + headroom_overflow: what PFC must prevent
    uint64_t pfcFrames{0};
    uint64_t ecnMarks{0};     ///< CE (FECN on InfiniBand) written by the switches
    uint64_t cnps{0};         ///< sent by simulated NICs (BECNs on InfiniBand)
    uint64_t creditStalls{0}; ///< InfiniBand: a VL's head packet waited for credit
    uint64_t peakQueueBytes{0};
    std::map<std::string, uint64_t> switchDrops;   ///< by reason
    nlohmann::json own = nlohmann::json::object(); ///< the fabric's own totals keys
    /// A deadlock the fabric is in at the end: {kind, cycle: ["s0->s1 vl0", ...]}; null
    /// when there is none (summary.json's "deadlock").
    nlohmann::json deadlock;
};

/// A real endpoint that needs a port on the fabric.
struct RealHost
{
    uint32_t index{0};     ///< hN
    std::string name;      ///< "hN"
    std::string interface; ///< its tap, or the host end of its veth
};

class Fabric
{
  public:
    virtual ~Fabric() = default;

    /// The fabric's own ns-3 defaults for \p mode: applied after the fabric keys, before
    /// fabric.set (ApplyFabricDefaults), so a user's fabric.set always decides.
    virtual void SetModeDefaults(const Scenario& s, RunMode mode) const;
    /// Whether endpoint guests turn on ECN in their own TCP (iWARP: the switches mark it).
    virtual bool GuestTcpEcn(const Scenario& s) const;

    /// Preflight: builds the fabric as \p s configures it (attribute defaults applied,
    /// \p spec its topology) and throws ScenarioError at the key responsible if it
    /// cannot be built, before any run writes anything. Nothing by default.
    virtual void Check(const Scenario& s, const ns3::TopologySpec& spec) const;
    /// A partitioned run (before Build): \p rankOf gives every node of the topology
    /// (TopologySpec::Nodes' order) its rank, and the links between ranks carry their
    /// frames over MPI. False where the fabric's channels cannot cross ranks (the default):
    /// the caller refuses the run.
    virtual bool SetPartition(std::vector<uint32_t> rankOf);
    /// Nodes, ports and links of the checked scenario's topology.
    virtual void Build(const Scenario& s, RunMode mode) = 0;
    /// What the workloads and the flow runner see of it (after Build).
    virtual ns3::RdmaFabric& Rdma() = 0;
    /// A port on the fabric for each real endpoint (emulation; after Build, before
    /// AttachRecorders). \p directory holds every endpoint's addresses.
    virtual std::vector<std::unique_ptr<EdgePort>> Uplinks(
        const Scenario& s, const std::vector<RealHost>& hosts,
        const std::vector<EndpointAddress>& directory, uint32_t mtu);
    /// pcaps, queue samplers and the fabric's own series (after Build and Uplinks).
    virtual void AttachRecorders(const Scenario& s, const RecordSetup& setup) = 0;
    /// Closes the pcaps and writes the CSVs into setup.dir (after the run).
    virtual void WriteRecords() = 0;
    /// Link \p link of the topology (TopologySpec::Links' order) runs at \p rate from now
    /// on, both ways: a fault (after Build).
    virtual void SetLinkRate(uint32_t link, ns3::DataRate rate) = 0;
    /// Link \p link drops what a bit error hits, at \p ber per bit, both ways (a fault;
    /// after Build). From then on the totals count bit_error_drops (and, where the
    /// transport is the fabric's own, retransmitted_packets).
    virtual void SetLinkBitErrorRate(uint32_t link, double ber) = 0;
    /// Link \p link goes down (\p up false) or comes back, both ways (a fault; after
    /// Build): what reaches its ends meanwhile is lost, and routing reacts as the fabric's
    /// does. From then on the totals count link_down_drops.
    virtual void SetLinkUp(uint32_t link, bool up) = 0;
    /// Host \p host's NIC sends PFC pauses without end for \p duration (a fault; after
    /// Build). Only fabrics with PFC have it: the validator refuses it elsewhere.
    virtual void StartPauseStorm(uint32_t host, ns3::Time duration);
    /// The deadlock the fabric is in now, as FabricTotals::deadlock (null: none). Read on
    /// the simulation thread, during the run (DeadlockWatch) and at its end.
    virtual nlohmann::json Deadlock() const;
    /// Whether a deadlock can end by itself here (a PFC watchdog is on): then the run is
    /// not stopped when one lasts.
    virtual bool DeadlockMayClear() const;
    /// A count that changes whenever traffic moves: the bytes its QPs have received in
    /// order (0 where there is none to watch).
    virtual uint64_t Progress() const;
    /// The totals for summary.json (after the run).
    virtual FabricTotals Totals() const = 0;
    /// A partitioned run (and its one-rank reference, after SetPartition): Totals counts
    /// only what happened before \p end, when the last flow ended, where counters go on
    /// after it (the ranks stop later, each at its own time). Nothing by default: most
    /// fabrics count nothing once their flows are done.
    virtual void CountUntil(ns3::Time end);
    /// Counters for `fabemu status`, read on the simulation thread while it runs.
    virtual nlohmann::json Live() const = 0;
    /// The terminal's one-line account of the totals ("credit stalls 3" or "PFC ...").
    virtual std::string TotalsLine(const nlohmann::json& totals) const;
    /// How to read the run's pcaps when plain `tshark -r` cannot ("" when it can, or when
    /// the scenario records none): said before the run starts and kept in summary.json.
    virtual std::string PcapNote(const Scenario& s) const;
    /// Lines of its own for the terminal after an emulation ("" for none).
    virtual std::string Notes(const FabricTotals& totals) const;
};

/// The fabrics by scenario name (fabric.type). A fabric is built into fabemu, or a plugin
/// of its own that is loaded (dlopen) only when a scenario names it: iwarp, which brings
/// ns-3's TCP/IP stack, some 7.5 MiB of library pages that every other run would carry.
class FabricRegistry
{
  public:
    using Factory = std::unique_ptr<Fabric> (*)();
    /// A new fabric of \p type; throws std::invalid_argument for a name not registered,
    /// std::runtime_error when its plugin does not load.
    static std::unique_ptr<Fabric> Create(const std::string& type);
    /// Loads \p type's plugin, if it has one, so that its models' ns-3 TypeIds and
    /// attributes are registered (fabric.set, fabemu list); throws as Create does.
    static void Load(const std::string& type);
    static std::vector<std::string> Names();
};

/// What a fabric plugin exports, unmangled: a new fabric the caller owns.
using FabricPluginEntry = Fabric* (*)();
/// The name of that function in every plugin.
inline constexpr const char* kFabricPluginEntry = "fabemu_make_fabric";

/// Loads the plugin at \p path for fabric \p type once (later calls return the same
/// entry), and never unloads it: its TypeIds stay registered with ns-3. Throws
/// std::runtime_error naming the fabric and the file when it does not load.
FabricPluginEntry LoadFabricPlugin(const std::string& type, const std::string& path);

/// Loads the plugin at \p path once and never unloads it, and returns its function
/// \p entry (unmangled). \p global: its libraries' symbols serve what they load in turn
/// (Open MPI loads its components so). Throws std::runtime_error naming \p what and the
/// file when either does not load.
void* LoadPlugin(const std::string& what, const std::string& path, const char* entry,
                 bool global = false);

/// Where the plugin built as \p built is: that file, or the file of its name in
/// $FABEMU_PLUGIN_DIR when that is set (plugins moved with fabemu).
std::string PluginPath(const std::string& built);

/// The hosts real endpoints stand for, which the fabric's helper gives bare ports
/// (SetExternalHosts): in emulation every endpoint's host, in simulation none.
std::vector<uint32_t> ExternalHosts(const Scenario& s, RunMode mode);

/// The priority real endpoints' RoCEv2 travels on across the fabric: the simulated
/// NICs' own (ns3::RoceNic::Priority as the scenario leaves it, 3 by default).
uint8_t RocePriority();

/// The IP MTU of the Ethernet links and endpoint interfaces that carry RDMA at
/// \p pathMtu: standard frames up to 1024, then 4200 (rxe takes its path MTU from
/// eth0; 4096 plus every RoCEv2 header fits). One rule in simulation and emulation.
uint32_t IpMtuForPathMtu(uint32_t pathMtu);

} // namespace fabemu

#endif
