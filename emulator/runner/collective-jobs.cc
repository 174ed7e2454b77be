#include "emulator/runner/collective-jobs.h"

#include "ns3/collective-cost-model.h"
#include "ns3/simulator.h"

#include <fmt/format.h>

#include <cmath>
#include <fstream>
#include <sstream>

using namespace ns3;

namespace fabemu
{

struct CollectiveJobs::Job
{
    const WorkloadSpec* spec{nullptr};
    CollectiveOp op{};
    CollectiveAlgorithm algorithm{};
    bool autoPicked{false};
    Ptr<RdmaCollectiveTransport> transport;
    std::unique_ptr<CollectiveSchedule> schedule; ///< packet mode
    Ptr<Collective> running;
    std::vector<CollectiveResult> results; ///< one per iteration
    Time analytical;
};

namespace
{

Time
AnalyticalTime(CollectiveOp op, CollectiveAlgorithm a, const WorkloadSpec& w,
               const RdmaCollectiveTransport& t)
{
    return CollectiveAnalyticalTime(op, a, static_cast<uint32_t>(w.hosts.size()), w.bytes,
                                    [&t](uint32_t x, uint32_t y) { return t.GetPathCost(x, y); });
}

/// auto: the algorithm of least alpha-beta time on this topology (ties to ring, as NCCL
/// favours it); all-to-all has only direct.
CollectiveAlgorithm
PickAlgorithm(CollectiveOp op, const WorkloadSpec& w, const RdmaCollectiveTransport& t)
{
    if (op == CollectiveOp::AllToAll)
    {
        return CollectiveAlgorithm::Direct;
    }
    const size_t n = w.hosts.size();
    if ((n & (n - 1)) != 0 || AnalyticalTime(op, CollectiveAlgorithm::Ring, w, t) <=
                                  AnalyticalTime(op, CollectiveAlgorithm::HalvingDoubling, w, t))
    {
        return CollectiveAlgorithm::Ring;
    }
    return CollectiveAlgorithm::HalvingDoubling;
}

void
Finish(CollectiveResult& r, double seconds)
{
    r.timeS = seconds;
    r.algBwGbs = static_cast<double>(r.bytes) / seconds / 1e9;
    ns3::CollectiveOp op{};
    ParseCollectiveOp(r.op, op);
    r.busBwGbs = r.algBwGbs * CollectiveBusBwFactor(op, static_cast<uint32_t>(r.ranks.size()));
}

} // namespace

CollectiveJobs::CollectiveJobs(const Scenario& s, RdmaFabric& fabric)
{
    for (const auto& w : s.workloads)
    {
        if (w.type != "collective")
        {
            continue;
        }
        Job job;
        job.spec = &w;
        ParseCollectiveOp(w.op, job.op);
        job.transport = CreateObject<RdmaCollectiveTransport>();
        std::vector<std::string> names;
        for (uint32_t h : w.hosts)
        {
            names.push_back("h" + std::to_string(h));
        }
        job.transport->Setup(&fabric, w.hosts, names);
        job.autoPicked = w.algorithm == "auto";
        if (job.autoPicked)
        {
            job.algorithm = PickAlgorithm(job.op, w, *job.transport);
        }
        else
        {
            ParseCollectiveAlgorithm(w.algorithm, job.algorithm);
        }
        job.analytical = AnalyticalTime(job.op, job.algorithm, w, *job.transport);
        for (uint32_t i = 0; i < w.iterations; ++i)
        {
            CollectiveResult r;
            r.job = w.job;
            r.iteration = i;
            r.op = w.op;
            r.algorithm = CollectiveAlgorithmName(job.algorithm);
            r.autoPicked = job.autoPicked;
            r.ranks = names;
            r.bytes = w.bytes;
            r.analyticalS = job.analytical.GetSeconds();
            job.results.push_back(std::move(r));
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

void
CollectiveJobs::Start(Callback<void> allDone)
{
    m_allDone = allDone;
    m_open = m_jobs.size();
    for (size_t j = 0; j < m_jobs.size(); ++j)
    {
        auto& job = m_jobs[j];
        job.schedule = std::make_unique<CollectiveSchedule>(CollectiveSchedule::Build(
            job.op, job.algorithm, static_cast<uint32_t>(job.spec->hosts.size()), job.spec->bytes));
        Simulator::Schedule(PicoSeconds(job.spec->startPs), &CollectiveJobs::Launch, this, j);
    }
}

void
CollectiveJobs::Launch(size_t j)
{
    auto& job = m_jobs[j];
    if (job.running)
    {
        job.running->Dispose();
    }
    job.running = CreateObject<Collective>();
    job.running->SetTransport(job.transport);
    job.running->SetSchedule(*job.schedule);
    job.running->SetDoneCallback(MakeCallback(&CollectiveJobs::Ended, this).Bind(j));
    job.running->Start();
}

void
CollectiveJobs::Ended(size_t j, Ptr<Collective> c)
{
    auto& job = m_jobs[j];
    size_t i = 0;
    while (job.results[i].state != "pending")
    {
        ++i;
    }
    CollectiveResult& r = job.results[i];
    r.startS = c->GetStartTime().GetSeconds();
    for (uint64_t b : c->GetBytesReceived())
    {
        r.delivered += b;
    }
    if (c->GetState() == Collective::State::Completed)
    {
        r.state = "completed";
        Finish(r, c->GetDuration().GetSeconds());
    }
    else
    {
        r.state = "failed";
        r.reason = c->GetFailure();
    }
    if (r.state == "completed" && i + 1 < job.results.size())
    {
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
        for (auto& r : job.results)
        {
            r.state = "completed";
            r.startS = at;
            Finish(r, job.analytical.GetSeconds());
            at += r.timeS;
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

nlohmann::json
CollectivesJson(const std::vector<CollectiveResult>& results)
{
    nlohmann::json list = nlohmann::json::array();
    for (const auto& r : results)
    {
        nlohmann::json e{{"job", r.job},         {"iteration", r.iteration},
                         {"op", r.op},           {"algorithm", r.algorithm},
                         {"auto", r.autoPicked}, {"ranks", r.ranks},
                         {"bytes", r.bytes},     {"state", r.state},
                         {"start_s", r.startS},  {"analytical_time_s", r.analyticalS}};
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
    for (const auto& r : results)
    {
        const bool done = r.state == "completed";
        t << fmt::format(" {:>11} {:>5} {:>15} {:>17} {:>6} {:>13} {:>11} {:>12} {:>12}\n", r.job,
                         r.iteration, r.op, r.algorithm + (r.autoPicked ? "*" : ""), r.ranks.size(),
                         r.bytes, done ? fmt::format("{:.1f}", r.timeS * 1e6) : r.state,
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
