#include "scenario.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

namespace fabemu
{

namespace fs = std::filesystem;

ScenarioError::ScenarioError(const std::string& file, SourceMark mark, const std::string& what)
    : std::runtime_error(mark.line > 0
                             ? fmt::format("{}:{}:{}: {}", file, mark.line, mark.column, what)
                             : fmt::format("{}: {}", file, what)),
      m_reason(what),
      m_mark(mark)
{
}

uint32_t
TopologyYaml::HostCount() const
{
    if (builder == "pair")
    {
        return 2;
    }
    if (builder == "leaf-spine" || builder == "ring")
    {
        return leaves * hostsPerLeaf;
    }
    if (builder == "fat-tree")
    {
        return k * k * k / 4;
    }
    return hosts;
}

std::string
Scenario::HostAddress(uint32_t host)
{
    // RoceFabricHelper numbers hosts 10.0.0.1 up, 10.0.1.0 after 10.0.0.255.
    const uint32_t ip = 0x0a000001 + host;
    return fmt::format("{}.{}.{}.{}", ip >> 24, (ip >> 16) & 0xff, (ip >> 8) & 0xff, ip & 0xff);
}

SourceMark
Scenario::MarkOf(const std::string& key) const
{
    for (std::string k = key;;)
    {
        if (const auto it = marks.find(k); it != marks.end())
        {
            return it->second;
        }
        const auto dot = k.rfind('.');
        if (dot == std::string::npos)
        {
            return {};
        }
        k.resize(dot);
    }
}

bool
Expectation::Holds(double v) const
{
    switch (op)
    {
    case Op::Eq:
        return std::fabs(v - a) <= 1e-12 * std::max(1.0, std::fabs(a));
    case Op::Gt:
        return v > a;
    case Op::Ge:
        return v >= a;
    case Op::Lt:
        return v < a;
    case Op::Le:
        return v <= a;
    case Op::Range:
        return v >= a && v <= b;
    }
    return false;
}

// ---------------------------------------------------------------- units

namespace
{

/// "<number><unit>" with the number possibly fractional; false when it is not that shape.
bool
SplitQuantity(const std::string& text, double& number, std::string& unit)
{
    static const std::regex re(R"(^\s*([0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?)\s*([A-Za-z]*)\s*$)");
    std::smatch m;
    if (!std::regex_match(text, m, re))
    {
        return false;
    }
    number = std::stod(m[1]);
    unit = m[2];
    return std::isfinite(number);
}

} // namespace

namespace
{

/// "<number><unit>" scaled by the unit's factor in \p scale; false for an unknown
/// unit or a value above \p max.
bool
Scaled(const std::string& text, const std::map<std::string, double>& scale, double max, double& v)
{
    double n = 0;
    std::string unit;
    if (!SplitQuantity(text, n, unit))
    {
        return false;
    }
    const auto it = scale.find(unit);
    if (it == scale.end() || n * it->second > max)
    {
        return false;
    }
    v = n * it->second;
    return true;
}

} // namespace

bool
ParseBytes(const std::string& text, uint64_t& bytes)
{
    static const std::map<std::string, double> scale{
        {"", 1},       {"B", 1},          {"KB", 1024.0},       {"KiB", 1024.0},
        {"MB", 1 << 20}, {"MiB", 1 << 20}, {"GB", double(1 << 30)}, {"GiB", double(1 << 30)}};
    double v = 0;
    if (!Scaled(text, scale, 1.8e19, v) || v != std::floor(v))
    {
        return false; // not a size, or a fraction of a byte
    }
    bytes = static_cast<uint64_t>(v);
    return true;
}

bool
ParseTime(const std::string& text, int64_t& ps)
{
    static const std::map<std::string, double> scale{
        {"ps", 1}, {"ns", 1e3}, {"us", 1e6}, {"ms", 1e9}, {"s", 1e12}, {"min", 60e12}};
    double v = 0;
    if (!Scaled(text, scale, 9e18, v))
    {
        return false;
    }
    ps = std::llround(v);
    return true;
}

bool
ParseRate(const std::string& text, uint64_t& bps)
{
    static const std::map<std::string, double> scale{
        {"bps", 1}, {"Kbps", 1e3}, {"kbps", 1e3}, {"Mbps", 1e6}, {"Gbps", 1e9}, {"Tbps", 1e12}};
    double v = 0;
    if (!Scaled(text, scale, 1.8e19, v) || v < 1)
    {
        return false;
    }
    bps = static_cast<uint64_t>(std::llround(v));
    return true;
}

std::string
Closest(const std::string& word, const std::vector<std::string>& options)
{
    auto distance = [](const std::string& a, const std::string& b) {
        std::vector<size_t> row(b.size() + 1);
        for (size_t j = 0; j <= b.size(); ++j)
        {
            row[j] = j;
        }
        for (size_t i = 1; i <= a.size(); ++i)
        {
            size_t diag = row[0];
            row[0] = i;
            for (size_t j = 1; j <= b.size(); ++j)
            {
                const size_t up = row[j];
                const bool same = std::tolower(a[i - 1]) == std::tolower(b[j - 1]);
                row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (same ? 0 : 1)});
                diag = up;
            }
        }
        return row[b.size()];
    };
    std::string best;
    size_t bestD = 4;
    for (const auto& o : options)
    {
        const size_t d = distance(word, o);
        if (d < bestD)
        {
            bestD = d;
            best = o;
        }
    }
    return best;
}

// ---------------------------------------------------------------- documented keys

const std::vector<KeyHelp>&
Keys()
{
    static const std::vector<KeyHelp> keys{
        {"name", "string", "(required)", "Names the scenario; letters, digits, '-', '_'"},
        {"description", "string", "\"\"", "One line for humans"},
        {"seed", "integer", "1", "Random seed; the same file and seed give the same results"},
        {"duration", "time", "10ms", "Simulated time; a run ends earlier when every flow is done. "
                                     "With VM endpoints: the longest the commands may take"},
        {"fabric.type", "roce|infiniband|iwarp", "roce", "The fabric model (infiniband and iwarp: simulation only for now)"},
        {"fabric.mtu", "256|512|1024|2048|4096", "1024", "RDMA path MTU, bytes of payload (iwarp: IP MTU 1500 up "
                                                         "to 1024, 4200 for 2048, 9000 for 4096)"},
        {"fabric.pfc", "bool", "true", "roce: PFC on the lossless priority (3)"},
        {"fabric.ecn.enabled", "bool", "true", "roce, iwarp: RED/ECN marking on switch egress queues"},
        {"fabric.ecn.kmin", "bytes", "5KB (iwarp: 100KB)", "roce: queue depth where marking starts; "
                                                           "iwarp: DCTCP's K, every packet above it is marked"},
        {"fabric.ecn.kmax", "bytes", "200KB", "roce: queue depth where the probability reaches pmax"},
        {"fabric.ecn.pmax", "0..1", "0.01", "roce: marking probability at kmax"},
        {"fabric.cc", "dcqcn|ibcc|dctcp|newreno|cubic|none", "dcqcn (infiniband: none, iwarp: dctcp)",
         "Congestion control (roce: dcqcn | none; infiniband: ibcc | none; iwarp: TCP's, dctcp | newreno | cubic)"},
        {"fabric.dcqcn", "paper|nvidia|hpcc", "paper", "roce: DCQCN variant and parameters (docs/fidelity.md)"},
        {"fabric.buffer", "bytes", "12MB", "roce: packet buffer per switch; iwarp: split evenly among "
                                                   "each switch's ports (drop-tail beyond)"},
        {"fabric.routing", "minhop|updown", "minhop", "infiniband: the subnet manager's routing; updown "
                                                      "is deadlock-free on rings and tori"},
        {"fabric.lmc", "0..7", "0", "infiniband: LID Mask Control; 2^lmc LIDs (paths) per host, "
                                   "connections take them in turn"},
        {"fabric.set", "map", "{}", "Any ns-3 attribute default by full name, e.g. "
                                    "ns3::SwitchMmu::Alpha: 0.5 (applied last)"},
        {"topology.builder", "pair|star|dumbbell|leaf-spine|fat-tree|ring", "star", "The shape"},
        {"topology.hosts", "integer", "2", "star, dumbbell: number of hosts (h0..)"},
        {"topology.leaves", "integer", "2", "leaf-spine: leaf switches; ring: switches in the ring (3..)"},
        {"topology.spines", "integer", "2", "leaf-spine: spine switches"},
        {"topology.hosts_per_leaf", "integer", "2", "leaf-spine, ring: hosts on each leaf (ring switch)"},
        {"topology.k", "even integer", "4", "fat-tree: k (k^3/4 hosts)"},
        {"topology.link", "{rate, delay}", "{100Gbps, 1us}", "Host links"},
        {"topology.uplink", "{rate, delay}", "= link", "Switch-to-switch links"},
        {"topology.bottleneck", "{rate, delay}", "= link", "dumbbell: the middle link"},
        {"endpoints.hN", "{kind: vm|netns, device: rxe|siw|none}", "(none)",
         "Hosts that are real: QEMU VMs, or network namespaces where the host kernel gives "
         "namespaces rxe/siw (device none: plain IP); hosts not listed are simulated"},
        {"workloads", "list", "[]", "What the hosts do; see the workload types"},
        {"expect", "map metric: want", "{}", "Checked after the run; want is a number, "
                                            "\">0\", \">=x\", \"<x\", \"<=x\" or \"a..b\"; any miss "
                                            "exits 3"},
        {"record.pcap", "list of hosts", "[]", "Hosts whose NIC port is captured to hN.pcap"},
        {"record.queue_interval", "time", "10us", "Queue depth sampling period"},
        {"record.rate_interval", "time", "10us", "Flow throughput sampling period"},
        {"lag_threshold", "time", "1ms", "Emulation: lag above which timing is not faithful"},
        {"scheduling", "shared|realtime", "shared",
         "Emulation: the simulation thread at nice -10 beside the VMs (shared), or SCHED_FIFO, "
         "preempting them at once (realtime: lower lag, less VM throughput on a busy host)"},
    };
    return keys;
}

const std::vector<KeyHelp>&
WorkloadTypes()
{
    static const std::vector<KeyHelp> types{
        {"bulk", "src, dst, bytes, start, op, sl", "", "One flow from src to dst (sl: IB service level)"},
        {"incast", "dst, srcs, bytes, start, op, sl", "", "Every src sends bytes to dst at once"},
        {"permutation", "hosts, bytes, start, op, sl", "",
         "Each host sends to one other, each receiving from one (random)"},
        {"all-to-all", "hosts, bytes, start, op, sl", "", "Every host sends bytes to every other"},
        {"poisson", "hosts, load, cdf, start, stop, op, sl", "",
         "Poisson arrivals loading each host link to load (0..1), sizes from cdf "
         "(websearch, hadoop or a file)"},
        {"command", "on, run, background, after, timeout", "",
         "A command run inside a VM endpoint through the guest agent; {hN} expands to hN's "
         "address; background: do not wait for it before the next"},
    };
    return types;
}

// ---------------------------------------------------------------- the reader

namespace
{

class Reader
{
  public:
    explicit Reader(std::string file)
        : m_file(std::move(file))
    {
    }

    [[noreturn]] void Fail(const YAML::Node& at, const std::string& what) const
    {
        throw ScenarioError(m_file, MarkOf(at), what);
    }
    [[noreturn]] void Fail(SourceMark at, const std::string& what) const
    {
        throw ScenarioError(m_file, at, what);
    }
    static SourceMark MarkOf(const YAML::Node& n)
    {
        const YAML::Mark m = n.Mark();
        if (m.line < 0)
        {
            return {}; // made by --set
        }
        return {m.line + 1, m.column + 1};
    }

    /// \p node must be a map whose keys are among \p allowed (no duplicates).
    void CheckMap(const YAML::Node& node,
                  const std::string& where,
                  const std::vector<std::string>& allowed) const
    {
        if (!node.IsMap())
        {
            Fail(node, where + " must be a map of keys");
        }
        std::set<std::string> seen;
        for (const auto& kv : node)
        {
            const std::string key = kv.first.Scalar();
            if (!kv.first.IsScalar())
            {
                Fail(kv.first, where + ": a key must be a plain word");
            }
            if (std::find(allowed.begin(), allowed.end(), key) == allowed.end())
            {
                const std::string close = Closest(key, allowed);
                Fail(kv.first, fmt::format("unknown key '{}' in {}{}", key, where,
                                           close.empty() ? fmt::format(" (valid: {})",
                                                                       fmt::join(allowed, ", "))
                                                         : fmt::format("; did you mean '{}'?", close)));
            }
            if (!seen.insert(key).second)
            {
                Fail(kv.first, fmt::format("key '{}' given twice in {}", key, where));
            }
        }
    }

    std::string Scalar(const YAML::Node& n, const std::string& what) const
    {
        if (!n.IsScalar())
        {
            Fail(n, what + " must be a single value, not a " + (n.IsMap() ? "map" : "list"));
        }
        return n.Scalar();
    }

    std::string String(const YAML::Node& n, const std::string& what) const
    {
        return Scalar(n, what);
    }

    std::string Choice(const YAML::Node& n,
                       const std::string& what,
                       const std::vector<std::string>& options) const
    {
        const std::string v = Scalar(n, what);
        if (std::find(options.begin(), options.end(), v) == options.end())
        {
            const std::string close = Closest(v, options);
            Fail(n, fmt::format("{} must be one of {}, not '{}'{}", what, fmt::join(options, ", "),
                                v, close.empty() ? "" : fmt::format(" (did you mean '{}'?)", close)));
        }
        return v;
    }

    bool Bool(const YAML::Node& n, const std::string& what) const
    {
        const std::string v = Scalar(n, what);
        if (v == "true" || v == "on" || v == "yes")
        {
            return true;
        }
        if (v == "false" || v == "off" || v == "no")
        {
            return false;
        }
        Fail(n, fmt::format("{} must be true or false, not '{}'", what, v));
    }

    uint64_t Integer(const YAML::Node& n, const std::string& what, uint64_t lo, uint64_t hi) const
    {
        const std::string v = Scalar(n, what);
        static const std::regex digits("^[0-9]+$");
        if (!std::regex_match(v, digits))
        {
            Fail(n, fmt::format("{} must be a whole number, not '{}'", what, v));
        }
        const uint64_t x = v.size() > 19 ? UINT64_MAX : std::stoull(v);
        if (x < lo || x > hi)
        {
            Fail(n, fmt::format("{} must be {}..{}, not {}", what, lo, hi, v));
        }
        return x;
    }

    double Number(const YAML::Node& n, const std::string& what, double lo, double hi) const
    {
        const std::string v = Scalar(n, what);
        double x = 0;
        std::string unit;
        if (!SplitQuantity(v, x, unit) || !unit.empty())
        {
            Fail(n, fmt::format("{} must be a number, not '{}'", what, v));
        }
        if (x < lo || x > hi)
        {
            Fail(n, fmt::format("{} must be {}..{}, not {}", what, lo, hi, v));
        }
        return x;
    }

    uint64_t Bytes(const YAML::Node& n, const std::string& what, uint64_t lo, uint64_t hi) const
    {
        const std::string v = Scalar(n, what);
        uint64_t b = 0;
        if (!ParseBytes(v, b))
        {
            Fail(n, fmt::format("{} must be a size such as 1500, 64KB or 1MB, not '{}'", what, v));
        }
        if (b < lo || b > hi)
        {
            Fail(n, fmt::format("{} must be {}..{} bytes, not {}", what, lo, hi, v));
        }
        return b;
    }

    int64_t Duration(const YAML::Node& n, const std::string& what, int64_t lo, int64_t hi) const
    {
        const std::string v = Scalar(n, what);
        int64_t ps = 0;
        if (!ParseTime(v, ps))
        {
            Fail(n, fmt::format("{} must be a time with a unit (ns, us, ms, s), such as 20ms, "
                                "not '{}'",
                                what, v));
        }
        if (ps < lo || ps > hi)
        {
            Fail(n, fmt::format("{} is out of range: {}", what, v));
        }
        return ps;
    }

    LinkSpec Link(const YAML::Node& n, const std::string& what, const LinkSpec& base) const
    {
        CheckMap(n, what, {"rate", "delay"});
        LinkSpec l = base;
        if (n["rate"])
        {
            l.rate = Scalar(n["rate"], what + ".rate");
            if (!ParseRate(l.rate, l.bitsPerSecond))
            {
                Fail(n["rate"], fmt::format("{}.rate must be a rate such as 100Gbps or 25Gbps, "
                                            "not '{}'",
                                            what, l.rate));
            }
            if (l.bitsPerSecond < 1'000'000 || l.bitsPerSecond > 3'200'000'000'000ULL)
            {
                Fail(n["rate"], fmt::format("{}.rate must be 1Mbps..3200Gbps, not {}", what, l.rate));
            }
        }
        if (n["delay"])
        {
            l.delay = Scalar(n["delay"], what + ".delay");
            l.delayPs = Duration(n["delay"], what + ".delay", 0, 1'000'000'000'000);
        }
        return l;
    }

    const std::string& File() const { return m_file; }

  private:
    std::string m_file;
};

/// "h3" -> 3 when it names a host of the topology.
uint32_t
HostIndex(const Reader& r, const YAML::Node& n, const std::string& what, uint32_t hosts)
{
    const std::string v = r.Scalar(n, what);
    static const std::regex re("^h([0-9]{1,6})$");
    std::smatch m;
    if (!std::regex_match(v, m, re))
    {
        r.Fail(n, fmt::format("{} must name a host such as h0, not '{}'", what, v));
    }
    const uint32_t i = static_cast<uint32_t>(std::stoul(m[1]));
    if (i >= hosts)
    {
        r.Fail(n, fmt::format("{} names host '{}', but the topology has h0..h{}", what, v, hosts - 1));
    }
    return i;
}

std::vector<uint32_t>
HostList(const Reader& r,
         const YAML::Node& n,
         const std::string& what,
         uint32_t hosts,
         bool mayBeEmpty = false)
{
    std::vector<uint32_t> out;
    if (n.IsScalar() && n.Scalar() == "all")
    {
        for (uint32_t h = 0; h < hosts; ++h)
        {
            out.push_back(h);
        }
        return out;
    }
    if (!n.IsSequence())
    {
        r.Fail(n, what + " must be a list of hosts such as [h1, h2] or 'all'");
    }
    std::set<uint32_t> seen;
    for (const auto& item : n)
    {
        const uint32_t h = HostIndex(r, item, what, hosts);
        if (!seen.insert(h).second)
        {
            r.Fail(item, fmt::format("{} lists h{} twice", what, h));
        }
        out.push_back(h);
    }
    if (out.empty() && !mayBeEmpty)
    {
        r.Fail(n, what + " is empty");
    }
    return out;
}

Expectation
ParseExpectation(const Reader& r, const YAML::Node& key, const YAML::Node& value)
{
    Expectation e;
    e.metric = key.Scalar();
    e.mark = Reader::MarkOf(key);
    static const std::regex path(R"(^[a-z_]+(\.([a-z0-9_]+|\*))*$)");
    if (!std::regex_match(e.metric, path))
    {
        r.Fail(key, fmt::format("expect: '{}' is not a metric path such as totals.drops", e.metric));
    }
    static const std::vector<std::string> tops{
        "totals", "flows", "flow_stats", "commands", "lag", "sim_time_s", "timing_faithful", "edge",
        "switch_drops",
        "fct_slowdown", "peak_queue_bytes"};
    const std::string top = e.metric.substr(0, e.metric.find('.'));
    if (std::find(tops.begin(), tops.end(), top) == tops.end())
    {
        const std::string close = Closest(top, tops);
        r.Fail(key, fmt::format("expect: unknown metric '{}'{}", e.metric,
                                close.empty() ? fmt::format(" (metrics start with {})", fmt::join(tops, ", "))
                                              : fmt::format("; did you mean '{}'?", close)));
    }
    if (top == "totals")
    {
        static const std::vector<std::string> totals{
            "drops", "pfc_pause_frames", "ecn_marks", "cnps", "credit_stalls", "bytes_delivered",
            "congestion_drops", "buffer_overflows", "fcps", "tcp_retransmissions", "ecn_echoes",
            "terminates"};
        const std::string rest = e.metric.substr(std::min(e.metric.size(), top.size() + 1));
        if (std::find(totals.begin(), totals.end(), rest) == totals.end())
        {
            const std::string close = Closest(rest, totals);
            r.Fail(key, fmt::format("expect: unknown metric '{}'{}", e.metric,
                                    close.empty() ? ""
                                                  : fmt::format("; did you mean 'totals.{}'?", close)));
        }
    }
    e.want = r.Scalar(value, "expect: " + e.metric);
    static const std::regex cmp(R"(^\s*(>=|<=|==|>|<)?\s*(-?[0-9]+(\.[0-9]+)?([eE][+-]?[0-9]+)?)\s*$)");
    static const std::regex range(
        R"(^\s*(-?[0-9]+(\.[0-9]+)?([eE][+-]?[0-9]+)?)\s*\.\.\s*(-?[0-9]+(\.[0-9]+)?([eE][+-]?[0-9]+)?)\s*$)");
    std::smatch m;
    if (std::regex_match(e.want, m, range))
    {
        e.op = Expectation::Op::Range;
        e.a = std::stod(m[1]);
        e.b = std::stod(m[4]);
        if (e.a > e.b)
        {
            r.Fail(value, fmt::format("expect: {}: range '{}' is empty", e.metric, e.want));
        }
    }
    else if (std::regex_match(e.want, m, cmp))
    {
        const std::string op = m[1];
        e.op = op == ">"    ? Expectation::Op::Gt
               : op == ">=" ? Expectation::Op::Ge
               : op == "<"  ? Expectation::Op::Lt
               : op == "<=" ? Expectation::Op::Le
                            : Expectation::Op::Eq;
        e.a = std::stod(m[2]);
    }
    else
    {
        r.Fail(value, fmt::format("expect: {}: '{}' is not a number, \">x\", \">=x\", \"<x\", "
                                  "\"<=x\" or \"a..b\"",
                                  e.metric, e.want));
    }
    return e;
}

fs::path
ShippedCdf(const std::string& name)
{
    // Installed beside the scenarios; FABEMU_SCENARIO_DIR is set by the build.
    return fs::path(FABEMU_SCENARIO_DIR) / "cdf" / (name + ".txt");
}

/// The place of every key under \p node, by dotted path (list items by index).
void
RecordMarks(const YAML::Node& node, const std::string& prefix, std::map<std::string, SourceMark>& marks)
{
    auto child = [&prefix](const std::string& key) { return prefix.empty() ? key : prefix + "." + key; };
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

/// Applies one --set key.path=value to the document; ns3:: keys go under fabric.set.
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
    // yaml-cpp nodes are handles: walk down, making maps where the file has none.
    std::vector<YAML::Node> chain{root};
    for (size_t i = 0; i + 1 < parts.size(); ++i)
    {
        YAML::Node next = chain.back()[parts[i]];
        if (next.IsDefined() && !next.IsMap())
        {
            throw ScenarioError(file, {},
                                fmt::format("--set '{}': '{}' is not a map in the scenario", kv,
                                            parts[i]));
        }
        chain.push_back(next);
    }
    // A new node, so that a message about it does not point at the file's line.
    chain.back().remove(parts.back());
    chain.back()[parts.back()] = YAML::Node(value);
}

} // namespace

// ---------------------------------------------------------------- the scenario

Scenario
ParseScenario(const std::string& text, const std::string& file, const std::vector<std::string>& overrides)
{
    YAML::Node root;
    try
    {
        root = YAML::Load(text);
    }
    catch (const YAML::ParserException& e)
    {
        throw ScenarioError(file, {e.mark.line + 1, e.mark.column + 1},
                            "not valid YAML: " + e.msg);
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
    r.CheckMap(root, "the scenario",
               {"name", "description", "seed", "duration", "fabric", "topology", "endpoints",
                "workloads", "expect", "record", "lag_threshold", "scheduling"});

    Scenario s;
    s.file = file;
    RecordMarks(root, "", s.marks);
    if (!root["name"])
    {
        r.Fail(SourceMark{1, 1}, "'name:' is required");
    }
    s.name = r.String(root["name"], "name");
    static const std::regex nameRe("^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$");
    if (!std::regex_match(s.name, nameRe))
    {
        r.Fail(root["name"], fmt::format("name '{}' must be 1..64 letters, digits, '-', '_' or '.'",
                                         s.name));
    }
    if (root["description"])
    {
        s.description = r.String(root["description"], "description");
    }
    if (root["seed"])
    {
        s.seed = r.Integer(root["seed"], "seed", 1, UINT32_MAX);
    }
    if (root["duration"])
    {
        s.duration = r.Scalar(root["duration"], "duration");
        s.durationPs = r.Duration(root["duration"], "duration", 1000, 3600'000'000'000'000LL);
    }
    if (root["lag_threshold"])
    {
        s.lagThreshold = r.Scalar(root["lag_threshold"], "lag_threshold");
        s.lagThresholdPs = r.Duration(root["lag_threshold"], "lag_threshold", 1000, 60'000'000'000'000LL);
    }
    if (root["scheduling"])
    {
        s.scheduling = r.Choice(root["scheduling"], "scheduling", {"shared", "realtime"});
    }

    // fabric
    if (const YAML::Node f = root["fabric"])
    {
        r.CheckMap(f, "fabric",
                   {"type", "mtu", "pfc", "ecn", "cc", "dcqcn", "buffer", "lmc", "routing", "set"});
        auto& fab = s.fabric;
        if (f["type"])
        {
            fab.type = r.Choice(f["type"], "fabric.type", {"roce", "infiniband", "iwarp"});
            if (fab.type == "iwarp")
            {
                fab.pfc = false; // iWARP needs no lossless fabric: TCP recovers
                fab.cc = "dctcp";
                fab.kmin = 100 * 1024; // DCTCP's K for 10-100 Gb/s ports, not DCQCN's Kmin
            }
        }
        // Keys of another fabric: named, with why they do not apply.
        auto refuse = [&r](const YAML::Node& map, std::initializer_list<const char*> keys,
                           const std::string& prefix, const std::string& why) {
            for (const char* key : keys)
            {
                if (map[key])
                {
                    r.Fail(map[key], fmt::format("{}{} {}", prefix, key, why));
                }
            }
        };
        if (fab.type == "infiniband")
        {
            fab.cc = "none"; // IB congestion control is off by default, as on real fabrics
            refuse(f, {"pfc", "ecn", "dcqcn", "buffer"}, "fabric.",
                   "applies to roce, not infiniband (its switches are lossless by credits; buffers "
                   "are ns3::IbPort::BufferBlocks)");
        }
        if (fab.type == "iwarp")
        {
            refuse(f, {"pfc", "dcqcn"}, "fabric.",
                   "applies to roce, not iwarp (iWARP runs on TCP over lossy Ethernet; its congestion "
                   "control is fabric.cc: dctcp, newreno or cubic)");
            if (const YAML::Node e = f["ecn"]; e && e.IsMap())
            {
                refuse(e, {"kmax", "pmax"}, "fabric.ecn.",
                       "applies to roce; on iwarp the switches mark every packet above fabric.ecn.kmin "
                       "(DCTCP's K)");
            }
        }
        if (f["routing"])
        {
            if (fab.type != "infiniband")
            {
                r.Fail(f["routing"], "fabric.routing applies to infiniband (its subnet manager); "
                                     "roce and iwarp route by ECMP over shortest paths");
            }
            fab.routing = r.Choice(f["routing"], "fabric.routing", {"minhop", "updown"});
        }
        if (f["lmc"])
        {
            if (fab.type != "infiniband")
            {
                r.Fail(f["lmc"], "fabric.lmc applies to infiniband");
            }
            fab.lmc = static_cast<uint8_t>(r.Integer(f["lmc"], "fabric.lmc", 0, 7));
        }
        if (f["mtu"])
        {
            fab.mtu = static_cast<uint32_t>(r.Integer(f["mtu"], "fabric.mtu", 256, 4096));
            if ((fab.mtu & (fab.mtu - 1)) != 0)
            {
                r.Fail(f["mtu"], fmt::format("fabric.mtu must be 256, 512, 1024, 2048 or 4096, not {}",
                                             fab.mtu));
            }
        }
        if (f["pfc"])
        {
            fab.pfc = r.Bool(f["pfc"], "fabric.pfc");
        }
        if (const YAML::Node e = f["ecn"])
        {
            if (e.IsScalar())
            {
                fab.ecn = r.Bool(e, "fabric.ecn");
            }
            else
            {
                r.CheckMap(e, "fabric.ecn", {"enabled", "kmin", "kmax", "pmax"});
                if (e["enabled"])
                {
                    fab.ecn = r.Bool(e["enabled"], "fabric.ecn.enabled");
                }
                if (e["kmin"])
                {
                    fab.kmin = r.Bytes(e["kmin"], "fabric.ecn.kmin", 0, 1ULL << 32);
                }
                if (e["kmax"])
                {
                    fab.kmax = r.Bytes(e["kmax"], "fabric.ecn.kmax", 1, 1ULL << 32);
                }
                if (e["pmax"])
                {
                    fab.pmax = r.Number(e["pmax"], "fabric.ecn.pmax", 0, 1);
                }
                if (fab.type == "roce" && fab.kmin > fab.kmax)
                {
                    r.Fail(e, fmt::format("fabric.ecn: kmin ({}) is above kmax ({})", fab.kmin, fab.kmax));
                }
            }
        }
        if (f["cc"])
        {
            if (fab.type == "infiniband")
            {
                fab.cc = r.Choice(f["cc"], "fabric.cc (infiniband)", {"none", "ibcc"});
            }
            else if (fab.type == "iwarp")
            {
                fab.cc = r.Choice(f["cc"], "fabric.cc (iwarp)", {"dctcp", "newreno", "cubic"});
            }
            else
            {
                fab.cc = r.Choice(f["cc"], "fabric.cc (roce)", {"dcqcn", "none"});
            }
        }
        if (f["dcqcn"])
        {
            fab.dcqcnPreset = r.Choice(f["dcqcn"], "fabric.dcqcn", {"paper", "nvidia", "hpcc"});
        }
        if (f["buffer"])
        {
            fab.bufferBytes = r.Bytes(f["buffer"], "fabric.buffer", 64 * 1024, 1ULL << 34);
        }
        if (const YAML::Node set = f["set"])
        {
            if (!set.IsMap())
            {
                r.Fail(set, "fabric.set must be a map of ns3::Class::Attribute: value");
            }
            for (const auto& kv : set)
            {
                const std::string name = kv.first.Scalar();
                static const std::regex attr("^ns3::[A-Za-z0-9_]+::[A-Za-z0-9_]+$");
                if (!std::regex_match(name, attr))
                {
                    r.Fail(kv.first, fmt::format("fabric.set: '{}' is not ns3::Class::Attribute",
                                                 name));
                }
                fab.set.push_back({name, r.Scalar(kv.second, name), Reader::MarkOf(kv.first)});
            }
        }
    }

    // topology
    if (const YAML::Node t = root["topology"])
    {
        r.CheckMap(t, "topology",
                   {"builder", "hosts", "leaves", "spines", "hosts_per_leaf", "k", "link", "uplink",
                    "bottleneck"});
        auto& top = s.topology;
        if (t["builder"])
        {
            top.builder = r.Choice(t["builder"], "topology.builder",
                                   {"pair", "star", "dumbbell", "leaf-spine", "fat-tree", "ring"});
        }
        const std::map<std::string, std::vector<std::string>> sizes{
            {"pair", {}},
            {"star", {"hosts"}},
            {"dumbbell", {"hosts", "bottleneck"}},
            {"leaf-spine", {"leaves", "spines", "hosts_per_leaf", "uplink"}},
            {"fat-tree", {"k", "uplink"}},
            {"ring", {"leaves", "hosts_per_leaf", "uplink"}}};
        for (const char* key : {"hosts", "leaves", "spines", "hosts_per_leaf", "k", "uplink", "bottleneck"})
        {
            const auto& ok = sizes.at(top.builder);
            if (t[key] && std::find(ok.begin(), ok.end(), key) == ok.end())
            {
                r.Fail(t[key], fmt::format("topology.{} does not apply to the '{}' builder{}", key,
                                           top.builder,
                                           ok.empty() ? "" : fmt::format(" (it takes {})", fmt::join(ok, ", "))));
            }
        }
        if (t["hosts"])
        {
            top.hosts = static_cast<uint32_t>(
                r.Integer(t["hosts"], "topology.hosts", top.builder == "dumbbell" ? 2 : 2, 1024));
        }
        if (t["leaves"])
        {
            top.leaves = static_cast<uint32_t>(
                r.Integer(t["leaves"], "topology.leaves", top.builder == "ring" ? 3 : 1, 256));
        }
        if (t["spines"])
        {
            top.spines = static_cast<uint32_t>(r.Integer(t["spines"], "topology.spines", 1, 256));
        }
        if (t["hosts_per_leaf"])
        {
            top.hostsPerLeaf =
                static_cast<uint32_t>(r.Integer(t["hosts_per_leaf"], "topology.hosts_per_leaf", 1, 256));
        }
        if (t["k"])
        {
            top.k = static_cast<uint32_t>(r.Integer(t["k"], "topology.k", 2, 32));
            if (top.k % 2)
            {
                r.Fail(t["k"], fmt::format("topology.k must be even, not {}", top.k));
            }
        }
        if (t["link"])
        {
            top.link = r.Link(t["link"], "topology.link", top.link);
        }
        top.uplink = t["uplink"] ? r.Link(t["uplink"], "topology.uplink", top.link) : top.link;
        top.bottleneck =
            t["bottleneck"] ? r.Link(t["bottleneck"], "topology.bottleneck", top.link) : top.link;
        if (top.HostCount() < 2 || top.HostCount() > 4096)
        {
            r.Fail(t, fmt::format("topology: {} hosts; it must have 2..4096", top.HostCount()));
        }
    }
    const uint32_t hosts = s.topology.HostCount();

    // endpoints
    if (const YAML::Node e = root["endpoints"])
    {
        if (!e.IsMap())
        {
            r.Fail(e, "endpoints must be a map such as h0: {kind: vm, device: rxe}");
        }
        std::set<uint32_t> seen;
        for (const auto& kv : e)
        {
            EndpointSpec ep;
            ep.index = HostIndex(r, kv.first, "endpoints", hosts);
            ep.host = kv.first.Scalar();
            if (!seen.insert(ep.index).second)
            {
                r.Fail(kv.first, fmt::format("endpoint {} given twice", ep.host));
            }
            r.CheckMap(kv.second, "endpoints." + ep.host, {"kind", "device"});
            if (kv.second["kind"])
            {
                ep.kind = r.Choice(kv.second["kind"], "endpoints." + ep.host + ".kind", {"vm", "netns"});
            }
            if (kv.second["device"])
            {
                ep.device = r.Choice(kv.second["device"], "endpoints." + ep.host + ".device",
                                     {"rxe", "siw", "none"});
                if (ep.device == "none" && ep.kind != "netns")
                {
                    r.Fail(kv.second["device"],
                           fmt::format("endpoints.{}.device: none (plain IP, no RDMA device) is for "
                                       "kind: netns; a VM endpoint has rxe or siw",
                                       ep.host));
                }
            }
            s.endpoints.push_back(ep);
        }
        std::sort(s.endpoints.begin(), s.endpoints.end(),
                  [](const auto& a, const auto& b) { return a.index < b.index; });
        if (s.fabric.type == "infiniband")
        {
            for (const auto& kv : e)
            {
                if (kv.second["device"] && kv.second["device"].Scalar() == "siw")
                {
                    r.Fail(kv.second["device"], fmt::format("endpoints.{}.device: siw speaks iWARP; on "
                                                            "fabric.type infiniband the endpoints are rxe, "
                                                            "whose RoCEv2 the edge gateways carry as IB",
                                                            kv.first.Scalar()));
                }
                if (kv.second["device"] && kv.second["device"].Scalar() == "none")
                {
                    r.Fail(kv.second["device"],
                           fmt::format("endpoints.{}.device: none sends plain IP, which an infiniband "
                                       "fabric does not carry (its edges carry RoCEv2 as IB); use rxe",
                                       kv.first.Scalar()));
                }
            }
            if (!s.endpoints.empty() && s.fabric.cc == "ibcc")
            {
                r.Fail(root["fabric"]["cc"] ? root["fabric"]["cc"] : e,
                       "fabric.cc ibcc with VM endpoints: the gateways do not pace the VMs' flows "
                       "(yet); use cc: none");
            }
        }
        if (s.fabric.type == "iwarp")
        {
            for (const auto& kv : e)
            {
                if (kv.second["device"] && kv.second["device"].Scalar() == "rxe")
                {
                    r.Fail(kv.second["device"], fmt::format("endpoints.{}.device: rxe speaks RoCEv2; "
                                                            "on fabric.type iwarp the endpoints are siw",
                                                            kv.first.Scalar()));
                }
            }
            for (auto& ep : s.endpoints)
            {
                if (ep.device != "none")
                {
                    ep.device = "siw"; // the default device on iwarp
                }
            }
        }
        if (s.endpoints.size() > 16)
        {
            r.Fail(e, fmt::format("endpoints: {} VMs; at most 16 run on one host", s.endpoints.size()));
        }
    }
    auto isVm = [&s](uint32_t h) {
        return std::any_of(s.endpoints.begin(), s.endpoints.end(),
                           [h](const EndpointSpec& e) { return e.index == h; });
    };

    // workloads
    if (const YAML::Node w = root["workloads"])
    {
        if (!w.IsSequence())
        {
            r.Fail(w, "workloads must be a list, each item {type: ..., ...}");
        }
        std::vector<std::string> typeNames;
        for (const auto& t : WorkloadTypes())
        {
            typeNames.push_back(t.key);
        }
        for (const auto& item : w)
        {
            if (!item.IsMap() || !item["type"])
            {
                r.Fail(item, fmt::format("a workload is a map with a type ({})", fmt::join(typeNames, ", ")));
            }
            WorkloadSpec wl;
            wl.mark = Reader::MarkOf(item);
            wl.type = r.Choice(item["type"], "workload type", typeNames);
            const std::string where = "workload '" + wl.type + "'";
            const std::map<std::string, std::vector<std::string>> allowed{
                {"bulk", {"type", "src", "dst", "bytes", "start", "op", "sl"}},
                {"incast", {"type", "dst", "srcs", "bytes", "start", "op", "sl"}},
                {"permutation", {"type", "hosts", "bytes", "start", "op", "sl"}},
                {"all-to-all", {"type", "hosts", "bytes", "start", "op", "sl"}},
                {"poisson", {"type", "hosts", "load", "cdf", "start", "stop", "op", "sl"}},
                {"command", {"type", "on", "run", "background", "after", "timeout"}}};
            r.CheckMap(item, where, allowed.at(wl.type));
            auto require = [&](const char* key) {
                if (!item[key])
                {
                    r.Fail(item, fmt::format("{} needs '{}'", where, key));
                }
                return item[key];
            };
            if (wl.type == "command")
            {
                wl.on = HostIndex(r, require("on"), where + ".on", hosts);
                if (!isVm(wl.on))
                {
                    r.Fail(item["on"], fmt::format("{}: h{} is simulated; commands run on VM "
                                                   "endpoints (add it under endpoints:)",
                                                   where, wl.on));
                }
                wl.runAsWritten = r.String(require("run"), where + ".run");
                wl.run = wl.runAsWritten;
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
                        r.Fail(item["run"], fmt::format("{}.run: '{{{}}}' names no host of the "
                                                        "topology (h0..h{})",
                                                        where, inner, hosts - 1));
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
                if (item["background"])
                {
                    wl.background = r.Bool(item["background"], where + ".background");
                }
                if (item["after"])
                {
                    wl.afterPs = r.Duration(item["after"], where + ".after", 0, 600'000'000'000'000LL);
                }
                if (item["timeout"])
                {
                    wl.timeoutPs = r.Duration(item["timeout"], where + ".timeout", 1'000'000'000,
                                              3600'000'000'000'000LL);
                }
                s.workloads.push_back(wl);
                continue;
            }
            if (item["op"])
            {
                wl.op = r.Choice(item["op"], where + ".op", {"write", "send", "read"});
            }
            if (item["sl"])
            {
                wl.sl = static_cast<uint8_t>(r.Integer(item["sl"], where + ".sl", 0, 15));
            }
            if (item["start"])
            {
                wl.startPs = r.Duration(item["start"], where + ".start", 0, s.durationPs);
            }
            if (wl.type == "bulk")
            {
                wl.src = HostIndex(r, require("src"), where + ".src", hosts);
                wl.dst = HostIndex(r, require("dst"), where + ".dst", hosts);
                if (wl.src == wl.dst)
                {
                    r.Fail(item["dst"], fmt::format("{}: src and dst are both h{}", where, wl.src));
                }
            }
            else if (wl.type == "incast")
            {
                wl.dst = HostIndex(r, require("dst"), where + ".dst", hosts);
                wl.hosts = HostList(r, require("srcs"), where + ".srcs", hosts);
                if (std::find(wl.hosts.begin(), wl.hosts.end(), wl.dst) != wl.hosts.end())
                {
                    if (require("srcs").IsScalar())
                    {
                        wl.hosts.erase(std::find(wl.hosts.begin(), wl.hosts.end(), wl.dst));
                    }
                    else
                    {
                        r.Fail(item["srcs"], fmt::format("{}: h{} is both dst and a src", where, wl.dst));
                    }
                }
            }
            else
            {
                wl.hosts = item["hosts"] ? HostList(r, item["hosts"], where + ".hosts", hosts)
                                         : HostList(r, YAML::Node("all"), where + ".hosts", hosts);
                if (wl.hosts.size() < 2)
                {
                    r.Fail(item["hosts"], where + ".hosts needs at least two hosts");
                }
            }
            if (wl.type == "poisson")
            {
                wl.load = r.Number(require("load"), where + ".load", 0.001, 1.0);
                wl.cdf = r.String(require("cdf"), where + ".cdf");
                fs::path p = ShippedCdf(wl.cdf);
                if (!fs::exists(p))
                {
                    p = fs::path(file).parent_path() / wl.cdf;
                }
                if (!fs::exists(p))
                {
                    r.Fail(item["cdf"], fmt::format("{}.cdf: '{}' is neither a shipped CDF "
                                                    "(websearch, hadoop) nor a file",
                                                    where, wl.cdf));
                }
                wl.cdfPath = p.string();
                wl.stopPs = item["stop"] ? r.Duration(item["stop"], where + ".stop", 1, s.durationPs)
                                         : s.durationPs;
                if (wl.stopPs <= wl.startPs)
                {
                    r.Fail(item, where + ": stop must come after start");
                }
            }
            else
            {
                wl.bytes = r.Bytes(require("bytes"), where + ".bytes", 1, 1ULL << 40);
            }
            for (uint32_t h : wl.hosts)
            {
                if (isVm(h))
                {
                    r.Fail(item, fmt::format("{}: h{} is a VM endpoint; simulated flows run between "
                                             "simulated hosts (use a command workload on a VM)",
                                             where, h));
                }
            }
            for (uint32_t h : {wl.src, wl.dst})
            {
                if ((wl.type == "bulk" || (wl.type == "incast" && h == wl.dst)) && isVm(h))
                {
                    r.Fail(item, fmt::format("{}: h{} is a VM endpoint; simulated flows run between "
                                             "simulated hosts (use a command workload on a VM)",
                                             where, h));
                }
            }
            s.workloads.push_back(wl);
        }
    }
    if (s.HasVms() &&
        std::none_of(s.workloads.begin(), s.workloads.end(),
                     [](const WorkloadSpec& w) { return w.type == "command"; }))
    {
        r.Fail(root["endpoints"], "endpoints are real hosts (VMs or namespaces) but no command workload runs on them");
    }
    if (s.HasVms() && s.fabric.type == "iwarp")
    {
        // Real siw endpoints run their own TCP over the switches; simulated iWARP flows
        // would need the model's TCP on those same switches, which is not built.
        for (size_t i = 0; i < s.workloads.size(); ++i)
        {
            if (s.workloads[i].type != "command")
            {
                r.Fail(root["workloads"][i], "with VM endpoints on fabric.type iwarp, workloads are "
                                             "commands on the VMs (simulated iWARP flows run in "
                                             "scenarios without endpoints)");
            }
        }
    }

    // record
    if (const YAML::Node rec = root["record"])
    {
        r.CheckMap(rec, "record", {"pcap", "queue_interval", "rate_interval"});
        if (rec["pcap"])
        {
            s.record.pcap = HostList(r, rec["pcap"], "record.pcap", hosts, true);
        }
        if (rec["queue_interval"])
        {
            s.record.queueInterval = r.Scalar(rec["queue_interval"], "record.queue_interval");
            s.record.queueIntervalPs = r.Duration(rec["queue_interval"], "record.queue_interval",
                                                  100'000, 1'000'000'000'000);
        }
        if (rec["rate_interval"])
        {
            s.record.rateInterval = r.Scalar(rec["rate_interval"], "record.rate_interval");
            s.record.rateIntervalPs = r.Duration(rec["rate_interval"], "record.rate_interval",
                                                 100'000, 1'000'000'000'000);
        }
    }

    // expect
    if (const YAML::Node ex = root["expect"])
    {
        if (!ex.IsMap())
        {
            r.Fail(ex, "expect must be a map of metric: want, such as totals.drops: 0");
        }
        for (const auto& kv : ex)
        {
            s.expect.push_back(ParseExpectation(r, kv.first, kv.second));
        }
    }
    return s;
}

Scenario
LoadScenario(const std::string& file, const std::vector<std::string>& overrides)
{
    std::ifstream in(file);
    if (!in)
    {
        throw ScenarioError(file, {}, "cannot read the scenario file");
    }
    std::stringstream text;
    text << in.rdbuf();
    return ParseScenario(text.str(), file, overrides);
}

std::string
ResolvedYaml(const Scenario& s)
{
    auto host = [](uint32_t h) { return "h" + std::to_string(h); };
    YAML::Emitter y;
    y << YAML::BeginMap;
    y << YAML::Key << "name" << YAML::Value << s.name;
    y << YAML::Key << "description" << YAML::Value << s.description;
    y << YAML::Key << "seed" << YAML::Value << s.seed;
    y << YAML::Key << "duration" << YAML::Value << s.duration;
    y << YAML::Key << "lag_threshold" << YAML::Value << s.lagThreshold;
    y << YAML::Key << "scheduling" << YAML::Value << s.scheduling;
    const auto& f = s.fabric;
    y << YAML::Key << "fabric" << YAML::Value << YAML::BeginMap;
    y << YAML::Key << "type" << YAML::Value << f.type;
    y << YAML::Key << "mtu" << YAML::Value << f.mtu;
    if (f.type == "roce")
    {
        y << YAML::Key << "pfc" << YAML::Value << f.pfc;
        y << YAML::Key << "ecn" << YAML::Value << YAML::Flow << YAML::BeginMap;
        y << YAML::Key << "enabled" << YAML::Value << f.ecn;
        y << YAML::Key << "kmin" << YAML::Value << f.kmin;
        y << YAML::Key << "kmax" << YAML::Value << f.kmax;
        y << YAML::Key << "pmax" << YAML::Value << f.pmax << YAML::EndMap;
        y << YAML::Key << "dcqcn" << YAML::Value << f.dcqcnPreset;
        y << YAML::Key << "buffer" << YAML::Value << f.bufferBytes;
    }
    if (f.type == "iwarp")
    {
        y << YAML::Key << "ecn" << YAML::Value << YAML::Flow << YAML::BeginMap;
        y << YAML::Key << "enabled" << YAML::Value << f.ecn;
        y << YAML::Key << "kmin" << YAML::Value << f.kmin << YAML::EndMap;
        y << YAML::Key << "buffer" << YAML::Value << f.bufferBytes;
    }
    y << YAML::Key << "cc" << YAML::Value << f.cc;
    if (f.type == "infiniband")
    {
        y << YAML::Key << "lmc" << YAML::Value << +f.lmc;
        y << YAML::Key << "routing" << YAML::Value << f.routing;
    }
    y << YAML::Key << "set" << YAML::Value << YAML::BeginMap;
    for (const auto& kv : f.set)
    {
        y << YAML::Key << kv.name << YAML::Value << kv.value;
    }
    y << YAML::EndMap << YAML::EndMap;
    const auto& t = s.topology;
    auto link = [&y](const char* key, const LinkSpec& l) {
        y << YAML::Key << key << YAML::Value << YAML::Flow << YAML::BeginMap << YAML::Key << "rate"
          << YAML::Value << l.rate << YAML::Key << "delay" << YAML::Value << l.delay << YAML::EndMap;
    };
    y << YAML::Key << "topology" << YAML::Value << YAML::BeginMap;
    y << YAML::Key << "builder" << YAML::Value << t.builder;
    if (t.builder == "star" || t.builder == "dumbbell")
    {
        y << YAML::Key << "hosts" << YAML::Value << t.hosts;
    }
    if (t.builder == "leaf-spine")
    {
        y << YAML::Key << "leaves" << YAML::Value << t.leaves << YAML::Key << "spines"
          << YAML::Value << t.spines << YAML::Key << "hosts_per_leaf" << YAML::Value << t.hostsPerLeaf;
    }
    if (t.builder == "ring")
    {
        y << YAML::Key << "leaves" << YAML::Value << t.leaves << YAML::Key << "hosts_per_leaf"
          << YAML::Value << t.hostsPerLeaf;
    }
    if (t.builder == "fat-tree")
    {
        y << YAML::Key << "k" << YAML::Value << t.k;
    }
    link("link", t.link);
    if (t.builder == "leaf-spine" || t.builder == "fat-tree" || t.builder == "ring")
    {
        link("uplink", t.uplink);
    }
    if (t.builder == "dumbbell")
    {
        link("bottleneck", t.bottleneck);
    }
    y << YAML::EndMap;
    y << YAML::Key << "endpoints" << YAML::Value << YAML::BeginMap;
    for (const auto& e : s.endpoints)
    {
        y << YAML::Key << e.host << YAML::Value << YAML::Flow << YAML::BeginMap << YAML::Key
          << "kind" << YAML::Value << e.kind << YAML::Key << "device" << YAML::Value << e.device
          << YAML::EndMap;
    }
    y << YAML::EndMap;
    auto ps = [](int64_t v) { return fmt::format("{}ns", v / 1000.0); };
    y << YAML::Key << "workloads" << YAML::Value << YAML::BeginSeq;
    for (const auto& w : s.workloads)
    {
        y << YAML::Flow << YAML::BeginMap << YAML::Key << "type" << YAML::Value << w.type;
        if (w.type == "command")
        {
            y << YAML::Key << "on" << YAML::Value << host(w.on) << YAML::Key << "run"
              << YAML::Value << w.runAsWritten << YAML::Key << "background" << YAML::Value
              << w.background << YAML::Key << "after" << YAML::Value << ps(w.afterPs)
              << YAML::Key << "timeout" << YAML::Value << ps(w.timeoutPs);
        }
        else
        {
            if (w.type == "bulk")
            {
                y << YAML::Key << "src" << YAML::Value << host(w.src);
            }
            if (w.type == "bulk" || w.type == "incast")
            {
                y << YAML::Key << "dst" << YAML::Value << host(w.dst);
            }
            if (w.type != "bulk")
            {
                y << YAML::Key << (w.type == "incast" ? "srcs" : "hosts") << YAML::Value
                  << YAML::Flow << YAML::BeginSeq;
                for (uint32_t h : w.hosts)
                {
                    y << host(h);
                }
                y << YAML::EndSeq;
            }
            if (w.type == "poisson")
            {
                y << YAML::Key << "load" << YAML::Value << w.load << YAML::Key << "cdf"
                  << YAML::Value << w.cdf << YAML::Key << "stop" << YAML::Value << ps(w.stopPs);
            }
            else
            {
                y << YAML::Key << "bytes" << YAML::Value << w.bytes;
            }
            y << YAML::Key << "start" << YAML::Value << ps(w.startPs) << YAML::Key << "op"
              << YAML::Value << w.op << YAML::Key << "sl" << YAML::Value << +w.sl;
        }
        y << YAML::EndMap;
    }
    y << YAML::EndSeq;
    y << YAML::Key << "record" << YAML::Value << YAML::BeginMap;
    y << YAML::Key << "pcap" << YAML::Value << YAML::Flow << YAML::BeginSeq;
    for (uint32_t h : s.record.pcap)
    {
        y << host(h);
    }
    y << YAML::EndSeq;
    y << YAML::Key << "queue_interval" << YAML::Value << s.record.queueInterval;
    y << YAML::Key << "rate_interval" << YAML::Value << s.record.rateInterval;
    y << YAML::EndMap;
    y << YAML::Key << "expect" << YAML::Value << YAML::BeginMap;
    for (const auto& e : s.expect)
    {
        y << YAML::Key << e.metric << YAML::Value << e.want;
    }
    y << YAML::EndMap;
    y << YAML::EndMap;
    return std::string(y.c_str()) + "\n";
}

} // namespace fabemu
