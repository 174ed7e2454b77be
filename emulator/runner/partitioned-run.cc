#include "emulator/runner/partitioned-run.h"

#include "emulator/runner/scenario-fabric.h"

#include "ns3/global-value.h"
#include "ns3/simulator.h"
#include "ns3/string.h"
#include "ns3/topology-partition.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>
#include <stdexcept>

namespace fabemu
{

namespace fs = std::filesystem;
using nlohmann::json;
using namespace ns3;

uint32_t
RanksFromLauncher()
{
    const char* v = std::getenv("OMPI_COMM_WORLD_SIZE");
    const long n = v ? std::strtol(v, nullptr, 10) : 1;
    return n > 0 ? static_cast<uint32_t>(n) : 1;
}

uint32_t
RankFromLauncher()
{
    const char* v = std::getenv("OMPI_COMM_WORLD_RANK");
    return v ? static_cast<uint32_t>(std::strtoul(v, nullptr, 10)) : 0;
}

bool
HavePartitionedRuns()
{
#ifdef FABEMU_HAVE_MPI
    return true;
#else
    return false;
#endif
}

std::string
PartitionProblem(const Scenario& s)
{
    if (s.fabric.type != "roce" && s.fabric.type != "infiniband")
    {
        return fmt::format("fabric.type is {}: partitioned runs take RoCEv2 (roce) and "
                           "InfiniBand (infiniband) only so far",
                           s.fabric.type);
    }
    if (s.HasVms())
    {
        return "endpoints: real VMs run on one machine, in real time; a partitioned run only "
               "simulates";
    }
    const auto& node = s.topology.node;
    if (!HasNetwork(s) || node.hasPcie || node.hasNvlink || node.hasCxl)
    {
        return "topology.node: servers' insides are not split among ranks";
    }
    if (s.fidelity != "packet")
    {
        return "fidelity is " + s.fidelity + ": only packet runs are split among ranks";
    }
    for (const auto& w : s.workloads)
    {
        if (w.type == "collective")
        {
            return "workload 'collective': collectives are not split among ranks yet";
        }
    }
    if (!s.faults.empty())
    {
        return "faults: faults are not split among ranks yet";
    }
    return "";
}

PartitionPlan
PlanPartition(const Scenario& s, uint32_t ranks)
{
    const TopologySpec spec = BuildTopology(s);
    std::map<uint32_t, uint32_t> pins;
    std::vector<std::string> switches;
    for (const auto& n : spec.Nodes())
    {
        if (n.isSwitch)
        {
            switches.push_back(n.name);
        }
    }
    for (const auto& p : s.topology.partition)
    {
        const auto& nodes = spec.Nodes();
        auto it = std::find_if(nodes.begin(), nodes.end(),
                               [&](const auto& n) { return n.isSwitch && n.name == p.name; });
        if (it == nodes.end())
        {
            const std::string close = Closest(p.name, switches);
            throw ScenarioError(s.file, p.mark,
                                fmt::format("topology.partition: no switch '{}' in this "
                                            "topology{} (switches: {})",
                                            p.name,
                                            close.empty() ? "" : "; did you mean '" + close + "'?",
                                            fmt::join(switches, ", ")));
        }
        pins[static_cast<uint32_t>(it - nodes.begin())] = p.rank;
    }
    PartitionPlan plan;
    try
    {
        plan.rankOfNode = PartitionByTier(spec, ranks, pins);
    }
    catch (const std::invalid_argument& e)
    {
        throw ScenarioError(
            s.file,
            s.topology.partition.empty() ? s.MarkOf("topology.builder")
                                         : s.topology.partition.front().mark,
            fmt::format("cannot split the topology among {} ranks: {}", ranks, e.what()));
    }
    const PartitionCut cut = CutOf(spec, plan.rankOfNode);
    plan.crossingLinks = cut.links.size();
    plan.lookahead = cut.lookahead;
    if (!cut.links.empty() && !cut.lookahead.IsStrictlyPositive())
    {
        const auto names = LinkNames(s, spec);
        std::vector<std::string> zero;
        for (uint32_t l : cut.links)
        {
            if (!spec.Links()[l].params.delay.IsStrictlyPositive())
            {
                zero.push_back(names[l]);
            }
        }
        throw ScenarioError(s.file, s.MarkOf("topology.link"),
                            fmt::format("link(s) {} cross between ranks with no delay: a "
                                        "partitioned run needs a delay on every link it cuts "
                                        "(the ranks' lookahead); give them one, or pin their "
                                        "ends to one rank (topology.partition)",
                                        fmt::join(zero, ", ")));
    }
    for (uint32_t h : spec.Hosts())
    {
        plan.rankOfHost.push_back(plan.rankOfNode[h]);
    }
    return plan;
}

DeterministicTies::DeterministicTies(bool on) : m_on(on)
{
    if (m_on)
    {
        GlobalValue::Bind("SchedulerType", StringValue("ns3::DeterministicScheduler"));
    }
}

DeterministicTies::~DeterministicTies()
{
    if (m_on)
    {
        GlobalValue::Bind("SchedulerType", StringValue("ns3::MapScheduler"));
    }
}

PartitionedRun::PartitionedRun(const std::string& engine) : m_engine(engine)
{
    if (engine != "gtw" && engine != "null")
    {
        throw std::runtime_error("the engine must be gtw or null, not '" + engine + "'");
    }
#ifdef FABEMU_HAVE_MPI
    static bool started = false;
    if (started)
    {
        throw std::runtime_error("one partitioned run per process: MPI starts only once");
    }
    // RTLD_GLOBAL: Open MPI loads components of its own that take its symbols.
    const auto make = reinterpret_cast<RankCommEntry>(
        LoadPlugin("the partitioned run", PluginPath(FABEMU_MPI_PLUGIN), kRankCommEntry, true));
    m_comm.reset(make());
    started = true;
    GlobalValue::Bind("SchedulerType", StringValue("ns3::DeterministicScheduler"));
    GlobalValue::Bind("SimulatorImplementationType",
                      StringValue(engine == "gtw" ? "ns3::DistributedSimulatorImpl"
                                                  : "ns3::NullMessageSimulatorImpl"));
    m_comm->Start(m_rank, m_size);
#else
    throw std::runtime_error("this build has no ns-3 mpi module: run scripts/install-deps "
                             "(Open MPI, ns-3's mpi source), then rebuild");
#endif
}

PartitionedRun::~PartitionedRun()
{
    // An exception leaving: the other ranks wait for this one in a collective.
    m_comm->End(std::uncaught_exceptions() > 0);
    GlobalValue::Bind("SimulatorImplementationType", StringValue("ns3::DefaultSimulatorImpl"));
    GlobalValue::Bind("SchedulerType", StringValue("ns3::MapScheduler"));
}

void
PartitionedRun::StopWhenAllDone(std::function<size_t()> pendingHere, Time every, Time horizon)
{
    if (m_engine != "gtw" || m_size < 2)
    {
        return;
    }
    m_pending = std::move(pendingHere);
    m_every = every;
    m_horizon = horizon;
    if (every < horizon)
    {
        Simulator::Schedule(every, &PartitionedRun::Check, this);
    }
}

void
PartitionedRun::Check()
{
    // Every rank is at this instant of the same window: this collective cannot cross one
    // of the engine's own (on its own communicator).
    if (m_comm->Sum(m_pending()) == 0)
    {
        Simulator::Stop();
        return;
    }
    if (Simulator::Now() + m_every < m_horizon)
    {
        Simulator::Schedule(m_every, &PartitionedRun::Check, this);
    }
}

Time
PartitionedRun::LastEnd(bool allHere, Time lastHere) const
{
    // {a flow not ended, the latest end}: the most of each over the ranks.
    int64_t all[2] = {allHere ? 0 : 1, lastHere.GetTimeStep()};
    m_comm->Max(all);
    return all[0] != 0 ? Time::Max() : TimeStep(all[1]);
}

std::vector<std::string>
PartitionedRun::Gather(const std::string& mine) const
{
    if (mine.size() >= static_cast<size_t>(std::numeric_limits<int>::max()))
    {
        throw std::runtime_error(fmt::format("rank {}: its share of the results is {} bytes, more "
                                             "than MPI's counts take (record fewer pcaps?)",
                                             m_rank, mine.size()));
    }
    return m_comm->Gather(mine);
}

const std::vector<std::string>&
PartitionedFiles()
{
    static const std::vector<std::string> files{"fct.csv",  "fct.txt",          "throughput.csv",
                                                "pfc.csv",  "pfc.txt",          "queue.csv",
                                                "rate.csv", "credit-stalls.csv"};
    return files;
}

namespace
{

bool
HasHeader(const std::string& file)
{
    return file.size() > 4 && file.compare(file.size() - 4, 4, ".csv") == 0;
}

bool
ByCompletion(const std::string& file)
{
    return file == "fct.csv" || file == "fct.txt";
}

std::vector<std::string>
Fields(const std::string& row)
{
    std::vector<std::string> f;
    std::string cur;
    for (char c : row)
    {
        if (c == ',' || c == ' ')
        {
            f.push_back(cur);
            cur.clear();
        }
        else
        {
            cur += c;
        }
    }
    f.push_back(cur);
    return f;
}

/// A field of digits alone (a time, a node, a port), compared as a number.
bool
IsWhole(const std::string& f)
{
    return !f.empty() && f.size() < 19 &&
           std::all_of(f.begin(), f.end(), [](char c) { return c >= '0' && c <= '9'; });
}

/// Field by field: whole numbers by value and before anything else, the rest as text
/// (a total order, as std::stable_sort needs).
bool
FieldsLess(const std::vector<std::string>& a, const std::vector<std::string>& b)
{
    for (size_t i = 0; i < std::min(a.size(), b.size()); ++i)
    {
        const bool wa = IsWhole(a[i]);
        const bool wb = IsWhole(b[i]);
        if (wa != wb)
        {
            return wa;
        }
        if (wa)
        {
            const long long x = std::stoll(a[i]);
            const long long y = std::stoll(b[i]);
            if (x != y)
            {
                return x < y;
            }
        }
        else if (a[i] != b[i])
        {
            return a[i] < b[i];
        }
    }
    return a.size() < b.size();
}

int64_t
Number(const std::vector<std::string>& f, size_t i)
{
    return i < f.size() ? std::strtoll(f[i].c_str(), nullptr, 10) : 0;
}

/// The rows of \p body in the one order for \p file.
std::string
Sorted(const std::string& file, const std::string& body)
{
    std::vector<std::pair<std::vector<std::string>, std::string>> rows;
    std::istringstream in(body);
    for (std::string line; std::getline(in, line);)
    {
        if (!line.empty())
        {
            rows.emplace_back(Fields(line), line);
        }
    }
    const bool completion = ByCompletion(file);
    std::stable_sort(rows.begin(), rows.end(), [completion](const auto& a, const auto& b) {
        if (completion) // start + FCT, fields 5 and 6 of both fct files
        {
            const int64_t ea = Number(a.first, 5) + Number(a.first, 6);
            const int64_t eb = Number(b.first, 5) + Number(b.first, 6);
            if (ea != eb)
            {
                return ea < eb;
            }
        }
        return FieldsLess(a.first, b.first);
    });
    std::string out;
    for (const auto& r : rows)
    {
        out += r.second + "\n";
    }
    return out;
}

/// A file's header line ("" for none) and its rows.
std::pair<std::string, std::string>
ReadRecords(const fs::path& path, const std::string& file)
{
    std::ifstream in(path);
    std::stringstream all;
    all << in.rdbuf();
    std::string text = all.str();
    if (!HasHeader(file))
    {
        return {"", text};
    }
    const size_t eol = text.find('\n');
    if (eol == std::string::npos)
    {
        return {text, ""};
    }
    return {text.substr(0, eol + 1), text.substr(eol + 1)};
}

json
TotalsJson(const FabricTotals& t)
{
    return {{"drops", t.fabricDrops},
            {"congestion_drops", t.congestionDrops},
            {"pfc", t.pfcFrames},
            {"ecn", t.ecnMarks},
            {"cnps", t.cnps},
            {"stalls", t.creditStalls},
            {"peak", t.peakQueueBytes},
            {"switch_drops", t.switchDrops},
            {"own", t.own},
            {"deadlock", t.deadlock}};
}

void
AddTotals(FabricTotals& sum, const json& t)
{
    sum.fabricDrops += t["drops"].get<uint64_t>();
    sum.congestionDrops += t["congestion_drops"].get<uint64_t>();
    sum.pfcFrames += t["pfc"].get<uint64_t>();
    sum.ecnMarks += t["ecn"].get<uint64_t>();
    sum.cnps += t["cnps"].get<uint64_t>();
    sum.creditStalls += t["stalls"].get<uint64_t>();
    sum.peakQueueBytes = std::max(sum.peakQueueBytes, t["peak"].get<uint64_t>());
    for (const auto& [reason, n] : t["switch_drops"].items())
    {
        sum.switchDrops[reason] += n.get<uint64_t>();
    }
    for (const auto& [key, n] : t["own"].items())
    {
        sum.own[key] = sum.own.value(key, uint64_t{0}) + n.get<uint64_t>();
    }
    if (sum.deadlock.is_null())
    {
        sum.deadlock = t["deadlock"];
    }
}

/// Drops the rows a one-rank run would not have had: none after \p endNs (when >= 0),
/// and a flow's throughput none after the sample that saw it end (times in ps; a row's
/// sample time is a whole number of ns, as the rate interval is).
std::string
Trimmed(const std::string& file, const std::string& body, int64_t endNs,
        const std::map<int64_t, int64_t>& endedPs, int64_t intervalPs)
{
    std::istringstream in(body);
    std::string out;
    for (std::string line; std::getline(in, line);)
    {
        const auto f = Fields(line);
        if (!ByCompletion(file) && endNs >= 0 && Number(f, 0) > endNs)
        {
            continue;
        }
        if (file == "throughput.csv")
        {
            const auto it = endedPs.find(Number(f, 1));
            if (it != endedPs.end() && Number(f, 0) * 1000 >= it->second + intervalPs)
            {
                continue;
            }
        }
        out += line + "\n";
    }
    return out;
}

} // namespace

void
SortRecords(const fs::path& dir)
{
    for (const auto& file : PartitionedFiles())
    {
        if (!fs::exists(dir / file))
        {
            continue;
        }
        const auto [header, body] = ReadRecords(dir / file, file);
        std::ofstream(dir / file) << header << Sorted(file, body);
    }
}

std::string
RankShare(const std::vector<FlowRecord>& flows, const std::function<bool(uint32_t)>& local,
          const std::function<uint64_t(uint32_t)>& receivedHere, const FabricTotals& totals,
          const fs::path& dir)
{
    json share;
    share["flows"] = json::array();
    share["rx"] = json::array();
    for (const auto& r : flows)
    {
        if (local(r.spec.src))
        {
            share["flows"].push_back({r.id, static_cast<int>(r.state), r.reason,
                                      r.fct.GetPicoSeconds(), r.ended.GetPicoSeconds()});
        }
        const uint32_t receiver = r.spec.op == RdmaWorkRequest::Op::Read ? r.spec.src : r.spec.dst;
        if (local(receiver))
        {
            share["rx"].push_back({r.id, receivedHere(r.id)});
        }
    }
    share["totals"] = TotalsJson(totals);
    share["files"] = json::object();
    for (const auto& file : PartitionedFiles())
    {
        if (!fs::exists(dir / file))
        {
            continue;
        }
        std::string body = ReadRecords(dir / file, file).second;
        if (file == "rate.csv")
        {
            // Every rank makes every QP, and logs its first rate: keep its hosts' rows.
            std::istringstream in(body);
            body.clear();
            for (std::string line; std::getline(in, line);)
            {
                if (local(static_cast<uint32_t>(Number(Fields(line), 1))))
                {
                    body += line + "\n";
                }
            }
        }
        share["files"][file] = body;
    }
    share["pcaps"] = json::object();
    for (const auto& entry : fs::directory_iterator(dir))
    {
        if (entry.path().extension() == ".pcap" && entry.file_size() > 24) // more than a header
        {
            std::ifstream in(entry.path(), std::ios::binary);
            std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                                       std::istreambuf_iterator<char>());
            share["pcaps"][entry.path().filename().string()] = json::binary(std::move(bytes));
        }
    }
    const auto cbor = json::to_cbor(share);
    return std::string(cbor.begin(), cbor.end());
}

FabricTotals
MergeShares(const std::vector<std::string>& shares, std::vector<FlowRecord>& flows,
            const fs::path& dir, Time rateInterval, Time& simTime)
{
    FabricTotals totals;
    std::map<std::string, std::string> bodies;
    std::map<uint32_t, FlowRecord*> byId;
    for (auto& r : flows)
    {
        byId[r.id] = &r;
    }
    std::map<uint32_t, uint64_t> received;
    for (const auto& text : shares)
    {
        const json share = json::from_cbor(text);
        for (const auto& f : share["flows"])
        {
            FlowRecord* r = byId.at(f[0].get<uint32_t>());
            r->state = static_cast<FlowState>(f[1].get<int>());
            r->reason = f[2].get<std::string>();
            r->fct = PicoSeconds(f[3].get<int64_t>());
            r->ended = PicoSeconds(f[4].get<int64_t>());
        }
        for (const auto& x : share["rx"])
        {
            received[x[0].get<uint32_t>()] = x[1].get<uint64_t>();
        }
        AddTotals(totals, share["totals"]);
        for (const auto& [file, body] : share["files"].items())
        {
            bodies[file] += body.get<std::string>();
        }
        for (const auto& [name, bytes] : share["pcaps"].items())
        {
            const auto& b = bytes.get_binary();
            std::ofstream(dir / name, std::ios::binary)
                .write(reinterpret_cast<const char*>(b.data()), static_cast<long>(b.size()));
        }
    }
    // Where a one-rank run would have stopped: when the last flow ended.
    bool allEnded = !flows.empty();
    Time last;
    std::map<int64_t, int64_t> endedPs;
    for (auto& r : flows)
    {
        if (r.state == FlowState::Completed)
        {
            r.delivered = r.spec.bytes;
        }
        else if (received.count(r.id))
        {
            r.delivered = received[r.id];
        }
        allEnded = allEnded && r.state != FlowState::Pending;
        if (r.state != FlowState::Pending)
        {
            last = std::max(last, r.ended);
            endedPs[r.id] = r.ended.GetPicoSeconds();
        }
    }
    if (allEnded)
    {
        simTime = last;
    }
    for (const auto& file : PartitionedFiles())
    {
        if (!fs::exists(dir / file))
        {
            continue;
        }
        const std::string header = ReadRecords(dir / file, file).first;
        std::ofstream(dir / file) << header
                                  << Sorted(file, Trimmed(file, bodies[file],
                                                          allEnded ? last.GetNanoSeconds() : -1,
                                                          endedPs, rateInterval.GetPicoSeconds()));
    }
    return totals;
}

} // namespace fabemu
