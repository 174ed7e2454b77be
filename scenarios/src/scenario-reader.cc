// The YAML reader: one node to one value, or one FILE:LINE:COL message.
#include "scenarios/src/scenario-reader.h"

#include <fmt/format.h>

#include <algorithm>
#include <regex>
#include <set>

namespace fabemu
{

void
Reader::Fail(const YAML::Node& at, const std::string& what) const
{
    throw ScenarioError(m_file, MarkOf(at), what);
}

void
Reader::Fail(SourceMark at, const std::string& what) const
{
    throw ScenarioError(m_file, at, what);
}

SourceMark
Reader::MarkOf(const YAML::Node& n)
{
    const YAML::Mark m = n.Mark();
    if (m.line < 0)
    {
        return {}; // made by --set
    }
    return {m.line + 1, m.column + 1};
}

void
Reader::CheckMap(const YAML::Node& node, const std::string& where,
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
            Fail(kv.first,
                 fmt::format("unknown key '{}' in {}{}", Shown(key), where,
                             close.empty() ? fmt::format(" (valid: {})", fmt::join(allowed, ", "))
                                           : fmt::format("; did you mean '{}'?", close)));
        }
        if (!seen.insert(key).second)
        {
            Fail(kv.first, fmt::format("key '{}' given twice in {}", key, where));
        }
    }
}

std::string
Reader::Scalar(const YAML::Node& n, const std::string& what) const
{
    if (!n.IsScalar())
    {
        Fail(n, what + " must be a single value, not a " + (n.IsMap() ? "map" : "list"));
    }
    return n.Scalar();
}

std::string
Reader::Choice(const YAML::Node& n, const std::string& what,
               const std::vector<std::string>& options) const
{
    const std::string v = Scalar(n, what);
    if (std::find(options.begin(), options.end(), v) == options.end())
    {
        const std::string close = Closest(v, options);
        Fail(n, fmt::format("{} must be one of {}, not '{}'{}", what, fmt::join(options, ", "),
                            Shown(v),
                            close.empty() ? "" : fmt::format(" (did you mean '{}'?)", close)));
    }
    return v;
}

bool
Reader::Bool(const YAML::Node& n, const std::string& what) const
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
    Fail(n, fmt::format("{} must be true or false, not '{}'", what, Shown(v)));
}

uint64_t
Reader::Integer(const YAML::Node& n, const std::string& what, uint64_t lo, uint64_t hi) const
{
    const std::string v = Scalar(n, what);
    static const std::regex digits("^[0-9]+$");
    if (!std::regex_match(v, digits))
    {
        Fail(n, fmt::format("{} must be a whole number, not '{}'", what, Shown(v)));
    }
    const uint64_t x = v.size() > 19 ? UINT64_MAX : std::stoull(v);
    if (x < lo || x > hi)
    {
        Fail(n, fmt::format("{} must be {}..{}, not {}", what, lo, hi, v));
    }
    return x;
}

double
Reader::Number(const YAML::Node& n, const std::string& what, double lo, double hi) const
{
    const std::string v = Scalar(n, what);
    double x = 0;
    std::string unit;
    if (!SplitQuantity(v, x, unit) || !unit.empty())
    {
        Fail(n, fmt::format("{} must be a number, not '{}'", what, Shown(v)));
    }
    if (x < lo || x > hi)
    {
        Fail(n, fmt::format("{} must be {}..{}, not {}", what, lo, hi, v));
    }
    return x;
}

uint64_t
Reader::Bytes(const YAML::Node& n, const std::string& what, uint64_t lo, uint64_t hi) const
{
    const std::string v = Scalar(n, what);
    uint64_t b = 0;
    if (!ParseBytes(v, b))
    {
        Fail(n,
             fmt::format("{} must be a size such as 1500, 64KB or 1MB, not '{}'", what, Shown(v)));
    }
    if (b < lo || b > hi)
    {
        Fail(n, fmt::format("{} must be {}..{} bytes, not {}", what, lo, hi, v));
    }
    return b;
}

int64_t
Reader::Duration(const YAML::Node& n, const std::string& what, int64_t lo, int64_t hi) const
{
    const std::string v = Scalar(n, what);
    int64_t ps = 0;
    if (!ParseTime(v, ps))
    {
        Fail(n, fmt::format("{} must be a time with a unit (ns, us, ms, s), such as 20ms, "
                            "not '{}'",
                            what, Shown(v)));
    }
    if (ps < lo || ps > hi)
    {
        Fail(n, fmt::format("{} is out of range: {}", what, v));
    }
    return ps;
}

uint64_t
Reader::Rate(const YAML::Node& n, const std::string& what) const
{
    const std::string v = Scalar(n, what);
    uint64_t bps = 0;
    if (!ParseRate(v, bps))
    {
        Fail(n,
             fmt::format("{} must be a rate such as 100Gbps or 25Gbps, not '{}'", what, Shown(v)));
    }
    if (bps < 1'000'000 || bps > 3'200'000'000'000ULL)
    {
        Fail(n, fmt::format("{} must be 1Mbps..3200Gbps, not {}", what, v));
    }
    return bps;
}

uint32_t
Reader::Host(const YAML::Node& n, const std::string& what, uint32_t hosts) const
{
    const std::string v = Scalar(n, what);
    static const std::regex re("^h([0-9]{1,6})$");
    std::smatch m;
    if (!std::regex_match(v, m, re))
    {
        Fail(n, fmt::format("{} must name a host such as h0, not '{}'", what, Shown(v)));
    }
    const uint32_t i = static_cast<uint32_t>(std::stoul(m[1]));
    if (i >= hosts)
    {
        Fail(n,
             fmt::format("{} names host '{}', but the topology has h0..h{}", what, v, hosts - 1));
    }
    return i;
}

std::pair<uint32_t, std::string>
Reader::Endpoint(const YAML::Node& n, const std::string& what, uint32_t hosts) const
{
    const std::string v = Scalar(n, what);
    static const std::regex re("^h([0-9]{1,6})(\\.([a-z]+[0-9]{0,3}))?$");
    std::smatch m;
    if (!std::regex_match(v, m, re))
    {
        Fail(n, fmt::format("{} must name a host such as h0, or a device in it such as h0.gpu0, "
                            "not '{}'",
                            what, Shown(v)));
    }
    const auto i = static_cast<uint32_t>(std::stoul(m[1]));
    if (i >= hosts)
    {
        Fail(n,
             fmt::format("{} names host 'h{}', but the topology has h0..h{}", what, i, hosts - 1));
    }
    return {i, m[3].str()};
}

std::vector<uint32_t>
Reader::Hosts(const YAML::Node& n, const std::string& what, uint32_t hosts, bool mayBeEmpty) const
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
        Fail(n, what + " must be a list of hosts such as [h1, h2] or 'all'");
    }
    std::set<uint32_t> seen;
    for (const auto& item : n)
    {
        const uint32_t h = Host(item, what, hosts);
        if (!seen.insert(h).second)
        {
            Fail(item, fmt::format("{} lists h{} twice", what, h));
        }
        out.push_back(h);
    }
    if (out.empty() && !mayBeEmpty)
    {
        Fail(n, what + " is empty");
    }
    return out;
}

YAML::Node
NodeAt(const YAML::Node& node, const std::string& path)
{
    static const YAML::Node none(YAML::NodeType::Map);
    const size_t dot = path.find('.');
    const std::string part = path.substr(0, dot);
    if (!node.IsDefined() || !(node.IsMap() || node.IsSequence()))
    {
        return none["-"]; // undefined
    }
    if (node.IsSequence())
    {
        if (part.empty() || part.size() > 6 ||
            part.find_first_not_of("0123456789") != std::string::npos ||
            std::stoul(part) >= node.size())
        {
            return none["-"];
        }
    }
    const YAML::Node child = node.IsSequence() ? node[std::stoul(part)] : node[part];
    return dot == std::string::npos ? child : NodeAt(child, path.substr(dot + 1));
}

} // namespace fabemu
