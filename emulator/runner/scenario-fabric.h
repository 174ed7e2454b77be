// A scenario's fabric, as ns-3 sees it: attribute defaults, the topology, the flows.
// Shared by simulation runs and emulation runs.
#ifndef FABEMU_SCENARIO_FABRIC_H
#define FABEMU_SCENARIO_FABRIC_H

#include "emulator/runner/fabric.h"
#include "scenarios/src/scenario.h"

#include "ns3/rdma-workload.h"
#include "ns3/topology-spec.h"

#include <initializer_list>
#include <string>
#include <vector>

namespace fabemu
{

/// Sets the ns-3 attribute defaults the scenario asks for, in one order for
/// simulation and emulation: the fabric keys, then the fabric's own defaults for
/// \p mode (Fabric::SetModeDefaults), then fabric.set, last, so it always decides.
/// Call after Config::Reset. Throws ScenarioError naming an unknown attribute or a
/// value it does not take.
void ApplyFabricDefaults(const Scenario& s, RunMode mode = RunMode::Simulation);

/// Checks fabric.set against the attributes ns-3 knows, without running anything.
void CheckAttributes(const Scenario& s);

ns3::TopologySpec BuildTopology(const Scenario& s);
/// What topology.links calls each link of \p spec (by index): its two ends, "h2-s0",
/// and on a rail cluster a NIC's end as its server's, "h1.nic3-s3".
std::vector<std::string> LinkNames(const Scenario& s, const ns3::TopologySpec& spec);
/// summary.json's "deadlock" for a cycle of waiting link ends: {kind, cycle: ["s0->s1
/// vl0", ...]}. An end is 2 l + e of link l of \p names (LinkNames: "a-b", end 0 at a
/// sending to b), each with its lane (\p lane "vl" or "prio" and its number).
nlohmann::json DeadlockJson(const std::string& kind,
                            const std::vector<std::pair<uint32_t, uint8_t>>& cycle,
                            const std::vector<std::string>& names, const std::string& lane);
/// The link of \p name among \p names (LinkNames): "a-b" either way round, or a host alone
/// for its own link; a ScenarioError at \p mark naming \p what and the closest otherwise.
uint32_t FindLink(const Scenario& s, const std::vector<std::string>& names, const std::string& name,
                  const SourceMark& mark, const std::string& what);
/// The links of s.faults in \p spec, in order (ScenarioError at a fault's unknown link).
std::vector<uint32_t> FaultLinks(const Scenario& s, const ns3::TopologySpec& spec);
/// FaultLinks' entry for a fault that breaks no link (a straggler).
constexpr uint32_t kNoLink = 0xffffffff;

/// Whether \p s has a network between its servers (the node builder has none).
bool HasNetwork(const Scenario& s);

/// A ScenarioError at the last fabric.set entry naming one of \p attributes (it is
/// applied last, so it decides), else at scenario key \p key.
ScenarioError FabricError(const Scenario& s, std::initializer_list<const char*> attributes,
                          const std::string& key, const std::string& what);

/**
 * \brief Every check a run makes before it simulates, without simulating: the
 * attributes, the fabric built as the scenario asks (switch buffers against their
 * ports' reserve and headroom, LIDs, arbitration tables, congestion control) and
 * the flows. Throws ScenarioError at the key responsible. Leaves ns-3 reset.
 */
void PreflightScenario(const Scenario& s);

/// The flows of the simulated workloads (commands are not flows), drawn with the scenario's seed;
/// \p workloadOf, when given, gets each flow's workload index (flow id order).
std::vector<ns3::FlowSpec> BuildFlows(const Scenario& s, std::vector<size_t>* workloadOf = nullptr);

} // namespace fabemu

#endif
