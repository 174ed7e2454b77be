// The seam for fabrics inside every server (topology.node.<key>): PCIe, NVLink and CXL. A node
// fabric builds each server's inside, lends the RDMA flow runner its NICs' host interfaces, runs
// its own workloads (dma) as flows, and adds its records and totals to the run's. run.cc knows none
// by name.
#ifndef FABEMU_NODE_FABRIC_H
#define FABEMU_NODE_FABRIC_H

#include "scenarios/src/scenario.h"

#include "ns3/callback.h"
#include "ns3/collective-transport.h"
#include "ns3/rdma-host-interface.h"
#include "ns3/rdma-workload.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace fabemu
{

class NodeFabric
{
  public:
    virtual ~NodeFabric() = default;

    /// Preflight: builds one server's inside as \p s describes it and throws ScenarioError
    /// at the key responsible if the model refuses it. Needs the attribute defaults applied.
    virtual void Check(const Scenario& s) const = 0;
    /// Every server's inside (after ApplyFabricDefaults).
    virtual void Build(const Scenario& s) = 0;
    /// Its traces of the hosts \p s records into \p dir (after Build).
    virtual void AttachRecorders(const Scenario& s, const std::filesystem::path& dir) = 0;
    /// Gives \p runner each server's NIC host interface, so that its WRITEs are staged.
    virtual void AttachNics(ns3::FlowRunner& runner) const = 0;
    /// Schedules the fabric's own workloads as flows numbered from \p firstId; returns how
    /// many there are.
    virtual size_t StartFlows(const Scenario& s, uint32_t firstId) = 0;
    /// Called once every flow StartFlows scheduled has ended.
    virtual void SetAllDoneCallback(ns3::Callback<void> cb) = 0;
    /// Payload bytes flow \p id (one of StartFlows') has delivered so far.
    virtual uint64_t Delivered(uint32_t id) const = 0;
    /// Whether flow \p id has ended (completed or failed).
    virtual bool Ended(uint32_t id) const = 0;
    /// Those flows' outcomes, by id (after the run).
    virtual std::vector<ns3::FlowRecord> Outcomes() const = 0;
    /// Its CSVs into \p dir (after the run).
    virtual void WriteRecords(const std::filesystem::path& dir) = 0;
    /// Its keys of summary.json's totals (after the run).
    virtual void AddTotals(nlohmann::json& totals) const = 0;
    /// Its own entries of summary.json (after the run; CXL: memory).
    virtual void AddSummary(nlohmann::json& summary) const { (void)summary; }
    /// The terminal's words on those totals ("PCIe replays 0, credit-starved 0 s").
    virtual std::string TotalsLine(const nlohmann::json& totals) const = 0;
    /// The interface through which network host \p host (a server's NIC: on a rail
    /// cluster server x rails + rail) reaches the server's memory (after Build); null
    /// where this fabric holds no NICs.
    virtual ns3::Ptr<ns3::RdmaHostInterface> NicInterface(uint32_t host) const
    {
        (void)host;
        return nullptr;
    }
    /// Ranks on GPUs \p gpus ("gpuK") of server \p host for a collective, named \p names,
    /// where this fabric joins them (after Build); null where it does not.
    virtual ns3::Ptr<ns3::CollectiveTransport> CollectiveTransport(
        uint32_t host, const std::vector<std::string>& gpus,
        const std::vector<std::string>& names) const
    {
        (void)host;
        (void)gpus;
        (void)names;
        return nullptr;
    }
};

/**
 * \brief The flows a node fabric runs itself (dma, copy): numbered after the RDMA flows,
 * started at their times on the model (Launch), ended once (Completed, or failed at
 * launch with the model's reason), pending otherwise.
 */
class NodeFabricFlows : public NodeFabric
{
  public:
    size_t StartFlows(const Scenario& s, uint32_t firstId) override;
    void SetAllDoneCallback(ns3::Callback<void> cb) override { m_allDone = cb; }
    uint64_t Delivered(uint32_t id) const override;
    bool Ended(uint32_t id) const override;
    std::vector<ns3::FlowRecord> Outcomes() const override { return m_flows; }

  protected:
    /// Whether workload \p w's flows are this fabric's.
    virtual bool Takes(const Scenario& s, const WorkloadSpec& w) const = 0;
    /// \p w's bytes alone on an idle path.
    virtual ns3::Time IdealFct(const WorkloadSpec& w) const = 0;
    /// Starts flow \p i (\p r: its record) from device \p from to \p to on server r.spec.src;
    /// returns the model's transfer id, or 0 and \p why.
    virtual uint64_t Launch(size_t i, const ns3::FlowRecord& r, const std::string& from,
                            const std::string& to, std::string& why) = 0;
    /// Bytes of flow \p r (model transfer \p transfer, from device \p from to \p to on
    /// server r.spec.src) in so far.
    virtual uint64_t Progress(const ns3::FlowRecord& r, const std::string& from,
                              const std::string& to, uint64_t transfer) const = 0;
    /// The model says flow \p i has all its bytes at \p at (\p bytes: how many, for a flow
    /// that ran for a time rather than a size).
    void Completed(size_t i, ns3::Time at, uint64_t bytes = 0);

  private:
    void LaunchAt(size_t i);
    void Ended();

    std::vector<ns3::FlowRecord> m_flows;
    std::vector<uint64_t> m_transfers; ///< by flow: the model's transfer id, 0 until launched
    std::vector<std::pair<std::string, std::string>> m_devices; ///< by flow: from, to
    uint32_t m_firstId{0};
    size_t m_ended{0};
    ns3::Callback<void> m_allDone;
};

/// The node fabrics \p s gives its servers, in a fixed order (none without topology.node).
std::vector<std::unique_ptr<NodeFabric>> NodeFabricsOf(const Scenario& s);

} // namespace fabemu

#endif
