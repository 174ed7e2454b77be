#include "emulator/runner/fault-schedule.h"

#include "emulator/runner/scenario-fabric.h"
#include "scenarios/src/results.h"

#include "ns3/simulator.h"

#include <fmt/format.h>

#include <sstream>

namespace fabemu
{

using namespace ns3;

namespace
{

/// A fault's value as the file gave it: "10Gbps", or a bit-error rate such as "1e-06".
std::string
Value(const FaultSpec& f)
{
    return f.Kind() == "rate" ? f.rate : fmt::format("{:g}", f.ber);
}

} // namespace

FaultSchedule::FaultSchedule(const Scenario& s)
{
    if (s.faults.empty())
    {
        return;
    }
    const TopologySpec spec = BuildTopology(s);
    const std::vector<std::string> names = LinkNames(s, spec);
    const std::vector<uint32_t> links = FaultLinks(s, spec);
    for (size_t i = 0; i < s.faults.size(); ++i)
    {
        m_faults.push_back(Entry{s.faults[i], links[i], names[links[i]], false, Time()});
    }
}

void
FaultSchedule::Schedule(Fabric& fabric)
{
    for (size_t i = 0; i < m_faults.size(); ++i)
    {
        Simulator::Schedule(PicoSeconds(m_faults[i].spec.atPs), &FaultSchedule::Apply, this, i,
                            &fabric);
    }
}

void
FaultSchedule::Apply(size_t i, Fabric* fabric)
{
    Entry& e = m_faults[i];
    if (e.spec.Kind() == "rate")
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
FaultSchedule::Write(const std::filesystem::path& dir) const
{
    if (m_faults.empty())
    {
        return;
    }
    std::ostringstream rows;
    for (const auto& e : m_faults)
    {
        if (e.applied)
        {
            rows << fmt::format("{:.9f},{},{},{}\n", e.at.GetSeconds(), e.name, e.spec.Kind(),
                                Value(e.spec));
        }
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
                       {"link", e.name},
                       {"kind", e.spec.Kind()},
                       {"value", Value(e.spec)},
                       {"applied", e.applied}});
    }
    return out;
}

} // namespace fabemu
