#include "emulator/runner/collective-jobs.h"

#include "emulator/runner/fault-schedule.h"

#include "ns3/abort.h"
#include "ns3/cluster-collective-transport.h"
#include "ns3/collective-cost-model.h"
#include "ns3/mixed-collective-transport.h"
#include "ns3/nvlink-collective-transport.h"
#include "ns3/rdma-collective-transport.h"
#include "ns3/simulator.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <set>
#include <sstream>

using namespace ns3;

namespace fabemu
{

struct CollectiveJobs::Job
{
    const WorkloadSpec* spec{nullptr};
    CollectiveOp op{};
    Ptr<CollectiveTransport> transport;
    std::vector<CollectiveResult> results;        ///< each size's iterations, in order
    std::vector<CollectiveAlgorithm> algorithms;  ///< by result
    size_t next{0};                               ///< the result running or to run
    CollectiveLayout layout;                      ///< which ranks share a server
    std::unique_ptr<CollectiveSchedule> schedule; ///< packet mode: the last one built
    Ptr<Collective> running;

    /// A training step's job: compute time, and each iteration's buckets.
    bool Training() const { return spec->computePs > 0 || spec->buckets > 1; }
    /// When result \p i's bucket is ready: its step's start and (k+1)/buckets of compute.
    Time Ready(size_t i, Time stepStart) const
    {
        const uint32_t k = results[i].bucket;
        return stepStart + PicoSeconds(spec->computePs * (k + 1) / spec->buckets);
    }
    /// When iteration \p it's step ended (its buckets all completed, at or after
    /// \p stepStart + compute); zero if it has not.
    Time StepEnd(uint32_t it, Time stepStart) const
    {
        Time end = stepStart + PicoSeconds(spec->computePs);
        for (uint32_t k = 0; k < spec->buckets; ++k)
        {
            const auto& r = results[size_t{it} * spec->buckets + k];
            if (r.state != "completed")
            {
                return Time(0);
            }
            end = std::max(end, Seconds(r.startS + r.timeS));
        }
        return end;
    }
    Time stepStart; ///< packet mode: when the running iteration's step began
};

namespace
{

Time
AnalyticalTime(CollectiveOp op, CollectiveAlgorithm a, const WorkloadSpec& w, uint64_t bytes,
               const CollectiveTransport& t, const CollectiveLayout& layout)
{
    return CollectiveAnalyticalTime(
        op, a, static_cast<uint32_t>(w.hosts.size()), bytes,
        [&t](uint32_t x, uint32_t y) { return t.GetPathCost(x, y); }, layout,
        [&t](uint32_t r) { return t.GetInSwitchCost(r); });
}

/// "" when \p t can carry every transfer \p a makes of \p op; else the first pair it cannot
/// (a rail-only cluster joins GPUs of different servers on one rail only), or why no switch
/// sums among the ranks (nvls).
std::string
Unreachable(CollectiveOp op, CollectiveAlgorithm a, const WorkloadSpec& w, uint64_t bytes,
            const CollectiveTransport& t, const CollectiveLayout& layout)
{
    if (a == CollectiveAlgorithm::Nvls)
    {
        std::vector<uint32_t> ranks(w.hosts.size());
        for (uint32_t r = 0; r < ranks.size(); ++r)
        {
            ranks[r] = r;
        }
        const std::string why = t.CheckInSwitch(ranks);
        return why.empty() ? "" : "nvls: " + why;
    }
    const auto s =
        CollectiveSchedule::Build(op, a, static_cast<uint32_t>(w.hosts.size()), bytes, layout);
    std::set<std::pair<uint32_t, uint32_t>> pairs;
    for (const auto& x : s.transfers)
    {
        if (pairs.insert({x.from, x.to}).second && !t.Reaches(x.from, x.to))
        {
            return fmt::format("{} sends from {} to {}, and no path joins them (on rails "
                               "without spines only a rail does)",
                               CollectiveAlgorithmName(a), t.GetRankName(x.from),
                               t.GetRankName(x.to));
        }
    }
    return "";
}

/// An algorithm as one size of a job would run it: its alpha-beta time, or why it cannot.
struct Choice
{
    CollectiveAlgorithm algorithm;
    Time analytical;         ///< zero where unreachable
    std::string unreachable; ///< "" where every transfer has a path
};

Choice
Weigh(CollectiveOp op, CollectiveAlgorithm a, const WorkloadSpec& w, uint64_t bytes,
      const CollectiveTransport& t, const CollectiveLayout& layout)
{
    Choice c{a, Time(0), Unreachable(op, a, w, bytes, t, layout)};
    if (c.unreachable.empty())
    {
        c.analytical = AnalyticalTime(op, a, w, bytes, t, layout);
    }
    return c;
}

/// auto: the algorithm of least alpha-beta time on this topology (ties to ring, as NCCL
/// favours it, then to the earliest of halving-doubling, tree, hierarchical and nvls) among those
/// whose transfers all have a path (ring, and why it cannot run, where none has); the
/// operations of one algorithm take it.
Choice
PickAlgorithm(CollectiveOp op, const WorkloadSpec& w, uint64_t bytes, const CollectiveTransport& t,
              const CollectiveLayout& layout)
{
    if (op != CollectiveOp::AllReduce && op != CollectiveOp::ReduceScatter &&
        op != CollectiveOp::AllGather)
    {
        return Weigh(op, CollectiveDefaultAlgorithm(op), w, bytes, t, layout);
    }
    const size_t n = w.hosts.size();
    std::vector<CollectiveAlgorithm> others;
    if ((n & (n - 1)) == 0)
    {
        others.push_back(CollectiveAlgorithm::HalvingDoubling);
    }
    if (op == CollectiveOp::AllReduce)
    {
        others.push_back(CollectiveAlgorithm::Tree);
    }
    if (op == CollectiveOp::AllReduce && layout.Uniform())
    {
        others.push_back(CollectiveAlgorithm::Hierarchical);
    }
    others.push_back(CollectiveAlgorithm::Nvls); // where the switches sum (Unreachable says)
    Choice best = Weigh(op, CollectiveAlgorithm::Ring, w, bytes, t, layout);
    for (CollectiveAlgorithm a : others)
    {
        Choice c = Weigh(op, a, w, bytes, t, layout);
        if (c.unreachable.empty() && (!best.unreachable.empty() || c.analytical < best.analytical))
        {
            best = std::move(c);
        }
    }
    return best;
}

/// What joins \p gpus of server \p host: its NVLink or its PCIe tree, or both (NVLink
/// where it joins a pair, PCIe for the rest: dgx-1).
Ptr<CollectiveTransport>
ServerTransport(const WorkloadSpec& w, const std::vector<std::unique_ptr<NodeFabric>>& nodes,
                uint32_t host, const std::vector<std::string>& gpus,
                const std::vector<std::string>& names)
{
    Ptr<CollectiveTransport> nvlink;
    Ptr<CollectiveTransport> other;
    for (const auto& node : nodes)
    {
        Ptr<CollectiveTransport> t = node->CollectiveTransport(host, gpus, names);
        if (DynamicCast<NvlinkCollectiveTransport>(t))
        {
            nvlink = t;
        }
        else if (t)
        {
            other = t;
        }
    }
    NS_ABORT_MSG_IF(!nvlink && !other,
                    "collective " << w.job << ": nothing joins the GPUs of h" << host);
    if (nvlink && other)
    {
        Ptr<MixedCollectiveTransport> mixed = CreateObject<MixedCollectiveTransport>();
        mixed->Setup(nvlink, other);
        mixed->SetRankNames(names);
        return mixed;
    }
    return nvlink ? nvlink : other;
}

/// GPU ranks on several servers: each server's ranks joined by that server's node
/// fabric (NVLink), the pairs across servers by \p fabric, each GPU on its NIC's rail
/// host with its WRITEs staged through the NIC's PCIe (GPUDirect RDMA).
Ptr<ClusterCollectiveTransport>
ClusterTransport(const Scenario& s, const WorkloadSpec& w, const std::vector<std::string>& names,
                 RdmaFabric* fabric, const std::vector<std::unique_ptr<NodeFabric>>& nodes)
{
    NS_ABORT_MSG_IF(!fabric, "collective " << w.job << ": ranks on several servers, no network");
    const uint32_t rails = s.topology.RailsPerServer();
    std::vector<uint32_t> hosts;
    std::vector<RdmaStagedWrite::End> ends;
    for (size_t r = 0; r < w.hosts.size(); ++r)
    {
        const uint32_t gpu = DeviceNumber(w.rankDevices[r]);
        const uint32_t rail = rails > 1 ? s.topology.node.ServingNic(gpu) % rails : 0;
        hosts.push_back(w.hosts[r] * rails + rail);
        Ptr<RdmaHostInterface> nic;
        for (const auto& node : nodes)
        {
            nic = nic ? nic : node->NicInterface(hosts.back());
        }
        NS_ABORT_MSG_IF(!nic, "collective " << w.job << ": no NIC serves " << names[r]);
        ends.push_back({nic, w.rankDevices[r]});
    }
    Ptr<RdmaCollectiveTransport> network = CreateObject<RdmaCollectiveTransport>();
    network->Setup(fabric, hosts, names);
    network->SetRankMemory(ends);
    Ptr<ClusterCollectiveTransport> cluster = CreateObject<ClusterCollectiveTransport>();
    cluster->SetNetwork(network);
    for (const auto& server : w.RanksByServer())
    {
        std::vector<std::string> gpus;
        std::vector<std::string> serverNames;
        for (uint32_t r : server)
        {
            gpus.push_back(w.rankDevices[r]);
            serverNames.push_back(names[r]);
        }
        cluster->AddServer(ServerTransport(w, nodes, w.hosts[server[0]], gpus, serverNames),
                           server);
    }
    return cluster;
}

void
Finish(CollectiveResult& r, CollectiveOp op, double seconds)
{
    r.timeS = seconds;
    r.algBwGbs = static_cast<double>(r.bytes) / seconds / 1e9;
    r.busBwGbs = r.algBwGbs * CollectiveBusBwFactor(op, static_cast<uint32_t>(r.ranks.size()));
}

} // namespace

CollectiveJobs::CollectiveJobs(const Scenario& s, RdmaFabric* fabric,
                               const std::vector<std::unique_ptr<NodeFabric>>& nodes)
{
    m_faults = s.faults; // stragglers slow the sends of the collectives they see start
    for (const auto& w : s.workloads)
    {
        if (w.type != "collective")
        {
            continue;
        }
        Job job;
        job.spec = &w;
        ParseCollectiveOp(w.op, job.op);
        std::vector<std::string> names;
        for (size_t r = 0; r < w.hosts.size(); ++r)
        {
            names.push_back(w.RankName(r));
        }
        if (w.rankDevices.empty())
        {
            NS_ABORT_MSG_IF(!fabric, "collective ranks are hosts, but there is no network");
            Ptr<RdmaCollectiveTransport> t = CreateObject<RdmaCollectiveTransport>();
            t->Setup(fabric, w.hosts, names);
            job.transport = t;
        }
        if (w.RanksByServer().size() > 1)
        {
            Ptr<ClusterCollectiveTransport> cluster = ClusterTransport(s, w, names, fabric, nodes);
            job.layout = cluster->GetLayout();
            job.transport = cluster;
        }
        if (!job.transport)
        {
            job.transport = ServerTransport(w, nodes, w.hosts[0], w.rankDevices, names);
        }
        job.layout.chunks = w.chunks;
        const Ptr<MixedCollectiveTransport> mixed =
            DynamicCast<MixedCollectiveTransport>(job.transport);
        const Ptr<NvlinkCollectiveTransport> nvlink =
            DynamicCast<NvlinkCollectiveTransport>(job.transport);
        if (mixed || (nvlink && !nvlink->IsSwitched()))
        {
            // On a mesh of NVLinks (dgx-1) each pair has links of its own: rings follow
            // them, as NCCL's do.
            const uint32_t n = job.transport->GetNRanks();
            job.layout.direct.assign(n, std::vector<bool>(n, false));
            for (uint32_t a = 0; a < n; ++a)
            {
                for (uint32_t b = 0; b < n; ++b)
                {
                    job.layout.direct[a][b] =
                        a != b && (mixed ? mixed->Prefers(a, b) : nvlink->Reaches(a, b));
                }
            }
        }
        NS_ABORT_MSG_IF(!job.transport, "no fabric joins the ranks of collective " << w.job);
        // auto picks per size, as NCCL's tuner does: latency-bound sizes may take another
        // algorithm than bandwidth-bound ones.
        for (uint64_t bytes :
             w.sizes.empty() ? std::vector<uint64_t>{w.bytes / w.buckets} : w.sizes)
        {
            CollectiveAlgorithm asked{};
            ParseCollectiveAlgorithm(w.algorithm, asked);
            const Choice choice = w.algorithm == "auto"
                                      ? PickAlgorithm(job.op, w, bytes, *job.transport, job.layout)
                                      : Weigh(job.op, asked, w, bytes, *job.transport, job.layout);
            const CollectiveAlgorithm algorithm = choice.algorithm;
            const std::string& unreachable = choice.unreachable;
            const Time analytical = choice.analytical;
            for (uint32_t n = 0; n < w.iterations * w.buckets; ++n)
            {
                CollectiveResult r;
                r.job = w.job;
                r.iteration = n / w.buckets;
                r.bucket = n % w.buckets;
                r.op = w.op;
                r.algorithm = CollectiveAlgorithmName(algorithm);
                r.autoPicked = w.algorithm == "auto";
                r.ranks = names;
                r.bytes = bytes;
                r.analyticalS = analytical.GetSeconds();
                if (!unreachable.empty())
                {
                    r.state = "failed"; // known before it starts: it never runs
                    r.reason = unreachable;
                }
                job.results.push_back(std::move(r));
                job.algorithms.push_back(algorithm);
            }
        }
        m_jobs.push_back(std::move(job));
    }
}

CollectiveJobs::~CollectiveJobs()
{
    for (auto& job : m_jobs)
    {
        if (job.running)
        {
            job.running->Dispose();
        }
        job.transport->Dispose();
    }
}

size_t
CollectiveJobs::Count() const
{
    return m_jobs.size();
}

double
CollectiveJobs::Progress() const
{
    double done = 0;
    for (const auto& job : m_jobs)
    {
        const size_t n = job.results.size();
        const bool over =
            job.next == n || (job.next > 0 && job.results[job.next - 1].state != "completed");
        if (over)
        {
            done += 1;
        }
        else if (n > 0)
        {
            const bool running =
                job.running && job.running->GetState() == Collective::State::Running;
            done += (job.next + (running ? job.running->GetProgress() : 0.0)) / n;
        }
    }
    return m_jobs.empty() ? 0.0 : done / m_jobs.size();
}

void
CollectiveJobs::Start(Callback<void> allDone)
{
    m_allDone = allDone;
    m_open = m_jobs.size();
    for (size_t j = 0; j < m_jobs.size(); ++j)
    {
        m_jobs[j].stepStart = PicoSeconds(m_jobs[j].spec->startPs);
        Simulator::Schedule(PicoSeconds(m_jobs[j].spec->startPs), &CollectiveJobs::Launch, this, j);
    }
}

void
CollectiveJobs::Launch(size_t j)
{
    auto& job = m_jobs[j];
    while (job.next < job.results.size() && job.results[job.next].state == "failed")
    {
        job.results[job.next++].startS = Simulator::Now().GetSeconds(); // it cannot run
    }
    if (job.next == job.results.size())
    {
        if (--m_open == 0 && !m_allDone.IsNull())
        {
            m_allDone();
        }
        return;
    }
    if (job.Training() && job.Ready(job.next, job.stepStart) > Simulator::Now())
    {
        // The bucket's gradients are not computed yet.
        Simulator::Schedule(job.Ready(job.next, job.stepStart) - Simulator::Now(),
                            &CollectiveJobs::Launch, this, j);
        return;
    }
    const uint64_t bytes = job.results[job.next].bytes;
    const CollectiveAlgorithm algorithm = job.algorithms[job.next];
    if (!job.schedule || job.schedule->bytes != bytes || job.schedule->algorithm != algorithm)
    {
        job.schedule = std::make_unique<CollectiveSchedule>(CollectiveSchedule::Build(
            job.op, algorithm, static_cast<uint32_t>(job.spec->hosts.size()), bytes, job.layout));
    }
    if (job.running)
    {
        job.running->Dispose();
    }
    job.running = CreateObject<Collective>();
    job.running->SetTransport(job.transport);
    job.running->SetSchedule(*job.schedule);
    std::vector<Time> delays(job.spec->hosts.size());
    for (const auto& [rank, ps] : job.spec->rankDelayPs)
    {
        delays[rank] = PicoSeconds(ps);
    }
    job.running->SetRankDelays(delays);
    std::vector<Time> late(job.spec->hosts.size());
    for (size_t r = 0; r < late.size(); ++r)
    {
        late[r] = FaultSchedule::FaultDelay(m_faults, job.spec->hosts[r], Simulator::Now());
    }
    job.running->SetSendDelays(late);
    job.running->SetDoneCallback(MakeCallback(&CollectiveJobs::Ended, this).Bind(j));
    job.running->Start();
}

void
CollectiveJobs::Ended(size_t j, Ptr<Collective> c)
{
    auto& job = m_jobs[j];
    CollectiveResult& r = job.results[job.next++];
    for (const auto& t : c->GetTransfers())
    {
        if (t.sent)
        {
            m_steps.push_back({j, r.iteration, t});
        }
    }
    r.startS = c->GetStartTime().GetSeconds();
    for (uint64_t b : c->GetBytesReceived())
    {
        r.delivered += b;
    }
    if (c->GetState() == Collective::State::Completed)
    {
        r.state = "completed";
        Finish(r, job.op, c->GetDuration().GetSeconds());
    }
    else
    {
        r.state = "failed";
        r.reason = c->GetFailure();
    }
    if (r.state == "completed" && job.next < job.results.size())
    {
        if (job.Training() && r.bucket + 1 == job.spec->buckets)
        {
            job.stepStart = job.StepEnd(r.iteration, job.stepStart); // the next step's start
        }
        Simulator::ScheduleNow(&CollectiveJobs::Launch, this, j); // the next iteration
        return;
    }
    if (--m_open == 0 && !m_allDone.IsNull())
    {
        m_allDone();
    }
}

void
CollectiveJobs::Estimate()
{
    for (auto& job : m_jobs)
    {
        double at = PicoSeconds(job.spec->startPs).GetSeconds();
        Time stepStart = PicoSeconds(job.spec->startPs);
        for (size_t i = 0; i < job.results.size(); ++i)
        {
            auto& r = job.results[i];
            if (r.state == "failed")
            {
                continue; // a pair without a path: no time to give
            }
            if (job.Training())
            {
                at = std::max(at, job.Ready(i, stepStart).GetSeconds());
            }
            r.state = "completed";
            r.startS = at;
            Finish(r, job.op, r.analyticalS);
            at += r.timeS;
            if (job.Training() && r.bucket + 1 == job.spec->buckets)
            {
                stepStart = job.StepEnd(r.iteration, stepStart);
                at = stepStart.GetSeconds();
            }
        }
    }
}

std::vector<CollectiveResult>
CollectiveJobs::Results() const
{
    std::vector<CollectiveResult> out;
    for (const auto& job : m_jobs)
    {
        out.insert(out.end(), job.results.begin(), job.results.end());
    }
    return out;
}

std::vector<TrainingStep>
CollectiveJobs::TrainingSteps() const
{
    std::vector<TrainingStep> out;
    for (const auto& job : m_jobs)
    {
        if (!job.Training())
        {
            continue;
        }
        Time start = PicoSeconds(job.spec->startPs);
        bool began = true; // every step before this one completed
        for (uint32_t it = 0; it < job.spec->iterations; ++it)
        {
            TrainingStep st;
            st.job = job.spec->job;
            st.iteration = it;
            st.computeS = PicoSeconds(job.spec->computePs).GetSeconds();
            bool failed = false;
            for (uint32_t k = 0; k < job.spec->buckets; ++k)
            {
                failed =
                    failed || job.results[size_t{it} * job.spec->buckets + k].state == "failed";
            }
            const Time end = began && !failed ? job.StepEnd(it, start) : Time(0);
            st.state = failed ? "failed" : end.IsZero() ? "pending" : "completed";
            if (st.state == "completed")
            {
                st.startS = start.GetSeconds();
                st.stepS = (end - start).GetSeconds();
                st.exposedS = st.stepS - st.computeS;
                start = end;
            }
            began = began && st.state == "completed"; // the steps after it never began
            out.push_back(st);
        }
    }
    return out;
}

void
CollectiveJobs::WriteSteps(const std::filesystem::path& dir) const
{
    std::ofstream csv(dir / "collective-steps.csv");
    csv << "job,iteration,from,to,step,bytes,posted_s,arrived_s\n";
    nlohmann::json events = nlohmann::json::array();
    for (size_t j = 0; j < m_jobs.size(); ++j)
    {
        const auto& job = m_jobs[j];
        events.push_back(
            {{"name", "process_name"},
             {"ph", "M"},
             {"pid", j},
             {"args", {{"name", fmt::format("{} ({})", job.spec->job, job.spec->op)}}}});
        for (uint32_t r = 0; r < job.spec->hosts.size(); ++r)
        {
            events.push_back({{"name", "thread_name"},
                              {"ph", "M"},
                              {"pid", j},
                              {"tid", r},
                              {"args", {{"name", job.transport->GetRankName(r)}}}});
        }
    }
    for (const auto& s : m_steps)
    {
        const auto& job = m_jobs[s.job];
        const bool arrived = !s.t.arrived.IsZero();
        csv << fmt::format("{},{},{},{},{},{},{:.12g},{}\n", job.spec->job, s.iteration,
                           job.transport->GetRankName(s.t.from), job.transport->GetRankName(s.t.to),
                           s.t.step, s.t.bytes, s.t.posted.GetSeconds(),
                           arrived ? fmt::format("{:.12g}", s.t.arrived.GetSeconds()) : "");
        if (!arrived)
        {
            continue;
        }
        // Chrome trace times are microseconds.
        events.push_back(
            {{"name", fmt::format("step {} to {}", s.t.step, job.transport->GetRankName(s.t.to))},
             {"cat", job.spec->op},
             {"ph", "X"},
             {"pid", s.job},
             {"tid", s.t.from},
             {"ts", s.t.posted.GetSeconds() * 1e6},
             {"dur", (s.t.arrived - s.t.posted).GetSeconds() * 1e6},
             {"args", {{"bytes", s.t.bytes}, {"iteration", s.iteration}}}});
    }
    std::ofstream(dir / "trace.json")
        << nlohmann::json{{"traceEvents", events}, {"displayTimeUnit", "ns"}}.dump() << "\n";
}

nlohmann::json
TrainingJson(const std::vector<TrainingStep>& steps)
{
    nlohmann::json list = nlohmann::json::array();
    for (const auto& st : steps)
    {
        const bool done = st.state == "completed";
        list.push_back({{"job", st.job},
                        {"iteration", st.iteration},
                        {"state", st.state},
                        {"compute_s", st.computeS},
                        {"start_s", done ? nlohmann::json(st.startS) : nlohmann::json()},
                        {"step_s", done ? nlohmann::json(st.stepS) : nlohmann::json()},
                        {"exposed_s", done ? nlohmann::json(st.exposedS) : nlohmann::json()}});
    }
    return list;
}

void
WriteTrainingCsv(const std::filesystem::path& file, const std::vector<TrainingStep>& steps)
{
    std::ofstream f(file);
    f << "job,iteration,state,start_s,compute_s,step_s,exposed_s\n";
    for (const auto& st : steps)
    {
        const bool done = st.state == "completed";
        f << fmt::format("{},{},{},{},{:.9g},{},{}\n", st.job, st.iteration, st.state,
                         done ? fmt::format("{:.9g}", st.startS) : "", st.computeS,
                         done ? fmt::format("{:.9g}", st.stepS) : "",
                         done ? fmt::format("{:.9g}", st.exposedS) : "");
    }
}

std::string
TrainingTable(const nlohmann::json& training)
{
    std::ostringstream t;
    std::vector<std::string> jobs;
    for (const auto& st : training)
    {
        if (std::find(jobs.begin(), jobs.end(), st["job"]) == jobs.end())
        {
            jobs.push_back(st["job"]);
        }
    }
    for (const auto& job : jobs)
    {
        size_t done = 0;
        size_t all = 0;
        double step = 0;
        double exposed = 0;
        double compute = 0;
        for (const auto& st : training)
        {
            if (st["job"] != job)
            {
                continue;
            }
            ++all;
            compute = st["compute_s"].get<double>();
            if (st["state"] == "completed")
            {
                ++done;
                step += st["step_s"].get<double>();
                exposed += st["exposed_s"].get<double>();
            }
        }
        if (done == 0)
        {
            t << fmt::format("training {}: 0 of {} steps completed\n", job, all);
            continue;
        }
        step /= static_cast<double>(done);
        exposed /= static_cast<double>(done);
        t << fmt::format("training {}: {} of {} steps, {:.3f} ms each: compute {:.3f} ms, "
                         "communication exposed {:.3f} ms ({:.0f} % of the step)\n",
                         job, done, all, step * 1e3, compute * 1e3, exposed * 1e3,
                         exposed / step * 100);
    }
    return t.str();
}

nlohmann::json
CollectivesJson(const std::vector<CollectiveResult>& results)
{
    nlohmann::json list = nlohmann::json::array();
    for (const auto& r : results)
    {
        nlohmann::json e{{"job", r.job},
                         {"iteration", r.iteration},
                         {"bucket", r.bucket},
                         {"op", r.op},
                         {"algorithm", r.algorithm},
                         {"auto", r.autoPicked},
                         {"ranks", r.ranks},
                         {"bytes", r.bytes},
                         {"state", r.state},
                         {"start_s", r.startS},
                         {"analytical_time_s", r.analyticalS}};
        if (r.state == "completed")
        {
            e["time_s"] = r.timeS;
            e["algbw_gbs"] = r.algBwGbs;
            e["busbw_gbs"] = r.busBwGbs;
        }
        else
        {
            // A collective that did not complete has no time: null, never a number.
            e["time_s"] = nullptr;
            e["algbw_gbs"] = nullptr;
            e["busbw_gbs"] = nullptr;
        }
        if (!r.reason.empty())
        {
            e["reason"] = r.reason;
        }
        list.push_back(std::move(e));
    }
    return list;
}

void
WriteCollectivesCsv(const std::filesystem::path& file, const std::vector<CollectiveResult>& results)
{
    std::ofstream f(file);
    f << "job,iteration,op,algorithm,ranks,bytes,state,start_s,time_s,algbw_gbs,busbw_gbs,"
         "analytical_time_s\n";
    for (const auto& r : results)
    {
        const bool done = r.state == "completed";
        f << fmt::format("{},{},{},{},{},{},{},{:.9g},{},{},{},{:.9g}\n", r.job, r.iteration, r.op,
                         r.algorithm, r.ranks.size(), r.bytes, r.state, r.startS,
                         done ? fmt::format("{:.9g}", r.timeS) : "",
                         done ? fmt::format("{:.6g}", r.algBwGbs) : "",
                         done ? fmt::format("{:.6g}", r.busBwGbs) : "", r.analyticalS);
    }
}

std::string
CollectivesTable(const std::vector<CollectiveResult>& results)
{
    std::ostringstream t;
    t << fmt::format("#{:>11} {:>5} {:>15} {:>17} {:>6} {:>13} {:>11} {:>12} {:>12}\n", "job",
                     "iter", "op", "algorithm", "ranks", "size(B)", "time(us)", "algbw(GB/s)",
                     "busbw(GB/s)");
    std::set<std::string> bucketed; // training jobs: their rows say iteration.bucket
    for (const auto& r : results)
    {
        if (r.bucket > 0)
        {
            bucketed.insert(r.job);
        }
    }
    for (const auto& r : results)
    {
        const bool done = r.state == "completed";
        t << fmt::format(" {:>11} {:>5} {:>15} {:>17} {:>6} {:>13} {:>11} {:>12} {:>12}\n", r.job,
                         bucketed.count(r.job) ? fmt::format("{}.{}", r.iteration, r.bucket)
                                               : std::to_string(r.iteration),
                         r.op, r.algorithm + (r.autoPicked ? "*" : ""), r.ranks.size(), r.bytes,
                         done ? fmt::format("{:.1f}", r.timeS * 1e6) : r.state,
                         done ? fmt::format("{:.2f}", r.algBwGbs) : "-",
                         done ? fmt::format("{:.2f}", r.busBwGbs) : "-");
    }
    return t.str();
}

std::vector<std::string>
CollectiveDisagreements(const std::vector<CollectiveResult>& results)
{
    std::vector<std::string> lines;
    for (const auto& r : results)
    {
        if (r.state != "completed" || r.bytes < (64ull << 20) || r.analyticalS <= 0)
        {
            continue;
        }
        const double apart = std::abs(r.timeS - r.analyticalS) / r.analyticalS;
        if (apart > 0.05)
        {
            lines.push_back(fmt::format(
                "collective {} iteration {}: packet mode took {:.1f} us, the alpha-beta model "
                "{:.1f} us ({:.0f} % apart: congestion, or paths the model does not see)",
                r.job, r.iteration, r.timeS * 1e6, r.analyticalS * 1e6, apart * 100));
        }
    }
    return lines;
}

} // namespace fabemu
