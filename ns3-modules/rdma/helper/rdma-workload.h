/*
 * Workloads on any RdmaFabric: flow lists from the usual generators (bulk,
 * incast, permutation, all-to-all, Poisson arrivals at a target load with
 * sizes from a CDF), and a runner that starts each flow on its own queue pair
 * at its time, records its completion, and writes FCTs as the HPCC simulator
 * does.
 */
#ifndef FABEMU_RDMA_WORKLOAD_H
#define FABEMU_RDMA_WORKLOAD_H

#include "ns3/data-rate.h"
#include "ns3/flow-size-cdf.h"
#include "ns3/random-variable-stream.h"
#include "ns3/rdma-fabric.h"
#include "ns3/rdma-host-interface.h"
#include "ns3/rdma-staged-write.h"

#include <functional>
#include <map>
#include <ostream>
#include <string>
#include <vector>

namespace ns3
{

struct FlowSpec
{
    uint32_t src{0};
    uint32_t dst{0};
    uint64_t bytes{0};
    Time start;
    RdmaWorkRequest::Op op{RdmaWorkRequest::Op::Write};
    uint8_t serviceLevel{0}; ///< IB SL (its VL on InfiniBand)
    std::string tag{};       ///< what results call it (its workload); "" for none
    /// Which memory the NICs read and write where a host has a host interface
    /// (FlowRunner::SetHostInterface): "host" or a device's ("gpu0").
    std::string srcMemory{"host"};
    std::string dstMemory{"host"};
    /// What results call the ends; "" for "hN" (a dma flow names "h0.gpu0").
    std::string srcName{};
    std::string dstName{};
};

namespace workload
{

std::vector<FlowSpec> Bulk(uint32_t src, uint32_t dst, uint64_t bytes, Time start);
/// Every host of \p srcs sends \p bytes to \p dst at once.
std::vector<FlowSpec> Incast(uint32_t dst, const std::vector<uint32_t>& srcs, uint64_t bytes,
                             Time start);
/// Each host sends to one other, every host receiving from exactly one (a random derangement).
std::vector<FlowSpec> Permutation(const std::vector<uint32_t>& hosts, uint64_t bytes, Time start,
                                  Ptr<UniformRandomVariable> rng);
/// Every host sends \p bytes to every other.
std::vector<FlowSpec> AllToAll(const std::vector<uint32_t>& hosts, uint64_t bytes, Time start);
/**
 * \brief Poisson arrivals on each host from \p start to \p stop, at a rate that
 * loads its link to \p load (0..1) with sizes from \p cdf; destinations uniform.
 */
std::vector<FlowSpec> Poisson(const std::vector<uint32_t>& hosts, double load,
                              const FlowSizeCdf& cdf, DataRate hostRate, Time start, Time stop,
                              Ptr<UniformRandomVariable> rng);

} // namespace workload

/// How a flow ended: only a completed flow has a flow completion time.
enum class FlowState : uint8_t
{
    Completed, ///< every byte acknowledged
    Failed,    ///< its work request completed in error (retry count exceeded, QP error, ...)
    Pending,   ///< started or not, it had not finished when the run ended
};

const char* FlowStateName(FlowState s);

/// One flow's outcome.
struct FlowRecord
{
    uint32_t id{0};
    FlowSpec spec;
    uint16_t srcPort{0};
    uint16_t dstPort{0};
    FlowState state{FlowState::Pending};
    /// Why a failed flow failed, in words ("retry count exceeded"); empty otherwise.
    std::string reason;
    Time fct;   ///< completed flows only; zero otherwise
    Time ended; ///< when it completed or failed; zero while pending
    Time idealFct;
    /// Payload bytes delivered in order to the receiver (all of them when completed).
    uint64_t delivered{0};

    bool Completed() const { return state == FlowState::Completed; }
};

class FlowRunner
{
  public:
    explicit FlowRunner(RdmaFabric& fabric);

    void Add(const std::vector<FlowSpec>& flows);
    /// Schedules every flow added so far; call before Simulator::Run.
    void Start();
    /// Called once every flow has finished.
    void SetAllDoneCallback(Callback<void> cb) { m_allDone = cb; }
    /**
     * \brief Host \p host's NIC reaches its memory through \p nic: every WRITE it sends or
     * receives is then staged through memory (RdmaStagedWrite). Hosts without one keep
     * the transport's own timing. Call before Start().
     */
    void SetHostInterface(uint32_t host, Ptr<RdmaHostInterface> nic);
    /// How late a flow of host (network port) h starting at t leaves: stragglers.
    using StartDelay = Callback<Time, uint32_t, Time>;
    /// Each flow leaves \p delay(src, start) after its start (its FCT counts from its
    /// start). Call before Start.
    void SetStartDelay(StartDelay delay) { m_startDelay = delay; }
    /**
     * \brief A partitioned run: whether this rank simulates host h. Every rank still
     * connects every flow at its start, so that both ends' QPs get the same numbers on
     * all ranks, but only the rank of a flow's source posts it and records its end.
     * Call before Start.
     */
    void SetLocalHosts(Callback<bool, uint32_t> local) { m_local = local; }
    /**
     * \brief Whether a flow's QPs are released when it ends (the default), or kept to the
     * end of the run. A partitioned run keeps them, and so does its one-rank reference:
     * the rank of a flow's source cannot release the QP on another rank at that instant,
     * and a late packet (a BECN for a marked ACK) must find the same QPs on every rank.
     */
    void SetReleaseOnEnd(bool release) { m_releaseOnEnd = release; }

    /// The flows that have ended, completed or failed, in the order they ended.
    const std::vector<FlowRecord>& Records() const { return m_records; }
    /// Every flow by id: the ended ones as recorded, the others as pending now.
    std::vector<FlowRecord> Outcomes() const;
    size_t Pending() const { return m_flows.size() - m_records.size(); }
    size_t Failed() const { return m_failed; }
    const std::vector<FlowSpec>& Flows() const { return m_flows; }
    /// Payload bytes of flow \p id received in order so far.
    uint64_t Delivered(uint32_t id) const;
    /// Whether flow \p id has ended (completed or failed).
    bool Ended(uint32_t id) const { return id < m_finished.size() && m_finished[id]; }

    /// HPCC's fct.txt: "sip dip sport dport bytes start_ns fct_ns ideal_fct_ns", IPs in hex;
    /// completed flows only (a failed or pending flow has no FCT). \p dport, when given,
    /// writes the dport column instead of the flow's real destination port.
    void WriteFct(std::ostream& os,
                  const std::function<uint16_t(const FlowRecord&)>& dport = {}) const;

  private:
    void Launch(uint32_t id);
    void Finished(uint32_t id, const RdmaCompletion& done);
    Ptr<RdmaHostInterface> HostInterface(uint32_t host) const;

    RdmaFabric& m_fabric;
    std::vector<FlowSpec> m_flows;
    std::vector<FlowRecord> m_records;
    std::vector<RdmaFabric::Connection> m_connections;
    std::map<uint32_t, Ptr<RdmaHostInterface>> m_hostInterfaces;
    std::vector<Ptr<RdmaStagedWrite>> m_staged; ///< by flow id; null: not staged
    std::vector<bool> m_finished;
    std::vector<uint64_t> m_deliveredAtEnd; ///< in-order bytes when the flow ended
    size_t m_failed{0};
    Callback<void> m_allDone;
    StartDelay m_startDelay;          ///< null: every flow leaves at its start
    Callback<bool, uint32_t> m_local; ///< SetLocalHosts's; null: every host is local
    bool m_releaseOnEnd{true};
};

} // namespace ns3

#endif
