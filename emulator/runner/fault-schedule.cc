#include "emulator/runner/fault-schedule.h"

#include "emulator/runner/scenario-fabric.h"
#include "scenarios/src/results.h"

#include "ns3/abort.h"
#include "ns3/simulator.h"

#include <fmt/format.h>

#include <algorithm>
#include <sstream>

namespace fabemu
{

using namespace ns3;

namespace
{

/// A fault's value as the file gave it: "10Gbps", a bit-error rate such as "1e-06", or
/// a straggler's delay ("50us").
std::string
Value(const FaultSpec& f)
{
    if (f.Kind() == "delay")
    {
        return f.delay;
    }
    if (f.Kind() == "pause_storm")
    {
        return f.pauseStorm;
    }
    if (f.Kind() == "crash")
    {
        return f.crash;
    }
    if (f.Kind() == "down")
    {
        return f.down;
    }
    return f.Kind() == "rate" ? f.rate : fmt::format("{:g}", f.ber);
}

} // namespace

FaultSchedule::FaultSchedule(const Scenario& s)
{
    const bool breaksLinks = std::any_of(s.faults.begin(), s.faults.end(),
                                         [](const FaultSpec& f) { return f.host < 0; });
    const uint32_t rails = s.topology.RailsPerServer();
    std::vector<std::string> names;
    std::vector<uint32_t> links(s.faults.size(), kNoLink);
    if (breaksLinks)
    {
        m_spec = BuildTopology(s);
        names = LinkNames(s, m_spec);
        links = FaultLinks(s, m_spec);
    }
    for (size_t i = 0; i < s.faults.size(); ++i)
    {
        // A straggler is named by its host; the runner delays its messages (FaultDelay).
        m_faults.push_back(
            Entry{s.faults[i], links[i],
                  links[i] == kNoLink ? fmt::format("h{}", s.faults[i].host) : names[links[i]],
                  false, Time(), rails});
    }
}

Time
FaultSchedule::FaultDelay(const std::vector<FaultSpec>& faults, uint32_t host, Time start)
{
    Time delay;
    for (const auto& f : faults)
    {
        if (f.host == static_cast<int64_t>(host) && PicoSeconds(f.atPs) <= start)
        {
            delay += PicoSeconds(f.delayPs);
        }
    }
    return delay;
}

namespace
{

/// FaultDelay for network port \p port: one of its server's NICs (a rail each).
Time
PortDelay(const Scenario* s, uint32_t port, Time start)
{
    return FaultSchedule::FaultDelay(s->faults, port / s->topology.RailsPerServer(), start);
}

} // namespace

void
FaultSchedule::AddStragglers(const Scenario& s, FlowRunner& runner)
{
    runner.SetStartDelay(MakeBoundCallback(&PortDelay, &s));
}

void
FaultSchedule::Schedule(Fabric* fabric)
{
    for (size_t i = 0; i < m_faults.size(); ++i)
    {
        NS_ABORT_MSG_IF(!fabric && m_faults[i].spec.Kind() != "delay",
                        "faults." << i << ": a link's fault needs the network");
        NS_ABORT_MSG_IF(m_faults[i].spec.Kind() == "crash" && !m_crash,
                        "faults." << i << ": a crash needs the VMs (SetCrash)");
        Simulator::Schedule(PicoSeconds(m_faults[i].spec.atPs), &FaultSchedule::Apply, this, i,
                            fabric);
    }
}

void
FaultSchedule::Apply(size_t i, Fabric* fabric)
{
    Entry& e = m_faults[i];
    if (e.spec.Kind() == "delay")
    {
        // Nothing to change on the fabric: messages started from now on leave late.
    }
    else if (e.spec.Kind() == "pause_storm")
    {
        // Every NIC of the server (one per rail on rail clusters).
        for (uint32_t k = 0; k < e.railsPerServer; ++k)
        {
            fabric->StartPauseStorm(static_cast<uint32_t>(e.spec.host) * e.railsPerServer + k,
                                    PicoSeconds(e.spec.pauseStormPs));
        }
    }
    else if (e.spec.Kind() == "crash")
    {
        m_crash(static_cast<uint32_t>(e.spec.host));
    }
    else if (e.spec.Kind() == "down")
    {
        fabric->SetLinkUp(e.link, false);
        Simulator::Schedule(PicoSeconds(e.spec.downPs), &FaultSchedule::LinkBack, this, i, fabric);
    }
    else if (e.spec.Kind() == "rate")
    {
        fabric->SetLinkRate(e.link, DataRate(e.spec.bitsPerSecond));
    }
    else
    {
        fabric->SetLinkBitErrorRate(e.link, e.spec.ber);
    }
    e.applied = true;
    e.at = Simulator::Now();
}

void
FaultSchedule::LinkBack(size_t i, Fabric* fabric)
{
    // A second outage of the same link that lasts longer keeps it down until it ends.
    const Entry& e = m_faults[i];
    if (e.upAt != Time::Max())
    {
        return; // brought back already, by an outage that ended at the same time
    }
    for (size_t j = 0; j < m_faults.size(); ++j)
    {
        const Entry& o = m_faults[j];
        if (j != i && o.applied && o.spec.Kind() == "down" && o.link == e.link &&
            o.upAt == Time::Max() && o.at + PicoSeconds(o.spec.downPs) > Simulator::Now())
        {
            return;
        }
    }
    fabric->SetLinkUp(e.link, true);
    m_faults[i].broughtBack = true;
    for (Entry& o : m_faults)
    {
        if (o.applied && o.spec.Kind() == "down" && o.link == e.link && o.upAt == Time::Max())
        {
            o.upAt = Simulator::Now(); // it, and the outages it held back
        }
    }
}

bool
FaultSchedule::Joined(uint32_t a, uint32_t b, Time t) const
{
    TopologySpec spec = m_spec;
    for (const Entry& e : m_faults)
    {
        if (e.applied && e.spec.Kind() == "down" && e.at <= t && t < e.upAt)
        {
            spec.SetLinkUp(e.link, false);
        }
    }
    return spec.Reaches(a, b);
}

void
FaultSchedule::ExplainFailures(std::vector<FlowRecord>& flows) const
{
    for (FlowRecord& r : flows)
    {
        if (r.state != FlowState::Failed || r.spec.src >= m_spec.Hosts().size() ||
            r.spec.dst >= m_spec.Hosts().size())
        {
            continue;
        }
        for (size_t i = 0; i < m_faults.size(); ++i)
        {
            const Entry& e = m_faults[i];
            // An outage during the flow's life, before it failed, that cut its hosts apart.
            if (!e.applied || e.spec.Kind() != "down" || e.upAt <= r.spec.start || e.at > r.ended ||
                Joined(r.spec.src, r.spec.dst, Max(e.at, r.spec.start)))
            {
                continue;
            }
            const std::string src =
                r.spec.srcName.empty() ? fmt::format("h{}", r.spec.src) : r.spec.srcName;
            const std::string dst =
                r.spec.dstName.empty() ? fmt::format("h{}", r.spec.dst) : r.spec.dstName;
            r.reason += fmt::format("; no path from {} to {} while {} was down (faults.{}, "
                                    "{} for {})",
                                    src, dst, e.name, i, e.spec.at, e.spec.down);
            break;
        }
    }
}

std::vector<std::pair<uint32_t, std::string>>
FaultSchedule::Crashed() const
{
    std::vector<std::pair<uint32_t, std::string>> out;
    for (size_t i = 0; i < m_faults.size(); ++i)
    {
        const Entry& e = m_faults[i];
        if (e.applied && e.spec.Kind() == "crash")
        {
            out.emplace_back(static_cast<uint32_t>(e.spec.host),
                             fmt::format("faults.{} at {}", i, e.spec.at));
        }
    }
    return out;
}

void
FaultSchedule::Write(const std::filesystem::path& dir) const
{
    if (m_faults.empty())
    {
        return;
    }
    std::vector<std::pair<Time, std::string>> lines; // in time order, the file's on a tie
    for (const auto& e : m_faults)
    {
        if (e.applied)
        {
            lines.emplace_back(e.at, fmt::format("{:.9f},{},{},{}\n", e.at.GetSeconds(), e.name,
                                                 e.spec.Kind(), Value(e.spec)));
        }
        if (e.broughtBack)
        {
            // The link back; the value is how long the outage that ended was.
            lines.emplace_back(
                e.upAt, fmt::format("{:.9f},{},up,{}\n", e.upAt.GetSeconds(), e.name, e.spec.down));
        }
    }
    std::stable_sort(lines.begin(), lines.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    std::ostringstream rows;
    for (const auto& [at, line] : lines)
    {
        rows << line;
    }
    WriteCsv(dir / "faults.csv", "time_s,link,kind,value", rows.str());
}

nlohmann::json
FaultSchedule::Summary() const
{
    nlohmann::json out = nlohmann::json::array();
    for (const auto& e : m_faults)
    {
        out.push_back({{"at_s", PicoSeconds(e.spec.atPs).GetSeconds()},
                       {e.spec.host >= 0 ? "host" : "link", e.name},
                       {"kind", e.spec.Kind()},
                       {"value", Value(e.spec)},
                       {"applied", e.applied}});
        if (e.upAt != Time::Max())
        {
            out.back()["up_s"] = e.upAt.GetSeconds(); // a link down that came back
        }
    }
    return out;
}

} // namespace fabemu
