/*
 * Inside the scenario library: every scenario key as data. One table per
 * section (the scenario's top level, fabric, topology, endpoint, workload,
 * record); each row is a key with its kind, range, documentation and the
 * fabric types, builders or workload types it applies to, and an accessor
 * pair on the spec it fills. The parser, the resolved YAML writer, Keys()
 * (`fabemu list`, docs/scenarios.md) and --set all walk these rows.
 *
 * A new fabric type, builder or workload type is a row in FabricTypes(),
 * Builders() or WorkloadKinds(), its keys rows tagged with its name, and its
 * cross-key checks in scenario-validate.cc.
 */
#ifndef FABEMU_SCENARIO_KEYS_H
#define FABEMU_SCENARIO_KEYS_H

#include "scenarios/src/scenario-reader.h"

#include <functional>
#include <optional>
#include <type_traits>
#include <utility>

namespace fabemu
{

enum class KeyKind
{
    Text,
    Choice,
    Bool,
    Integer,
    Number,
    Bytes,
    Time,
    Rate,
    Host,
    Endpoint, ///< "hN" or a device inside it, "hN.gpu0" (KeyValue: u the host, text the device)
    Hosts,
    Map,     ///< its keys are rows named "this.key"
    Section, ///< read and written by its own functions (fabric:, workloads:, fabric.set ...)
};

/// One value as read: the field a row's kind fills.
struct KeyValue
{
    std::string text; ///< as written (strings, choices, times, rates)
    uint64_t u{0};    ///< integers, bytes, bits per second, a host
    int64_t ps{0};    ///< times
    double d{0};      ///< numbers
    bool b{false};
    std::vector<uint32_t> hosts;
    std::vector<uint64_t> sweep; ///< Bytes of a Sweep() row given as {from, to, factor}: each size
};

/// What a Section row's reader gets besides its node.
struct ReadContext
{
    const Reader& r;
    uint32_t hosts{0};
};

template <class T>
struct Key
{
    std::string name; ///< dotted, within its table ("ecn.kmin")
    KeyKind kind{KeyKind::Text};
    std::string type; ///< as documented ("bytes", "roce|infiniband|iwarp")
    std::string def;  ///< the default, as documented
    std::string help;
    std::string example;               ///< a value the parser takes (tests set every key to it)
    std::vector<std::string> only;     ///< fabric types / builders / workload types; empty: all
    std::vector<std::string> required; ///< workload types that must give it
    std::vector<std::string> choices;
    int64_t lo{0};
    int64_t hi{0};
    double dlo{0};
    double dhi{0};
    bool emptyOk{false};                ///< Hosts: [] is allowed
    bool sweep{false};                  ///< Bytes: a map {from, to, factor} is a sweep of sizes
    bool asWritten{true};               ///< Time: written back as given (else in ns)
    std::string shorthand;              ///< Map: the key a single value stands for ("ecn: false")
    bool flow{false};                   ///< Map: written as {a: b}
    std::optional<std::string> refusal; ///< why, after "KEY applies to ONLY", where it does not
    /// Choices that depend on the spec (fabric.cc): a suffix for the messages and the list.
    std::function<std::pair<std::string, std::vector<std::string>>(const T&)> choicesOf;
    /// "" or what is wrong with a value of the right kind (\p what names the key).
    std::function<std::string(const std::string& what, const KeyValue&)> check;
    std::function<void(T&)> begin; ///< Map: before its keys are read, given or not
    std::function<void(T&, const KeyValue&)> set;
    std::function<KeyValue(const T&)> get;
    std::function<void(const ReadContext&, const YAML::Node&, T&)> read; ///< Section
    std::function<void(YAML::Emitter&, const T&)> write;                 ///< Section
    /// Whether the resolved YAML writes the key (absent: always); keys added later leave
    /// the resolved files of scenarios that do not use them as they were.
    std::function<bool(const T&)> writtenIf;

    bool AppliesTo(const std::string& what) const
    {
        return only.empty() || std::find(only.begin(), only.end(), what) != only.end();
    }
    bool RequiredFor(const std::string& what) const
    {
        return std::find(required.begin(), required.end(), what) != required.end();
    }

    // Builders, so that a table reads as one line per property.
    Key& Only(std::vector<std::string> v)
    {
        only = std::move(v);
        return *this;
    }
    Key& Required(std::vector<std::string> v)
    {
        required = std::move(v);
        return *this;
    }
    Key& Choices(std::vector<std::string> v)
    {
        choices = std::move(v);
        return *this;
    }
    Key& Range(int64_t a, int64_t b)
    {
        lo = a;
        hi = b;
        return *this;
    }
    Key& Between(double a, double b)
    {
        dlo = a;
        dhi = b;
        return *this;
    }
    Key& Example(std::string v)
    {
        example = std::move(v);
        return *this;
    }
    Key& Refusal(std::string v)
    {
        refusal = std::move(v);
        return *this;
    }
    Key& Shorthand(std::string v)
    {
        shorthand = std::move(v);
        return *this;
    }
    Key& Flow()
    {
        flow = true;
        return *this;
    }
    Key& InNs()
    {
        asWritten = false;
        return *this;
    }
    Key& EmptyOk()
    {
        emptyOk = true;
        return *this;
    }
    Key& Sweep()
    {
        sweep = true;
        return *this;
    }
    Key& Check(decltype(check) f)
    {
        check = std::move(f);
        return *this;
    }
    Key& Begin(decltype(begin) f)
    {
        begin = std::move(f);
        return *this;
    }
    Key& ChoicesOf(decltype(choicesOf) f)
    {
        choicesOf = std::move(f);
        return *this;
    }
    Key& Access(decltype(set) s, decltype(get) g)
    {
        set = std::move(s);
        get = std::move(g);
        return *this;
    }
    Key& WrittenIf(decltype(writtenIf) f)
    {
        writtenIf = std::move(f);
        return *this;
    }
    Key& Own(decltype(read) r, decltype(write) w)
    {
        read = std::move(r);
        write = std::move(w);
        return *this;
    }

    /// The row reads into and writes from one member, converted by its type.
    template <class M>
    Key& Field(M T::*m)
    {
        set = [m](T& t, const KeyValue& v) {
            if constexpr (std::is_same_v<M, bool>)
                t.*m = v.b;
            else if constexpr (std::is_same_v<M, std::string>)
                t.*m = v.text;
            else if constexpr (std::is_same_v<M, double>)
                t.*m = v.d;
            else if constexpr (std::is_same_v<M, int64_t>)
                t.*m = v.ps;
            else if constexpr (std::is_same_v<M, std::vector<uint32_t>>)
                t.*m = v.hosts;
            else
                t.*m = static_cast<M>(v.u);
        };
        get = [m](const T& t) {
            KeyValue v;
            if constexpr (std::is_same_v<M, bool>)
                v.b = t.*m;
            else if constexpr (std::is_same_v<M, std::string>)
                v.text = t.*m;
            else if constexpr (std::is_same_v<M, double>)
                v.d = t.*m;
            else if constexpr (std::is_same_v<M, int64_t>)
                v.ps = t.*m;
            else if constexpr (std::is_same_v<M, std::vector<uint32_t>>)
                v.hosts = t.*m;
            else
                v.u = t.*m;
            return v;
        };
        return *this;
    }
    /// An Endpoint key kept as its host (\p host) and the device inside it (\p device).
    Key& Endpoint(uint32_t T::*host, std::string T::*device)
    {
        set = [host, device](T& t, const KeyValue& v) {
            t.*host = static_cast<uint32_t>(v.u);
            t.*device = v.text;
        };
        get = [host, device](const T& t) {
            KeyValue v;
            v.u = t.*host;
            v.text = t.*device;
            return v;
        };
        return *this;
    }
    /// A time kept as written (\p text) and in picoseconds (\p ps).
    Key& Timed(std::string T::*text, int64_t T::*ps)
    {
        set = [text, ps](T& t, const KeyValue& v) {
            t.*text = v.text;
            t.*ps = v.ps;
        };
        get = [text, ps](const T& t) {
            KeyValue v;
            v.text = t.*text;
            v.ps = t.*ps;
            return v;
        };
        return *this;
    }
};

template <class T>
Key<T>
MakeKey(std::string name, KeyKind kind, std::string type, std::string def, std::string help)
{
    Key<T> k;
    k.name = std::move(name);
    k.kind = kind;
    k.type = std::move(type);
    k.def = std::move(def);
    k.help = std::move(help);
    return k;
}

/// One fabric type: its name, what it is, and what it changes.
struct FabricType
{
    std::string name;
    std::string help;
    std::vector<std::string> cc; ///< fabric.cc choices, the first is the default
    std::string refusal;         ///< why a key of another fabric does not apply here
    std::function<void(FabricSpec&)> defaults;
};

/// One topology builder; the keys it takes are the topology rows tagged with its name.
struct Builder
{
    std::string name;
    std::string help;
};

/// One workload type; its keys are the workload rows tagged with its name.
struct WorkloadKind
{
    std::string name;
    std::string help;
};

const std::vector<FabricType>& FabricTypes();
const FabricType& FabricTypeOf(const std::string& name);
const std::vector<Builder>& Builders();
const std::vector<WorkloadKind>& WorkloadKinds();

const std::vector<Key<Scenario>>& ScenarioKeys();
const std::vector<Key<FabricSpec>>& FabricKeys();
const std::vector<Key<TopologyYaml>>& TopologyKeys();
const std::vector<Key<EndpointSpec>>& EndpointKeys();
const std::vector<Key<WorkloadSpec>>& WorkloadKeys();
const std::vector<Key<Scenario::Record>>& RecordKeys();
const std::vector<Key<FaultSpec>>& FaultKeys();

// The sections' own readers and writers (scenario-parse.cc, scenario-write.cc).
void ReadFabric(const ReadContext& c, const YAML::Node& n, Scenario& s);
void ReadTopology(const ReadContext& c, const YAML::Node& n, Scenario& s);
void ReadEndpoints(const ReadContext& c, const YAML::Node& n, Scenario& s);
void ReadWorkloads(const ReadContext& c, const YAML::Node& n, Scenario& s);
void ReadRecord(const ReadContext& c, const YAML::Node& n, Scenario& s);
void ReadFaults(const ReadContext& c, const YAML::Node& n, Scenario& s);
void ReadExpect(const ReadContext& c, const YAML::Node& n, Scenario& s);
void ReadFabricSet(const ReadContext& c, const YAML::Node& n, FabricSpec& f);
void ReadNode(const ReadContext& c, const YAML::Node& n, TopologyYaml& t);
void WriteNode(YAML::Emitter& y, const TopologyYaml& t);
void ReadLinkOverrides(const ReadContext& c, const YAML::Node& n, TopologyYaml& t);
void WriteLinkOverrides(YAML::Emitter& y, const TopologyYaml& t);
void ReadPartitionPins(const ReadContext& c, const YAML::Node& n, TopologyYaml& t);
void WritePartitionPins(YAML::Emitter& y, const TopologyYaml& t);
/// A collective's ranks: hosts or GPUs (hN.gpuK), or all (scenario-parse.cc, -write.cc).
void ReadRanks(const ReadContext& c, const YAML::Node& n, WorkloadSpec& w);
void WriteRanks(YAML::Emitter& y, const WorkloadSpec& w);
/// A collective's stragglers: rank: time (scenario-parse.cc, -write.cc).
void ReadStragglers(const ReadContext& c, const YAML::Node& n, WorkloadSpec& w);
void WriteStragglers(YAML::Emitter& y, const WorkloadSpec& w);
/// topology.node.pcie's presets and topology.node's server presets (scenario-node.cc).
std::vector<std::string> PciePresetNames();
std::vector<std::string> ServerPresetNames();
void WriteFabric(YAML::Emitter& y, const Scenario& s);
void WriteTopology(YAML::Emitter& y, const Scenario& s);
void WriteEndpoints(YAML::Emitter& y, const Scenario& s);
void WriteWorkloads(YAML::Emitter& y, const Scenario& s);
void WriteRecord(YAML::Emitter& y, const Scenario& s);
void WriteFaults(YAML::Emitter& y, const Scenario& s);
void WriteExpect(YAML::Emitter& y, const Scenario& s);
void WriteFabricSet(YAML::Emitter& y, const FabricSpec& f);

/// Cross-key checks (scenario-validate.cc): the topology's, before hosts are named...
void ValidateTopology(const Reader& r, const YAML::Node& topology, const Scenario& s);
/// ...and every other, once every section is read.
void ValidateScenario(const Reader& r, const YAML::Node& root, const Scenario& s);

} // namespace fabemu

#endif
