// ResolvedYaml: every value used, by walking the same key tables the parser reads.
#include "scenarios/src/scenario-keys.h"

#include <fmt/format.h>

namespace fabemu
{

namespace
{

std::string
HostName(uint32_t h)
{
    return "h" + std::to_string(h);
}

template <class T>
void WriteKeys(YAML::Emitter& y, const std::vector<Key<T>>& keys, const std::string& parent,
               const std::string& context, const T& t);

template <class T>
void
WriteValue(YAML::Emitter& y, const std::vector<Key<T>>& keys, const Key<T>& k,
           const std::string& context, const T& t)
{
    if (k.kind == KeyKind::Section)
    {
        k.write(y, t);
        return;
    }
    if (k.kind == KeyKind::Map)
    {
        if (k.flow)
        {
            y << YAML::Flow;
        }
        y << YAML::BeginMap;
        WriteKeys(y, keys, k.name, context, t);
        y << YAML::EndMap;
        return;
    }
    const KeyValue v = k.get(t);
    switch (k.kind)
    {
    case KeyKind::Bool:
        y << v.b;
        break;
    case KeyKind::Integer:
    case KeyKind::Bytes:
        if (v.sweep.size() > 1)
        {
            y << YAML::Flow << YAML::BeginMap << YAML::Key << "from" << YAML::Value
              << v.sweep.front() << YAML::Key << "to" << YAML::Value << v.sweep.back() << YAML::Key
              << "factor" << YAML::Value << v.sweep[1] / v.sweep[0] << YAML::EndMap;
            break;
        }
        y << v.u;
        break;
    case KeyKind::Number:
        y << v.d;
        break;
    case KeyKind::Time:
        if (k.asWritten)
        {
            y << v.text;
        }
        else
        {
            y << fmt::format("{}ns", v.ps / 1000.0);
        }
        break;
    case KeyKind::Host:
        y << HostName(static_cast<uint32_t>(v.u));
        break;
    case KeyKind::Endpoint:
        y << HostName(static_cast<uint32_t>(v.u)) + (v.text.empty() ? "" : "." + v.text);
        break;
    case KeyKind::Hosts:
        y << YAML::Flow << YAML::BeginSeq;
        for (uint32_t h : v.hosts)
        {
            y << HostName(h);
        }
        y << YAML::EndSeq;
        break;
    default:
        y << v.text;
        break;
    }
}

/// The rows under \p parent that apply to \p context, in table order.
template <class T>
void
WriteKeys(YAML::Emitter& y, const std::vector<Key<T>>& keys, const std::string& parent,
          const std::string& context, const T& t)
{
    for (const auto& k : keys)
    {
        const bool under = parent.empty()
                               ? k.name.find('.') == std::string::npos
                               : k.name.rfind(parent + ".", 0) == 0 &&
                                     k.name.find('.', parent.size() + 1) == std::string::npos;
        if (!under || !k.AppliesTo(context) || (k.writtenIf && !k.writtenIf(t)))
        {
            continue;
        }
        y << YAML::Key << k.name.substr(k.name.rfind('.') + 1) << YAML::Value;
        WriteValue(y, keys, k, context, t);
    }
}

} // namespace

void
WriteFabric(YAML::Emitter& y, const Scenario& s)
{
    y << YAML::BeginMap;
    WriteKeys(y, FabricKeys(), "", s.fabric.type, s.fabric);
    y << YAML::EndMap;
}

void
WriteFabricSet(YAML::Emitter& y, const FabricSpec& f)
{
    y << YAML::BeginMap;
    for (const auto& kv : f.set)
    {
        y << YAML::Key << kv.name << YAML::Value << kv.value;
    }
    y << YAML::EndMap;
}

void
WriteTopology(YAML::Emitter& y, const Scenario& s)
{
    y << YAML::BeginMap;
    WriteKeys(y, TopologyKeys(), "", s.topology.builder, s.topology);
    y << YAML::EndMap;
}

void
WriteEndpoints(YAML::Emitter& y, const Scenario& s)
{
    y << YAML::BeginMap;
    for (const auto& e : s.endpoints)
    {
        y << YAML::Key << e.host << YAML::Value << YAML::Flow << YAML::BeginMap;
        WriteKeys(y, EndpointKeys(), "", "", e);
        y << YAML::EndMap;
    }
    y << YAML::EndMap;
}

void
WriteWorkloads(YAML::Emitter& y, const Scenario& s)
{
    y << YAML::BeginSeq;
    for (const auto& w : s.workloads)
    {
        y << YAML::Flow << YAML::BeginMap;
        WriteKeys(y, WorkloadKeys(), "", w.type, w);
        y << YAML::EndMap;
    }
    y << YAML::EndSeq;
}

void
WriteFaults(YAML::Emitter& y, const Scenario& s)
{
    y << YAML::BeginSeq;
    for (const auto& f : s.faults)
    {
        y << YAML::Flow << YAML::BeginMap;
        WriteKeys(y, FaultKeys(), "", "fault", f);
        y << YAML::EndMap;
    }
    y << YAML::EndSeq;
}

void
WriteRecord(YAML::Emitter& y, const Scenario& s)
{
    y << YAML::BeginMap;
    WriteKeys(y, RecordKeys(), "", "", s.record);
    y << YAML::EndMap;
}

void
WriteExpect(YAML::Emitter& y, const Scenario& s)
{
    y << YAML::BeginMap;
    for (const auto& e : s.expect)
    {
        y << YAML::Key << e.metric << YAML::Value << e.want;
    }
    y << YAML::EndMap;
}

std::string
ResolvedYaml(const Scenario& s)
{
    YAML::Emitter y;
    y << YAML::BeginMap;
    WriteKeys(y, ScenarioKeys(), "", "", s);
    y << YAML::EndMap;
    return std::string(y.c_str()) + "\n";
}

void
WriteRanks(YAML::Emitter& y, const WorkloadSpec& w)
{
    y << YAML::Flow << YAML::BeginSeq;
    for (size_t r = 0; r < w.hosts.size(); ++r)
    {
        y << w.RankName(r);
    }
    y << YAML::EndSeq;
}

void
WritePartitionPins(YAML::Emitter& y, const TopologyYaml& t)
{
    y << YAML::Flow << YAML::BeginMap;
    for (const auto& p : t.partition)
    {
        y << YAML::Key << p.name << YAML::Value << p.rank;
    }
    y << YAML::EndMap;
}

void
WriteLinkOverrides(YAML::Emitter& y, const TopologyYaml& t)
{
    y << YAML::BeginMap;
    for (const auto& o : t.overrides)
    {
        y << YAML::Key << o.name << YAML::Value << YAML::Flow << YAML::BeginMap;
        if (!o.rate.empty())
        {
            y << YAML::Key << "rate" << YAML::Value << o.rate;
        }
        if (!o.delay.empty())
        {
            y << YAML::Key << "delay" << YAML::Value << o.delay;
        }
        y << YAML::EndMap;
    }
    y << YAML::EndMap;
}

void
WriteStragglers(YAML::Emitter& y, const WorkloadSpec& w)
{
    y << YAML::Flow << YAML::BeginMap;
    for (const auto& [rank, delay] : w.stragglers)
    {
        y << YAML::Key << rank << YAML::Value << delay.second;
    }
    y << YAML::EndMap;
}

} // namespace fabemu
