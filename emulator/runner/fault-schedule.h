// The scenario's faults (faults:) as events of the run: each at its time on its link, by
// the Fabric seam, and what happened recorded for faults.csv and summary.json.
#ifndef FABEMU_RUNNER_FAULT_SCHEDULE_H
#define FABEMU_RUNNER_FAULT_SCHEDULE_H

#include "emulator/runner/fabric.h"
#include "scenarios/src/scenario.h"

#include "ns3/nstime.h"
#include "ns3/rdma-workload.h"
#include "ns3/topology-spec.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace fabemu
{

class FaultSchedule
{
  public:
    /// Resolves every fault's link in \p s's topology (ScenarioError at an unknown one).
    explicit FaultSchedule(const Scenario& s);
    /// Schedules each fault on \p fabric (built); \p fabric must outlive the run.
    void Schedule(Fabric& fabric) { Schedule(&fabric); }
    /// The same; without a network (null) only stragglers, which change no fabric.
    void Schedule(Fabric* fabric);
    /// What a crash fault (crash: vm) does to its host: kill its VM. Set before the run by
    /// the emulator, which has the VMs; it runs on the simulation thread.
    void SetCrash(std::function<void(uint32_t host)> crash) { m_crash = std::move(crash); }
    /// The hosts crashed so far, each with the fault that did it ("faults.N at 2 s").
    std::vector<std::pair<uint32_t, std::string>> Crashed() const;
    /// Each failed flow of \p flows whose two hosts no path joined while a link was down
    /// (at some time after it started) gets that as its reason's end: "...; no path from
    /// h0 to h3 while s0-s1 was down (faults.0, 2ms for 500us)".
    void ExplainFailures(std::vector<ns3::FlowRecord>& flows) const;
    /// faults.csv: time_s, link, kind, value, one row per fault applied (and an `up` row
    /// when a link that went down comes back).
    void Write(const std::filesystem::path& dir) const;
    /// summary.json's "faults": [{at_s, link, kind, value, applied}], in the file's order.
    nlohmann::json Summary() const;
    bool Empty() const { return m_faults.empty(); }
    /// How late a message host \p host starts at \p start leaves: the delays of the
    /// stragglers on it whose `at` has come.
    static ns3::Time FaultDelay(const std::vector<FaultSpec>& faults, uint32_t host,
                                ns3::Time start);
    /// Gives \p runner (before Start) \p s's stragglers, on every NIC of their servers;
    /// \p s must outlive its Start.
    static void AddStragglers(const Scenario& s, ns3::FlowRunner& runner);

  private:
    struct Entry
    {
        FaultSpec spec;
        uint32_t link;
        std::string name; ///< the link as the topology names it (s0-s1)
        bool applied{false};
        ns3::Time at;
        uint32_t railsPerServer{1};       ///< a host's fault: its server's first NIC is h x this
        ns3::Time upAt{ns3::Time::Max()}; ///< down: when it came back (Max: not yet)
        bool broughtBack{false};          ///< down: its end brought the link back (no later outage)
    };
    void Apply(size_t i, Fabric* fabric);
    void LinkBack(size_t i, Fabric* fabric);
    /// Whether \p a and \p b are joined with the links down at \p t left out.
    bool Joined(uint32_t a, uint32_t b, ns3::Time t) const;

    std::vector<Entry> m_faults;
    ns3::TopologySpec m_spec; ///< the links' topology (when a fault breaks a link)
    std::function<void(uint32_t)> m_crash;
};

} // namespace fabemu

#endif
