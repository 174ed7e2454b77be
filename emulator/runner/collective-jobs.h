// The scenario's collective workloads as jobs on the run's fabrics: each a communicator
// of hosts or GPUs that runs its operation `iterations` times, one after another,
// packet by packet (fidelity packet) or timed by the alpha-beta cost of the same
// topology (analytical). Both times are kept, so every packet-mode result says how far
// it is from the formula.
#ifndef FABEMU_COLLECTIVE_JOBS_H
#define FABEMU_COLLECTIVE_JOBS_H

#include "emulator/runner/node-fabric.h"
#include "scenarios/src/scenario.h"

#include "ns3/collective.h"
#include "ns3/rdma-fabric.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>
#include <vector>

namespace fabemu
{

/// One run of one job's operation.
struct CollectiveResult
{
    std::string job;
    uint32_t iteration{0};
    uint32_t bucket{0}; ///< a training step's: which of its buckets
    std::string op;
    std::string algorithm;
    bool autoPicked{false}; ///< the job said auto; algorithm is what the cost model chose
    std::vector<std::string> ranks;
    uint64_t bytes{0};
    std::string state{"pending"}; ///< completed | failed | pending
    std::string reason;           ///< failed only
    double startS{0};
    double timeS{0};       ///< completed: start to last arrival
    double analyticalS{0}; ///< the alpha-beta time of the same operation
    double algBwGbs{0};    ///< bytes / time, GB/s (10^9 bytes/s)
    double busBwGbs{0};    ///< algBw * nccl-tests' factor
    uint64_t delivered{0}; ///< packet mode: bytes the ranks received, summed
};

/// One iteration of a training-step job (a collective workload with compute).
struct TrainingStep
{
    std::string job;
    uint32_t iteration{0};
    std::string state{"pending"}; ///< completed (every bucket) | failed (one) | pending
    double startS{0};
    double computeS{0};
    double stepS{0};    ///< completed: start to the later of compute's end and the last bucket's
    double exposedS{0}; ///< completed: what communication added to the compute
};

class CollectiveJobs
{
  public:
    /// The jobs of \p s's collective workloads: ranks that are hosts on \p fabric, GPUs of
    /// one server on the node fabric of \p nodes that joins them, GPUs of several servers
    /// on both (ClusterCollectiveTransport). An algorithm with a pair of ranks that no
    /// path joins fails its iterations before they start, with the pair named.
    CollectiveJobs(const Scenario& s, ns3::RdmaFabric* fabric,
                   const std::vector<std::unique_ptr<NodeFabric>>& nodes);
    ~CollectiveJobs();
    size_t Count() const;
    /// Packet mode, while it runs: the share of every job's iterations done, 0 to 1 (an
    /// iteration partly, by its transfers; a job that failed or ended, whole).
    double Progress() const;
    /// Packet mode: schedules every job at its start; \p allDone once each has run every
    /// iteration (or failed).
    void Start(ns3::Callback<void> allDone);
    /// Analytical mode: every iteration timed back to back, nothing simulated.
    void Estimate();
    /// Every iteration (each bucket of a training step), in job order; pending ones
    /// included (after the run).
    std::vector<CollectiveResult> Results() const;
    /// Every iteration of the training-step jobs, from Results(): each starts when the one
    /// before ended, computes for its compute time, and its bucket k's collective starts
    /// once (k+1)/buckets of that is done and bucket k-1 has ended.
    std::vector<TrainingStep> TrainingSteps() const;
    /**
     * \brief Packet mode, after the run: every transfer of every ended iteration into
     * \p dir's collective-steps.csv (job, iteration, from, to, step, bytes, posted_s,
     * arrived_s) and trace.json, a Chrome trace (Perfetto opens it) with a process per
     * job and a thread per rank, each transfer a slice on its sender's thread.
     */
    void WriteSteps(const std::filesystem::path& dir) const;

  private:
    struct Job;
    void Launch(size_t j);
    void Ended(size_t j, ns3::Ptr<ns3::Collective> c);

    /// One transfer of an ended iteration.
    struct Step
    {
        size_t job;
        uint32_t iteration;
        ns3::CollectiveTransferRecord t;
    };

    std::vector<Job> m_jobs;
    std::vector<Step> m_steps;
    std::vector<FaultSpec> m_faults; ///< the scenario's: its stragglers slow ranks' sends
    ns3::Callback<void> m_allDone;
    size_t m_open{0};
};

/// summary.json's training list.
nlohmann::json TrainingJson(const std::vector<TrainingStep>& steps);
/// training.csv.
void WriteTrainingCsv(const std::filesystem::path& file, const std::vector<TrainingStep>& steps);
/// A line per training job of summary.json's \p training: its completed steps' mean time
/// and exposed communication.
std::string TrainingTable(const nlohmann::json& training);

/// summary.json's collectives list.
nlohmann::json CollectivesJson(const std::vector<CollectiveResult>& results);
/// collectives.csv.
void WriteCollectivesCsv(const std::filesystem::path& file,
                         const std::vector<CollectiveResult>& results);
/// The results as nccl-tests prints them: size, count, time (us), algbw, busbw per line.
std::string CollectivesTable(const std::vector<CollectiveResult>& results);
/// One line per packet-mode result of 64 MB or more that is over 5 % from its analytical
/// time: what the run says when the two modes disagree.
std::vector<std::string> CollectiveDisagreements(const std::vector<CollectiveResult>& results);

} // namespace fabemu

#endif
