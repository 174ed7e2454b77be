// A scenario split among the ranks of ns-3's distributed simulator (issue 21): how its
// topology is cut (PlanPartition), this process's share of the run (PartitionedRun: the
// engine, MPI, the common end), and how the ranks' results become one results folder,
// the same as a one-rank run's (RankShare, MergeShares).
#ifndef FABEMU_PARTITIONED_RUN_H
#define FABEMU_PARTITIONED_RUN_H

#include "emulator/runner/fabric.h"
#include "scenarios/src/scenario.h"

#include "ns3/nstime.h"
#include "ns3/rdma-workload.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace fabemu
{

/// How many ranks Open MPI's mpirun started this process among (OMPI_COMM_WORLD_SIZE);
/// 1 when it did not.
uint32_t RanksFromLauncher();
/// This process's rank in that launch (OMPI_COMM_WORLD_RANK); 0 when none.
uint32_t RankFromLauncher();
/// Whether this build has ns-3's mpi module (Open MPI and Debian's ns-3 source).
bool HavePartitionedRuns();
/// Why \p s cannot be split among ranks, naming the key; "" when it can. Partitioned runs
/// take RoCEv2 packet simulations of flows, without VMs, servers, collectives or faults.
std::string PartitionProblem(const Scenario& s);

struct PartitionPlan
{
    std::vector<uint32_t> rankOfNode; ///< TopologySpec::Nodes' order
    std::vector<uint32_t> rankOfHost; ///< by network host (hN)
    size_t crossingLinks{0};
    ns3::Time lookahead; ///< the smallest delay of a crossing link
};

/// The split of \p s's topology among \p ranks: topology.partition's pins, switch tiers
/// for the rest. ScenarioError for an unknown switch, more ranks than leaf switches, a
/// rank left empty or a crossing link without delay (there would be no lookahead).
PartitionPlan PlanPartition(const Scenario& s, uint32_t ranks);

/// While it lives (and \p on), simulators made break ties between events as partitioned
/// runs do, with ns3::DeterministicScheduler: `fabemu run --ranks 1`.
class DeterministicTies
{
  public:
    explicit DeterministicTies(bool on);
    ~DeterministicTies();
    DeterministicTies(const DeterministicTies&) = delete;
    DeterministicTies& operator=(const DeterministicTies&) = delete;

  private:
    bool m_on;
};

/// What a partitioned run asks of MPI. Open MPI and ns-3's distributed engines come in a
/// plugin of their own (runner/partitioned-run-mpi.cc), which PartitionedRun loads: no
/// other run maps their libraries (some 1.4 MiB of pages).
class RankComm
{
  public:
    virtual ~RankComm() = default;
    /// Starts MPI (the engine's simulator is bound already) and opens ns3::RankExchange on
    /// it; sets this process's rank and how many there are.
    virtual void Start(uint32_t& rank, uint32_t& size) = 0;
    /// Ends MPI, after the engine's last use (Simulator::Destroy); with \p abort, ends
    /// every rank at once instead (the others would wait for this one in a collective).
    virtual void End(bool abort) = 0;
    /// The sum of \p here over the ranks; every rank calls it.
    virtual uint64_t Sum(uint64_t here) = 0;
    /// The most of each of \p values over the ranks, in place; every rank calls it.
    virtual void Max(int64_t (&values)[2]) = 0;
    /// Rank 0 gets every rank's \p mine in rank order, the others nothing. Ends every rank
    /// where rank 0's whole would not fit MPI's counts (ints).
    virtual std::vector<std::string> Gather(const std::string& mine) = 0;
};

/// What the plugin exports, unmangled: a new RankComm the caller owns.
using RankCommEntry = RankComm* (*)();
inline constexpr const char* kRankCommEntry = "fabemu_make_rank_comm";

/// This process's share of a partitioned run. Construct after Simulator::Destroy and
/// before anything is built: it binds the engine and ns3::DeterministicScheduler (ties
/// broken alike however many ranks) and starts MPI; the destructor ends MPI, after the
/// last Simulator::Destroy, or aborts every rank (MPI_Abort) when it is left by an
/// exception, since the others would wait for this one for ever. One per process: MPI
/// starts once.
class PartitionedRun
{
  public:
    /// \p engine: "gtw" (granted time window) or "null" (null messages). Throws
    /// std::runtime_error where the build has no mpi module.
    explicit PartitionedRun(const std::string& engine);
    ~PartitionedRun();
    PartitionedRun(const PartitionedRun&) = delete;
    PartitionedRun& operator=(const PartitionedRun&) = delete;

    uint32_t Rank() const { return m_rank; }
    uint32_t Size() const { return m_size; }
    const std::string& Engine() const { return m_engine; }
    /**
     * \brief Every \p every of simulated time, the ranks add up their unfinished flows
     * (\p pendingHere) and all stop once there are none, before \p horizon. Only the
     * granted-time-window engine, whose ranks meet at every window, can do it: under
     * null messages every rank runs to the horizon (the merge trims what comes after).
     */
    void StopWhenAllDone(std::function<size_t()> pendingHere, ns3::Time every, ns3::Time horizon);
    /// Rank 0 gets every rank's \p mine in rank order; the others get nothing. Throws
    /// std::runtime_error for a share of 2 GiB or more (MPI counts are ints).
    std::vector<std::string> Gather(const std::string& mine) const;
    /// When the last flow ended on any rank, from this rank's \p lastHere (the latest
    /// end of its own flows) and whether all of them ended (\p allHere); Time::Max()
    /// when a flow on some rank did not. Every rank calls it.
    ns3::Time LastEnd(bool allHere, ns3::Time lastHere) const;

  private:
    void Check();

    std::string m_engine;
    std::unique_ptr<RankComm> m_comm; ///< from the MPI plugin
    uint32_t m_rank{0};
    uint32_t m_size{1};
    std::function<size_t()> m_pending;
    ns3::Time m_every;
    ns3::Time m_horizon;
};

/// The files of a results folder that ranks write in part: each rank's rows are its own
/// nodes' and flows'.
const std::vector<std::string>& PartitionedFiles();

/// Sorts the rows of PartitionedFiles() in \p dir into the one order whatever the ranks:
/// by time (fct.csv, fct.txt: by completion), then field by field (whole numbers as
/// numbers, anything else as text). `--ranks 1` does it too, so that its files and a
/// partitioned run's compare byte for byte.
void SortRecords(const std::filesystem::path& dir);

/// One rank's share: the flows it sent (\p local: its hosts), the bytes its receivers got,
/// its totals, and its rows of PartitionedFiles() and pcaps in \p dir. CBOR.
std::string RankShare(const std::vector<ns3::FlowRecord>& flows,
                      const std::function<bool(uint32_t)>& local,
                      const std::function<uint64_t(uint32_t)>& receivedHere,
                      const FabricTotals& totals, const std::filesystem::path& dir);

/// Rank 0: the shares of all ranks merged into \p flows (each flow as its source's rank
/// recorded it), the totals returned, and PartitionedFiles() and pcaps rewritten in \p dir;
/// rows past the end a one-rank run would have had are trimmed. \p simTime becomes that end.
FabricTotals MergeShares(const std::vector<std::string>& shares,
                         std::vector<ns3::FlowRecord>& flows, const std::filesystem::path& dir,
                         ns3::Time rateInterval, ns3::Time& simTime);

} // namespace fabemu

#endif
