// Real endpoint VMs over the modelled RoCEv2 fabric, in real time: fabemu emulate, and
// fabemu run for scenarios with VM endpoints.
#ifndef FABEMU_EMULATE_H
#define FABEMU_EMULATE_H

#include "emulator/runner/fabric.h"
#include "scenarios/src/scenario.h"

#include "ns3/rdma-workload.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <ostream>
#include <string>
#include <vector>

namespace fabemu
{

struct EmulateOptions
{
    unsigned count{2};
    std::string rate{"100Gbps"};
    std::string delay{"1us"};
    std::vector<std::string> servers; ///< "hN: command", started in the background first
    std::vector<std::string> run;     ///< "hN: command", run in turn after the servers
    bool parallel{false};             ///< run the --run commands at the same time
    std::vector<std::string> set;     ///< "ns3::Class::Attribute=value" defaults for the fabric
    std::string cache;
    std::string lagThreshold{"1ms"};
    std::string cc{"none"};    ///< dcqcn: the edges run DCQCN for the endpoints
    bool bridge{false};        ///< baseline: the VMs on a plain Linux bridge instead of the model
    bool relay{false};         ///< baseline: the VMs joined by a bare user-space relay (TapRelay)
    std::string backend{"vm"}; ///< vm, or netns (a namespace per endpoint)
    bool noRdma{false};        ///< netns: plain IP namespaces
    std::string scheduling{
        "shared"}; ///< the simulation thread: shared (nice -10) or realtime (SCHED_FIFO)
};

struct CommandOutcome
{
    std::string on;
    std::string cmd;
    int exitCode{-1};
    std::string out;
    bool started{true}; ///< false: never started (its VM was gone, or on_failure: stop)
    bool ended{false};  ///< it ended, or was given up on: exitCode and out are final
};

/// What the edges did, summed over every real endpoint's edge port.
struct EdgeTotals
{
    uint64_t framesFromEndpoints{0};
    uint64_t framesToEndpoints{0};
    uint64_t bytesToEndpoints{0};
    uint64_t arpReplies{0};
    uint64_t neighbourAdverts{0};
    std::map<std::string, uint64_t> edgeDrops; ///< by reason
    uint64_t edgeCnpsSent{0};                  ///< DCQCN at the edges: notification points
    uint64_t edgeCnpsConsumed{0};              ///< reaction points
    uint64_t framesPaced{0};
    uint64_t framesMadeEct{0};
    uint64_t lowestRateBps{0};
    uint64_t framesHeld{0};    ///< toward the VMs: frames a full tap could not take at once
    uint64_t peakHeldBytes{0}; ///< the most any one edge held
    uint64_t edgePauses{0};    ///< PFC pauses the edges sent while holding
};

/// How faithfully simulated time kept to the wall clock.
struct LagTotals
{
    double lagMaxMs{0};
    double lagP99Ms{0};
    /// Times the simulation, more than MaxBacklog behind, left the endpoints' frames
    /// in the kernel until it had caught up (an overload; see FabemuRealtimeSimulatorImpl).
    uint64_t readsDeferred{0};
    double maxBacklogMs{0};
    bool timingFaithful{true};
    std::string scheduling; ///< what the simulation thread got: SCHED_FIFO or "nice N"
                            ///< (CurrentThreadScheduling)
    /// The thread that carried the frames (the simulation thread; the relay's in that
    /// baseline): its CPU time, user and system, and the wall time it ran. A lag with the
    /// thread mostly idle is its waits for a core, not its work.
    double threadCpuS{0};
    double threadWallS{0};
};

/// An emulation's outcome: the fabric's totals (as in a simulation), the edges', the lag's.
struct EmulateResult : FabricTotals, EdgeTotals, LagTotals
{
    int exitCode{0};
    std::vector<CommandOutcome> commands;
    double simTimeS{0};
    std::vector<ns3::FlowRecord> flows; ///< simulated background flows, if any: every one, by id
    size_t flowCount{0};
    nlohmann::json faults; ///< summary.json's "faults" (FaultSchedule::Summary); null: none
    int interruptedBy{0};  ///< the signal that stopped the run, or 0
};

/// fabemu emulate: a star of VMs described on the command line.
EmulateResult RunEmulation(const EmulateOptions& opt, std::ostream& out, std::ostream& err);

struct EmulateSetup
{
    std::string cache;       ///< image cache ("" = the default)
    std::string resultsDir;  ///< where pcaps and CSVs go ("" = nowhere)
    bool printOutputs{true}; ///< print each command's whole output (else one line each)
    bool bridge{false};      ///< baseline: a plain Linux bridge joins the VMs, no fabric model
    bool relay{false};       ///< baseline: the emulator's tap I/O joins them, no fabric model
};

/// A scenario with VM endpoints, in real time: VMs on the scenario's hosts,
/// the rest of the fabric simulated, its commands run through the guest agents
/// in order (each after its 'after' delay; waited for unless 'background').
EmulateResult EmulateScenario(const Scenario& s, const EmulateSetup& setup, std::ostream& out,
                              std::ostream& err);

/// summary.json's run part for an emulation: the simulation's (RunSummaryJson) with
/// the edges' CNPs and bytes in the totals, and the edges, lag and commands.
nlohmann::json EmulationSummaryJson(const EmulateResult& r);

} // namespace fabemu

#endif
