// ParseScenario: the document, --set, then each section by walking its key table.
#include "scenarios/src/scenario-keys.h"

#include "ns3/collective-schedule.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <yaml-cpp/depthguard.h>

namespace fabemu
{

namespace fs = std::filesystem;

namespace
{

std::string
JoinAnd(const std::vector<std::string>& words)
{
    if (words.size() < 2)
    {
        return words.empty() ? "" : words[0];
    }
    std::vector<std::string> head(words.begin(), words.end() - 1);
    return fmt::format("{} and {}", fmt::join(head, ", "), words.back());
}

/// The rows directly under \p parent ("" for the table's top).
template <class T>
std::vector<const Key<T>*>
Children(const std::vector<Key<T>>& keys, const std::string& parent)
{
    std::vector<const Key<T>*> out;
    for (const auto& k : keys)
    {
        const bool under = parent.empty()
                               ? k.name.find('.') == std::string::npos
                               : k.name.rfind(parent + ".", 0) == 0 &&
                                     k.name.find('.', parent.size() + 1) == std::string::npos;
        if (under)
        {
            out.push_back(&k);
        }
    }
    return out;
}

template <class T>
std::string
Word(const Key<T>& k)
{
    return k.name.substr(k.name.rfind('.') + 1);
}

/// A sweep of sizes as nccl-tests takes them (-b, -e, -f): {from, to, factor}, from up
/// by factor while it is at most to.
std::vector<uint64_t>
ReadSweep(const Reader& r, const YAML::Node& n, const std::string& what, int64_t lo, int64_t hi)
{
    for (const auto& kv : n)
    {
        const std::string key = kv.first.Scalar();
        if (key != "from" && key != "to" && key != "factor")
        {
            r.Fail(kv.first, fmt::format("{}: unknown key '{}' in a sweep; it has from, to and "
                                         "factor",
                                         what, key));
        }
    }
    for (const char* key : {"from", "to"})
    {
        if (!n[key])
        {
            r.Fail(n, fmt::format("{}: a sweep needs from and to (factor: 2 by default)", what));
        }
    }
    const uint64_t from = r.Bytes(n["from"], what + ".from", lo, hi);
    const uint64_t to = r.Bytes(n["to"], what + ".to", lo, hi);
    const uint64_t factor = n["factor"] ? r.Integer(n["factor"], what + ".factor", 2, 1024) : 2;
    if (to < from)
    {
        r.Fail(n["to"], fmt::format("{}.to ({}) is below from ({})", what, to, from));
    }
    std::vector<uint64_t> sizes;
    for (uint64_t b = from; b <= to; b *= factor)
    {
        sizes.push_back(b);
        if (b > to / factor)
        {
            break;
        }
    }
    if (sizes.size() > 64)
    {
        r.Fail(n, fmt::format("{}: the sweep has {} sizes; at most 64", what, sizes.size()));
    }
    return sizes;
}

/// One value of row \p k from node \p n.
template <class T>
KeyValue
Convert(const ReadContext& c, const Key<T>& k, const T& t, const YAML::Node& n,
        const std::string& what)
{
    const Reader& r = c.r;
    KeyValue v;
    switch (k.kind)
    {
    case KeyKind::Text:
        v.text = r.String(n, what);
        break;
    case KeyKind::Choice:
        if (k.choicesOf)
        {
            const auto [suffix, options] = k.choicesOf(t);
            v.text = r.Choice(n, what + suffix, options);
        }
        else
        {
            v.text = r.Choice(n, what, k.choices);
        }
        break;
    case KeyKind::Bool:
        v.b = r.Bool(n, what);
        break;
    case KeyKind::Integer:
        v.u = r.Integer(n, what, k.lo, k.hi);
        break;
    case KeyKind::Number:
        v.d = r.Number(n, what, k.dlo, k.dhi);
        break;
    case KeyKind::Bytes:
        if (k.sweep && n.IsMap())
        {
            v.sweep = ReadSweep(r, n, what, k.lo, k.hi);
            v.u = v.sweep.front();
            break;
        }
        v.u = r.Bytes(n, what, k.lo, k.hi);
        break;
    case KeyKind::Time:
        v.text = r.Scalar(n, what);
        v.ps = r.Duration(n, what, k.lo, k.hi);
        break;
    case KeyKind::Rate:
        v.text = r.Scalar(n, what);
        v.u = r.Rate(n, what);
        break;
    case KeyKind::Host:
        v.u = r.Host(n, what, c.hosts);
        break;
    case KeyKind::Endpoint:
        std::tie(v.u, v.text) = r.Endpoint(n, what, c.hosts);
        break;
    case KeyKind::Hosts:
        v.hosts = r.Hosts(n, what, c.hosts, k.emptyOk);
        break;
    case KeyKind::Map:
    case KeyKind::Section:
        break;
    }
    if (k.check)
    {
        if (const std::string wrong = k.check(what, v); !wrong.empty())
        {
            r.Fail(n, wrong);
        }
    }
    return v;
}

/// How a section answers a key that does not apply to its fabric type, builder or workload
/// type: null hides the key (it is then unknown).
using Refuse = std::function<void(const std::string& path, const YAML::Node& value)>;

/// Reads the map \p node, the rows under \p parent, for \p context (a fabric type, builder or
/// workload type). \p where names the map in messages, \p prefix starts each key's name.
template <class T>
void
ReadKeys(const ReadContext& c, const std::vector<Key<T>>& keys, const YAML::Node& node,
         const std::string& parent, const std::string& where, const std::string& prefix,
         const std::string& context, const Refuse& refuse, T& t)
{
    const auto rows = Children(keys, parent);
    std::vector<std::string> allowed;
    for (const Key<T>* k : rows)
    {
        if (refuse || k->AppliesTo(context))
        {
            allowed.push_back(Word(*k));
        }
    }
    c.r.CheckMap(node, where, allowed);
    for (const Key<T>* k : rows)
    {
        if (refuse && node[Word(*k)] && !k->AppliesTo(context))
        {
            refuse(prefix + k->name, node[Word(*k)]);
        }
    }
    for (const Key<T>* k : rows)
    {
        if (!refuse && !k->AppliesTo(context))
        {
            continue; // not this context's (another row of the same name may be)
        }
        if (k->begin)
        {
            k->begin(t);
        }
        const YAML::Node n = node[Word(*k)];
        if (!n)
        {
            if (k->RequiredFor(context))
            {
                c.r.Fail(node, fmt::format("{} needs '{}'", where, Word(*k)));
            }
            continue;
        }
        const std::string what = prefix + k->name;
        if (k->kind == KeyKind::Section)
        {
            k->read(c, n, t);
        }
        else if (k->kind == KeyKind::Map && n.IsScalar() && !k->shorthand.empty())
        {
            for (const auto& sub : keys)
            {
                if (sub.name == k->name + "." + k->shorthand)
                {
                    sub.set(t, Convert(c, sub, t, n, what));
                }
            }
        }
        else if (k->kind == KeyKind::Map)
        {
            ReadKeys(c, keys, n, k->name, what, prefix, context, refuse, t);
        }
        else
        {
            k->set(t, Convert(c, *k, t, n, what));
        }
    }
}

fs::path
ShippedCdf(const std::string& name)
{
    // Installed beside the scenarios; FABEMU_SCENARIO_DIR is set by the build.
    return fs::path(FABEMU_SCENARIO_DIR) / "cdf" / (name + ".txt");
}

/// {hN} in a command's line becomes hN's address.
void
ExpandRun(const Reader& r, const YAML::Node& item, const std::string& where, uint32_t hosts,
          WorkloadSpec& wl)
{
    static const std::regex ref(R"(\{([^}]*)\})");
    std::string expanded;
    auto begin = std::sregex_iterator(wl.run.begin(), wl.run.end(), ref);
    size_t last = 0;
    for (auto it = begin; it != std::sregex_iterator(); ++it)
    {
        const std::string inner = (*it)[1];
        static const std::regex hostRe("^h([0-9]{1,6})$");
        std::smatch hm;
        if (!std::regex_match(inner, hm, hostRe) || std::stoul(hm[1]) >= hosts)
        {
            r.Fail(item["run"],
                   fmt::format("{}.run: '{{{}}}' names no host of the topology (h0..h{})", where,
                               inner, hosts - 1));
        }
        expanded += wl.run.substr(last, it->position() - last);
        expanded += Scenario::HostAddress(static_cast<uint32_t>(std::stoul(hm[1])));
        last = it->position() + it->length();
    }
    wl.run = expanded + wl.run.substr(last);
    if (wl.run.find_first_not_of(' ') == std::string::npos)
    {
        r.Fail(item["run"], where + ".run is empty");
    }
}

/// A collective's defaults (op all-reduce, job jobN) and the refusals that need no
/// topology: too few ranks, bytes that do not cut into equal pieces, an algorithm the
/// operation or the rank count does not allow. (The ranks' reader refuses a rank twice.)
void
ResolveCollective(const Reader& r, const YAML::Node& item, const std::string& where,
                  const Scenario& s, WorkloadSpec& wl)
{
    if (!item["op"])
    {
        wl.op = "all-reduce";
    }
    if (wl.job.empty())
    {
        const auto before = std::count_if(s.workloads.begin(), s.workloads.end(),
                                          [](const auto& o) { return o.type == "collective"; });
        wl.job = fmt::format("job{}", before);
    }
    for (const auto& o : s.workloads)
    {
        if (o.type == "collective" && o.job == wl.job)
        {
            r.Fail(item["job"] ? item["job"] : item,
                   fmt::format("{}: job '{}' names another collective already", where, wl.job));
        }
    }
    std::vector<std::string> names;
    for (size_t i = 0; i < wl.hosts.size(); ++i)
    {
        names.push_back(wl.RankName(i));
    }
    for (const auto& [rank, delay] : wl.stragglers)
    {
        const auto it = std::find(names.begin(), names.end(), rank);
        if (it == names.end())
        {
            r.Fail(item["stragglers"][rank],
                   fmt::format("{}.stragglers: '{}' is not one of the ranks ({})", where, rank,
                               fmt::join(names, ", ")));
        }
        wl.rankDelayPs[static_cast<uint32_t>(it - names.begin())] = delay.first;
    }
    ns3::CollectiveOp op{};
    ns3::ParseCollectiveOp(wl.op, op);
    ns3::CollectiveAlgorithm algorithm = ns3::CollectiveDefaultAlgorithm(op);
    if (wl.algorithm != "auto")
    {
        ns3::ParseCollectiveAlgorithm(wl.algorithm, algorithm);
    }
    ns3::CollectiveLayout layout;
    layout.servers = wl.RanksByServer();
    if ((wl.computePs > 0 || wl.buckets > 1) && !wl.sizes.empty())
    {
        r.Fail(item["bytes"], fmt::format("{}: a training step (compute, buckets) has one size; "
                                          "give bytes one value, not a sweep",
                                          where));
    }
    if (uint64_t{wl.iterations} * wl.buckets > 100000)
    {
        r.Fail(item["buckets"] ? item["buckets"] : item["iterations"],
               fmt::format("{}: {} iterations of {} buckets are {} collectives; a job runs at most "
                           "100000",
                           where, wl.iterations, wl.buckets, uint64_t{wl.iterations} * wl.buckets));
    }
    if (wl.bytes % wl.buckets != 0)
    {
        r.Fail(item["buckets"], fmt::format("{}: {} bytes do not cut into {} equal buckets (they "
                                            "are not padded)",
                                            where, wl.bytes, wl.buckets));
    }
    try
    {
        for (uint64_t bytes : wl.sizes.empty() ? std::vector<uint64_t>{wl.bytes} : wl.sizes)
        {
            ns3::CheckCollective(op, algorithm, static_cast<uint32_t>(wl.hosts.size()),
                                 bytes / wl.buckets, layout);
        }
    }
    catch (const std::invalid_argument& e)
    {
        const std::string why = e.what();
        const char* culprit =
            why.find("bytes") != std::string::npos ? (wl.buckets > 1 ? "buckets" : "bytes")
            : why.find("ranks") != std::string::npos && !item["algorithm"] ? "ranks"
                                                                           : "algorithm";
        r.Fail(item[culprit] ? item[culprit] : item,
               fmt::format("{}: {}{}", where,
                           wl.buckets > 1
                               ? fmt::format("a bucket of {} bytes: ", wl.bytes / wl.buckets)
                               : "",
                           why));
    }
}

/// One item of workloads:, its defaults resolved.
WorkloadSpec
ReadWorkload(const ReadContext& c, const YAML::Node& item, const Scenario& s)
{
    std::vector<std::string> typeNames;
    for (const auto& t : WorkloadKinds())
    {
        typeNames.push_back(t.name);
    }
    if (!item.IsMap() || !item["type"])
    {
        c.r.Fail(item,
                 fmt::format("a workload is a map with a type ({})", fmt::join(typeNames, ", ")));
    }
    WorkloadSpec wl;
    wl.mark = Reader::MarkOf(item);
    wl.type = c.r.Choice(item["type"], "workload type", typeNames);
    const std::string where = "workload '" + wl.type + "'";
    ReadKeys(c, WorkloadKeys(), item, "", where, where + ".", wl.type, nullptr, wl);
    if (wl.type == "memory")
    {
        wl.src = wl.on; // a flow from the CPU to its target, as results list flows
        wl.srcDevice = wl.onDevice;
        return wl;
    }
    if (wl.type == "command" || wl.type == "launch")
    {
        ExpandRun(c.r, item, where, c.hosts, wl);
        return wl;
    }
    if (wl.type == "incast" &&
        std::find(wl.hosts.begin(), wl.hosts.end(), wl.dst) != wl.hosts.end())
    {
        if (!item["srcs"].IsScalar())
        {
            c.r.Fail(item["srcs"], fmt::format("{}: h{} is both dst and a src", where, wl.dst));
        }
        wl.hosts.erase(std::find(wl.hosts.begin(), wl.hosts.end(), wl.dst)); // all but dst
    }
    if (wl.type != "bulk" && wl.type != "incast" && wl.type != "dma" && wl.type != "copy" &&
        !item["hosts"] && !item["ranks"])
    {
        wl.hosts = c.r.Hosts(YAML::Node("all"), where + ".hosts", c.hosts);
    }
    if (wl.type == "collective")
    {
        ResolveCollective(c.r, item, where, s, wl);
    }
    else if (!wl.sizes.empty())
    {
        c.r.Fail(item["bytes"], where + ".bytes: a sweep of sizes is for collective workloads; "
                                        "give one size");
    }
    if (wl.type == "poisson")
    {
        fs::path p = ShippedCdf(wl.cdf);
        if (!fs::exists(p))
        {
            p = fs::path(c.r.File()).parent_path() / wl.cdf;
        }
        if (!fs::exists(p))
        {
            c.r.Fail(item["cdf"], fmt::format("{}.cdf: '{}' is neither a shipped CDF (websearch, "
                                              "hadoop) nor a file",
                                              where, wl.cdf));
        }
        wl.cdfPath = p.string();
        if (!item["stop"])
        {
            wl.stopPs = s.durationPs;
        }
    }
    return wl;
}

/// The place of every key under \p node, by dotted path (list items by index).
void
RecordMarks(const YAML::Node& node, const std::string& prefix,
            std::map<std::string, SourceMark>& marks)
{
    auto child = [&prefix](const std::string& key) {
        return prefix.empty() ? key : prefix + "." + key;
    };
    if (node.IsMap())
    {
        for (const auto& kv : node)
        {
            const std::string key = child(kv.first.Scalar());
            // A value given by --set has no place in the file, even under a key that has.
            const bool overridden = kv.second.IsScalar() && Reader::MarkOf(kv.second).line == 0;
            marks[key] = overridden ? SourceMark{} : Reader::MarkOf(kv.first);
            RecordMarks(kv.second, key, marks);
        }
    }
    else if (node.IsSequence())
    {
        for (size_t i = 0; i < node.size(); ++i)
        {
            const std::string key = child(std::to_string(i));
            marks[key] = Reader::MarkOf(node[i]);
            RecordMarks(node[i], key, marks);
        }
    }
}

/// A --set value: text, or a flow list/map ("[h0, h1]") made of new nodes, which have no place
/// in the file.
YAML::Node
OverrideValue(const std::string& value)
{
    if (value.empty() || (value[0] != '[' && value[0] != '{'))
    {
        return YAML::Node(value);
    }
    std::function<YAML::Node(const YAML::Node&)> copy = [&copy](const YAML::Node& n) {
        if (n.IsSequence())
        {
            YAML::Node out(YAML::NodeType::Sequence);
            for (const auto& item : n)
            {
                out.push_back(copy(item));
            }
            return out;
        }
        if (n.IsMap())
        {
            YAML::Node out(YAML::NodeType::Map);
            for (const auto& kv : n)
            {
                out[kv.first.Scalar()] = copy(kv.second);
            }
            return out;
        }
        return YAML::Node(n.Scalar());
    };
    try
    {
        return copy(YAML::Load(value));
    }
    catch (const YAML::Exception&)
    {
        return YAML::Node(value);
    }
}

/// Applies one --set key.path=value to the document; ns3:: keys go under fabric.set, expect.M
/// keys are metrics (with their dots), a number is an item of a list (workloads.0.bytes).
void
ApplyOverride(YAML::Node root, const std::string& kv, const std::string& file)
{
    const auto eq = kv.find('=');
    if (eq == std::string::npos || eq == 0)
    {
        throw ScenarioError(file, {}, fmt::format("--set '{}' is not KEY=VALUE", kv));
    }
    const std::string key = kv.substr(0, eq);
    const std::string value = kv.substr(eq + 1);
    if (key.rfind("ns3::", 0) == 0)
    {
        if ((root["fabric"] && !root["fabric"].IsMap()) ||
            (root["fabric"]["set"] && !root["fabric"]["set"].IsMap()))
        {
            throw ScenarioError(file, {},
                                fmt::format("--set {}: the file's fabric (and its set) must be "
                                            "a map for an ns-3 attribute to go in it",
                                            key));
        }
        root["fabric"]["set"][key] = value;
        return;
    }
    std::vector<std::string> parts;
    std::stringstream ss(key);
    for (std::string p; std::getline(ss, p, '.');)
    {
        if (p.empty())
        {
            throw ScenarioError(file, {}, fmt::format("--set '{}': empty part in the key", kv));
        }
        parts.push_back(p);
    }
    if (parts.size() > 2 && parts[0] == "expect")
    {
        parts = {"expect", key.substr(std::string("expect.").size())};
    }
    // yaml-cpp nodes are handles: walk down, making maps where the file has none.
    std::vector<YAML::Node> chain{root};
    auto step = [&](YAML::Node at, const std::string& part) -> YAML::Node {
        if (at.IsSequence())
        {
            if (part.find_first_not_of("0123456789") != std::string::npos || part.size() > 6 ||
                std::stoul(part) >= at.size())
            {
                throw ScenarioError(file, {},
                                    fmt::format("--set '{}': the list has no item '{}' (0..{})", kv,
                                                part, at.size() - 1));
            }
            return at[std::stoul(part)];
        }
        return at[part];
    };
    for (size_t i = 0; i + 1 < parts.size(); ++i)
    {
        YAML::Node next = step(chain.back(), parts[i]);
        if (next.IsDefined() && !next.IsMap() && !next.IsSequence())
        {
            throw ScenarioError(
                file, {},
                fmt::format("--set '{}': '{}' is not a map in the scenario", kv, parts[i]));
        }
        chain.push_back(next);
    }
    // A new node, so that a message about it does not point at the file's line.
    if (chain.back().IsSequence())
    {
        YAML::Node item = step(chain.back(), parts.back());
        item = OverrideValue(value);
        return;
    }
    chain.back().remove(parts.back());
    chain.back()[parts.back()] = OverrideValue(value);
}

YAML::Node
LoadDocument(const std::string& text, const std::string& file,
             const std::vector<std::string>& overrides)
{
    YAML::Node root;
    try
    {
        root = YAML::Load(text);
    }
    catch (const YAML::DeepRecursion& e)
    {
        // yaml-cpp says "bad file" here: say what it is.
        throw ScenarioError(file, {e.mark.line + 1, e.mark.column + 1},
                            fmt::format("not valid YAML here: nested too deep (the YAML reader "
                                        "stops at {} levels)",
                                        e.depth()));
    }
    catch (const YAML::ParserException& e)
    {
        throw ScenarioError(file, {e.mark.line + 1, e.mark.column + 1}, "not valid YAML: " + e.msg);
    }
    const Reader r(file);
    if (!root.IsDefined() || root.IsNull())
    {
        r.Fail(SourceMark{1, 1}, "the scenario is empty; it needs at least 'name:'");
    }
    if (!root.IsMap())
    {
        r.Fail(root, "a scenario is a map of keys (name:, fabric:, topology:, ...)");
    }
    for (const auto& kv : overrides)
    {
        ApplyOverride(root, kv, file);
    }
    return root;
}

} // namespace

// ---------------------------------------------------------------- the sections

void
ReadFabric(const ReadContext& c, const YAML::Node& f, Scenario& s)
{
    auto& fab = s.fabric;
    c.r.CheckMap(f, "fabric", [] {
        std::vector<std::string> words;
        for (const auto* k : Children(FabricKeys(), ""))
        {
            words.push_back(Word(*k));
        }
        return words;
    }());
    if (f["type"])
    {
        fab.type = c.r.Choice(f["type"], "fabric.type", FabricKeys().front().choices);
        FabricTypeOf(fab.type).defaults(fab);
    }
    const auto refuse = [&c, &fab](const std::string& path, const YAML::Node& value) {
        const auto& keys = FabricKeys();
        const auto row = std::find_if(keys.begin(), keys.end(), [&path](const auto& k) {
            return "fabric." + k.name == path;
        });
        c.r.Fail(value, fmt::format("{} applies to {}{}", path, JoinAnd(row->only),
                                    row->refusal ? *row->refusal : FabricTypeOf(fab.type).refusal));
    };
    ReadKeys(c, FabricKeys(), f, "", "fabric", "fabric.", fab.type, refuse, fab);
}

void
ReadFabricSet(const ReadContext& c, const YAML::Node& set, FabricSpec& fab)
{
    if (!set.IsMap())
    {
        c.r.Fail(set, "fabric.set must be a map of ns3::Class::Attribute: value");
    }
    for (const auto& kv : set)
    {
        const std::string name = kv.first.Scalar();
        static const std::regex attr("^ns3::[A-Za-z0-9_]+::[A-Za-z0-9_]+$");
        if (!std::regex_match(name, attr))
        {
            c.r.Fail(kv.first, fmt::format("fabric.set: '{}' is not ns3::Class::Attribute", name));
        }
        fab.set.push_back({name, c.r.Scalar(kv.second, name), Reader::MarkOf(kv.first)});
    }
}

/// A server preset's NIC rate is its host links' rate (and what inherits it: uplinks, a
/// dumbbell's bottleneck) unless the file gives one.
void
ApplyNicRate(const YAML::Node& t, TopologyYaml& top)
{
    const auto given = [&t](const char* link) { return t[link] && t[link]["rate"]; };
    if (top.node.nicRate.empty() || given("link"))
    {
        return;
    }
    const uint64_t before = top.link.bitsPerSecond;
    uint64_t bps = 0;
    ParseRate(top.node.nicRate, bps);
    for (const auto& [name, link] : {std::pair<const char*, LinkSpec*>{"link", &top.link},
                                     {"uplink", &top.uplink},
                                     {"bottleneck", &top.bottleneck}})
    {
        if (link == &top.link || (!given(name) && link->bitsPerSecond == before))
        {
            link->rate = top.node.nicRate;
            link->bitsPerSecond = bps;
        }
    }
    if (!given("spine_link")) // = uplink, whichever rate that has now
    {
        top.spineLink.rate = top.uplink.rate;
        top.spineLink.bitsPerSecond = top.uplink.bitsPerSecond;
    }
}

void
ReadTopology(const ReadContext& c, const YAML::Node& t, Scenario& s)
{
    auto& top = s.topology;
    c.r.CheckMap(t, "topology", [] {
        std::vector<std::string> words;
        for (const auto* k : Children(TopologyKeys(), ""))
        {
            words.push_back(Word(*k));
        }
        return words;
    }());
    if (t["builder"])
    {
        top.builder = c.r.Choice(t["builder"], "topology.builder", TopologyKeys().front().choices);
    }
    const auto refuse = [&c, &top](const std::string& path, const YAML::Node& value) {
        std::vector<std::string> takes;
        for (const auto* k : Children(TopologyKeys(), ""))
        {
            if (!k->only.empty() && k->AppliesTo(top.builder))
            {
                takes.push_back(Word(*k));
            }
        }
        c.r.Fail(value, fmt::format("{} does not apply to the '{}' builder{}", path, top.builder,
                                    takes.empty()
                                        ? ""
                                        : fmt::format(" (it takes {})", fmt::join(takes, ", "))));
    };
    ReadKeys(c, TopologyKeys(), t, "", "topology", "topology.", top.builder, refuse, top);
    ApplyNicRate(t, top);
    ValidateTopology(c.r, t, s);
}

void
ReadEndpoints(const ReadContext& outer, const YAML::Node& e, Scenario& s)
{
    const ReadContext c{outer.r, s.topology.HostCount()};
    if (!e.IsMap())
    {
        c.r.Fail(e, "endpoints must be a map such as h0: {kind: vm, device: rxe}");
    }
    std::set<uint32_t> seen;
    for (const auto& kv : e)
    {
        EndpointSpec ep;
        ep.index = c.r.Host(kv.first, "endpoints", c.hosts);
        ep.host = kv.first.Scalar();
        if (!seen.insert(ep.index).second)
        {
            c.r.Fail(kv.first, fmt::format("endpoint {} given twice", ep.host));
        }
        const std::string where = "endpoints." + ep.host;
        ReadKeys(c, EndpointKeys(), kv.second, "", where, where + ".", "", nullptr, ep);
        if (s.fabric.type == "iwarp" && !kv.second["device"])
        {
            ep.device = "siw"; // the default device on iwarp
        }
        s.endpoints.push_back(ep);
    }
    std::sort(s.endpoints.begin(), s.endpoints.end(),
              [](const auto& a, const auto& b) { return a.index < b.index; });
}

void
ReadWorkloads(const ReadContext& outer, const YAML::Node& w, Scenario& s)
{
    const ReadContext c{outer.r, s.topology.HostCount()};
    if (!w.IsSequence())
    {
        c.r.Fail(w, "workloads must be a list, each item {type: ..., ...}");
    }
    for (const auto& item : w)
    {
        s.workloads.push_back(ReadWorkload(c, item, s));
    }
}

void
ReadFaults(const ReadContext& outer, const YAML::Node& n, Scenario& s)
{
    const ReadContext c{outer.r, s.topology.HostCount()};
    if (!n.IsSequence())
    {
        c.r.Fail(n, "faults must be a list, each item {at, link, rate, ber or down} or {at, "
                    "host, delay, pause_storm or crash}");
    }
    for (size_t i = 0; i < n.size(); ++i)
    {
        const YAML::Node item = n[i];
        if (!item.IsMap())
        {
            c.r.Fail(item, "a fault is a map such as {at: 1ms, link: s0-s1, rate: 10Gbps}");
        }
        FaultSpec f;
        f.mark = Reader::MarkOf(item);
        const std::string where = fmt::format("faults.{}", i);
        ReadKeys(c, FaultKeys(), item, "", where, where + ".", "fault", nullptr, f);
        if (f.atPs > s.durationPs)
        {
            c.r.Fail(item["at"], fmt::format("{}.at is after the run ends ({} > duration {})",
                                             where, f.at, s.duration));
        }
        if (item["host"].IsDefined())
        {
            for (const char* key : {"link", "rate", "ber", "down"})
            {
                if (item[key].IsDefined())
                {
                    c.r.Fail(item[key],
                             fmt::format("{}: a straggler (host, delay) has no {}; a link's "
                                         "fault is a separate item",
                                         where, key));
                }
            }
            if (item["delay"].IsDefined() + item["pause_storm"].IsDefined() +
                    item["crash"].IsDefined() !=
                1)
            {
                c.r.Fail(item, where + ": a host's fault needs one of delay (a straggler: how "
                                       "late each message it starts leaves), pause_storm or "
                                       "crash");
            }
            s.faults.push_back(f);
            continue;
        }
        if (!item["link"].IsDefined())
        {
            c.r.Fail(item, where + " needs link (and rate, ber or down), or host (and delay, "
                                   "pause_storm or crash)");
        }
        for (const char* key : {"delay", "pause_storm", "crash"})
        {
            if (item[key].IsDefined())
            {
                c.r.Fail(item[key], fmt::format("{}: {} belongs to a host's fault (host), not a "
                                                "link's",
                                                where, key));
            }
        }
        if (item["rate"].IsDefined() + item["ber"].IsDefined() + item["down"].IsDefined() != 1)
        {
            c.r.Fail(item, where + " needs one of rate (a degraded link), ber (bit errors) or "
                                   "down (the link down this long)");
        }
        s.faults.push_back(f);
    }
}

void
ReadRanks(const ReadContext& c, const YAML::Node& n, WorkloadSpec& w)
{
    const std::string what = "workload 'collective'.ranks";
    if (n.IsScalar() && n.Scalar() == "all")
    {
        w.hosts = c.r.Hosts(n, what, c.hosts);
        return;
    }
    if (!n.IsSequence())
    {
        c.r.Fail(n, what + " must be a list of hosts (h1) or GPUs (h0.gpu3), or 'all'");
    }
    w.hosts.clear();
    w.rankDevices.clear();
    std::set<std::pair<uint32_t, std::string>> seen;
    for (const auto& item : n)
    {
        const auto [host, device] = c.r.Endpoint(item, what, c.hosts);
        if (!seen.insert({host, device}).second)
        {
            c.r.Fail(item, fmt::format("{} lists {} twice", what, item.Scalar()));
        }
        if (!device.empty() && device.rfind("gpu", 0) != 0)
        {
            c.r.Fail(item, fmt::format("{}: a rank is a host or a GPU, not '{}'", what,
                                       Shown(item.Scalar())));
        }
        if (!w.hosts.empty() && device.empty() != w.rankDevices.empty())
        {
            c.r.Fail(item, fmt::format("{}: the ranks are all hosts or all GPUs; '{}' mixes them",
                                       what, item.Scalar()));
        }
        w.hosts.push_back(host);
        if (!device.empty())
        {
            w.rankDevices.push_back(device);
        }
    }
}

void
ReadLinkOverrides(const ReadContext& c, const YAML::Node& n, TopologyYaml& t)
{
    const std::string what = "topology.links";
    if (!n.IsMap())
    {
        c.r.Fail(n, what + " must be a map of link: {rate, delay}, such as {s0-s1: {rate: "
                           "50Gbps}}");
    }
    t.overrides.clear();
    for (const auto& kv : n)
    {
        TopologyYaml::LinkOverride o;
        o.name = c.r.Scalar(kv.first, what);
        o.mark = Reader::MarkOf(kv.first);
        const std::string where = what + "." + o.name;
        c.r.CheckMap(kv.second, where, {"rate", "delay"});
        if (!kv.second["rate"] && !kv.second["delay"])
        {
            c.r.Fail(kv.second, where + " changes nothing: give it a rate, a delay or both");
        }
        if (kv.second["rate"])
        {
            o.bitsPerSecond = c.r.Rate(kv.second["rate"], where + ".rate");
            o.rate = kv.second["rate"].Scalar();
        }
        if (kv.second["delay"])
        {
            o.delayPs =
                c.r.Duration(kv.second["delay"], where + ".delay", 0, int64_t{1'000'000'000'000});
            o.delay = kv.second["delay"].Scalar();
        }
        t.overrides.push_back(std::move(o));
    }
}

void
ReadPartitionPins(const ReadContext& c, const YAML::Node& n, TopologyYaml& t)
{
    const std::string what = "topology.partition";
    if (!n.IsMap())
    {
        c.r.Fail(n, what + " must be a map of switch: rank, such as {s0: 1, s4: 0}");
    }
    t.partition.clear();
    for (const auto& kv : n)
    {
        TopologyYaml::PartitionPin p;
        p.name = c.r.Scalar(kv.first, what);
        p.mark = Reader::MarkOf(kv.first);
        p.rank = static_cast<uint32_t>(c.r.Integer(kv.second, what + "." + p.name, 0, 4095));
        t.partition.push_back(std::move(p));
    }
}

void
ReadStragglers(const ReadContext& c, const YAML::Node& n, WorkloadSpec& w)
{
    const std::string what = "workload 'collective'.stragglers";
    if (!n.IsMap())
    {
        c.r.Fail(n, what + " must be a map of rank: time, such as {h3: 2ms}");
    }
    for (const auto& kv : n)
    {
        const std::string rank = kv.first.Scalar();
        w.stragglers[rank] = {
            c.r.Duration(kv.second, what + "." + rank, 0, int64_t{3600} * 1'000'000'000'000),
            kv.second.Scalar()};
    }
}

void
ReadRecord(const ReadContext& outer, const YAML::Node& rec, Scenario& s)
{
    const ReadContext c{outer.r, s.topology.HostCount()};
    ReadKeys(c, RecordKeys(), rec, "", "record", "record.", "", nullptr, s.record);
}

void
ReadExpect(const ReadContext& c, const YAML::Node& ex, Scenario& s)
{
    if (!ex.IsMap())
    {
        c.r.Fail(ex, "expect must be a map of metric: want, such as totals.drops: 0");
    }
    for (const auto& kv : ex)
    {
        s.expect.push_back(ParseExpectation(c.r, kv.first, kv.second));
    }
}

// ---------------------------------------------------------------- the scenario

Scenario
ParseScenario(const std::string& text, const std::string& file,
              const std::vector<std::string>& overrides)
{
    const YAML::Node root = LoadDocument(text, file, overrides);
    const Reader r(file);
    ReadContext c{r, 0};
    Scenario s;
    s.file = file;
    RecordMarks(root, "", s.marks);
    if (root.IsMap() && !root["name"])
    {
        // The top level's other keys first, so that a misspelt one is named.
        std::vector<std::string> words;
        for (const auto& k : ScenarioKeys())
        {
            words.push_back(k.name);
        }
        r.CheckMap(root, "the scenario", words);
        r.Fail(SourceMark{1, 1}, "'name:' is required");
    }
    // Each section in table order (fabric, topology, then what names hosts).
    ReadKeys(c, ScenarioKeys(), root, "", "the scenario", "", "", nullptr, s);
    ValidateScenario(r, root, s);
    return s;
}

} // namespace fabemu
