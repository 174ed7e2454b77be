#include "scenarios/src/scenario-reader.h"

#include "ns3/host-address.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <regex>
#include <set>
#include <sstream>
#include <yaml-cpp/yaml.h>

namespace fabemu
{

std::string
Shown(const std::string& value)
{
    constexpr size_t kMax = 60;
    if (value.size() <= kMax)
    {
        return value;
    }
    // Cut before a UTF-8 continuation byte, never inside a character.
    size_t cut = kMax;
    while (cut > 0 && (static_cast<unsigned char>(value[cut]) & 0xC0) == 0x80)
    {
        --cut;
    }
    return fmt::format("{}... ({} bytes)", value.substr(0, cut), value.size());
}

ScenarioError::ScenarioError(const std::string& file, SourceMark mark, const std::string& what)
    : std::runtime_error(mark.line > 0
                             ? fmt::format("{}:{}:{}: {}", file, mark.line, mark.column, what)
                             : fmt::format("{}: {}", file, what)),
      m_reason(what),
      m_mark(mark)
{
}

bool
NvlinkNodeYaml::Reaches(uint32_t a, uint32_t b) const
{
    return a != b && a < gpus && b < gpus && LinksBetween(a, b) > 0;
}

uint32_t
NvlinkNodeYaml::LinksBetween(uint32_t a, uint32_t b) const
{
    if (!split.empty())
    {
        uint32_t links = 0;
        for (uint32_t l : split)
        {
            links += l;
        }
        return links;
    }
    uint32_t links = 0;
    for (const auto& e : mesh)
    {
        if ((e.a == a && e.b == b) || (e.a == b && e.b == a))
        {
            links += e.links;
        }
    }
    return links;
}

uint32_t
DeviceNumber(const std::string& name)
{
    // The digits that end the name. A name without them ("gpu", which the endpoint syntax
    // lets through) or with more after them numbers no device: every "is there such a
    // device" check then refuses it by name, where stoul would throw out of the loader.
    constexpr uint32_t kNoDevice = std::numeric_limits<uint32_t>::max();
    const size_t digits = name.find_first_of("0123456789");
    if (digits == std::string::npos || name.size() - digits > 9 ||
        name.find_first_not_of("0123456789", digits) != std::string::npos)
    {
        return kNoDevice;
    }
    return static_cast<uint32_t>(std::stoul(name.substr(digits)));
}

std::vector<std::vector<uint32_t>>
WorkloadSpec::RanksByServer() const
{
    std::vector<std::vector<uint32_t>> servers;
    std::vector<uint32_t> order; // the servers, in order of first mention
    for (uint32_t r = 0; r < rankDevices.size(); ++r)
    {
        const auto it = std::find(order.begin(), order.end(), hosts[r]);
        if (it == order.end())
        {
            order.push_back(hosts[r]);
            servers.push_back({r});
        }
        else
        {
            servers[it - order.begin()].push_back(r);
        }
    }
    for (auto& server : servers)
    {
        std::sort(server.begin(), server.end(), [this](uint32_t a, uint32_t b) {
            return DeviceNumber(rankDevices[a]) < DeviceNumber(rankDevices[b]);
        });
    }
    return servers;
}

bool
NodeYaml::NvlinkJoins(const std::string& srcGpu, const std::string& dstGpu) const
{
    return hasNvlink && nvlink.Reaches(DeviceNumber(srcGpu), DeviceNumber(dstGpu));
}

uint32_t
NodeYaml::Gpus() const
{
    if (hasPcie)
    {
        return static_cast<uint32_t>(pcie.gpus.size());
    }
    return hasNvlink ? nvlink.gpus : 0;
}

ns3::CxlLinkSpec
CxlLinkOf(const CxlNodeYaml& c)
{
    ns3::CxlLinkSpec spec;
    spec.version = c.version;
    spec.gigaTransfers =
        c.gigaTransfers > 0 ? c.gigaTransfers : ns3::CxlMaxGigaTransfers(c.version);
    spec.lanes = c.lanes;
    spec.mode = ns3::CxlDefaultFlitMode(spec.gigaTransfers);
    if (!c.flit.empty())
    {
        ns3::CxlParseFlitMode(c.flit, &spec.mode); // the reader took only known names
    }
    return spec;
}

int64_t
CxlNodeYaml::SharedBy(const std::string& gpu) const
{
    for (size_t k = 0; k < expanders.size(); ++k)
    {
        if (!gpu.empty() && expanders[k].shares == gpu)
        {
            return static_cast<int64_t>(k);
        }
    }
    return -1;
}

bool
CxlNodeYaml::InPool(uint32_t host) const
{
    return hasPool && (poolHosts.empty() ||
                       std::find(poolHosts.begin(), poolHosts.end(), host) != poolHosts.end());
}

std::vector<std::string>
NodeYaml::Endpoints() const
{
    std::vector<std::string> names;
    if (hasPcie || hasCxl)
    {
        names.push_back("mem");
    }
    if (hasCxl)
    {
        names.push_back("cpu");
        for (size_t k = 0; k < cxl.expanders.size(); ++k)
        {
            names.push_back("cxl" + std::to_string(k));
        }
        if (cxl.hasPool)
        {
            names.push_back("pool");
        }
    }
    for (uint32_t k = 0; k < Gpus(); ++k)
    {
        names.push_back("gpu" + std::to_string(k));
    }
    for (size_t k = 0; hasPcie && k < pcie.nics.size(); ++k)
    {
        names.push_back("nic" + std::to_string(k));
    }
    return names;
}

uint32_t
NodeYaml::ServingNic(uint32_t gpu) const
{
    for (uint32_t n = 0; hasPcie && n < pcie.nics.size(); ++n)
    {
        const auto& serves = pcie.nics[n].serves;
        if (std::find(serves.begin(), serves.end(), gpu) != serves.end())
        {
            return n;
        }
    }
    if (!hasPcie || gpu >= pcie.gpus.size() || pcie.gpus[gpu].under == "root")
    {
        return 0;
    }
    const std::string& sw = pcie.gpus[gpu].under;
    uint32_t position = 0;
    for (uint32_t g = 0; g < gpu; ++g)
    {
        position += pcie.gpus[g].under == sw;
    }
    std::vector<uint32_t> nics;
    for (uint32_t n = 0; n < pcie.nics.size(); ++n)
    {
        if (pcie.nics[n].under == sw)
        {
            nics.push_back(n);
        }
    }
    return nics.empty() ? 0 : nics[position % nics.size()];
}

uint32_t
TopologyYaml::RailsPerServer() const
{
    if (builder != "rail")
    {
        return 1;
    }
    return rails > 0 ? rails : static_cast<uint32_t>(node.pcie.nics.size());
}

uint32_t
TopologyYaml::LeavesPerRail() const
{
    if (builder != "rail")
    {
        return 0;
    }
    const uint32_t perLeaf = serversPerLeaf ? serversPerLeaf : nodes;
    return (nodes + perLeaf - 1) / perLeaf;
}

uint32_t
TopologyYaml::NetworkHosts() const
{
    return builder == "rail" ? nodes * RailsPerServer() : HostCount();
}

uint32_t
TopologyYaml::HostCount() const
{
    if (builder == "node")
    {
        return 1;
    }
    if (builder == "rail")
    {
        return nodes;
    }
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
    return ns3::HostIpv4Text(host); // the one rule every fabric and endpoint follows
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

// ---------------------------------------------------------------- expectations

Expectation
ParseExpectation(const Reader& r, const YAML::Node& key, const YAML::Node& value)
{
    Expectation e;
    e.metric = key.Scalar();
    e.mark = Reader::MarkOf(key);
    static const std::regex path(R"(^[a-z_]+(\.([a-z0-9_]+|\*))*$)");
    if (!std::regex_match(e.metric, path))
    {
        r.Fail(key,
               fmt::format("expect: '{}' is not a metric path such as totals.drops", e.metric));
    }
    static const std::vector<std::string> tops{
        "totals",       "flows",        "flow_stats",       "commands",
        "lag",          "sim_time_s",   "timing_faithful",  "edge",
        "switch_drops", "fct_slowdown", "peak_queue_bytes", "collectives",
        "training",     "memory",       "faults",           "launch_predictions"};
    const std::string top = e.metric.substr(0, e.metric.find('.'));
    if (std::find(tops.begin(), tops.end(), top) == tops.end())
    {
        const std::string close = Closest(top, tops);
        r.Fail(key, fmt::format("expect: unknown metric '{}'{}", e.metric,
                                close.empty()
                                    ? fmt::format(" (metrics start with {})", fmt::join(tops, ", "))
                                    : fmt::format("; did you mean '{}'?", close)));
    }
    if (top == "totals")
    {
        static const std::vector<std::string> totals{"drops",
                                                     "pfc_pause_frames",
                                                     "ecn_marks",
                                                     "cnps",
                                                     "credit_stalls",
                                                     "bytes_delivered",
                                                     "congestion_drops",
                                                     "buffer_overflows",
                                                     "fcps",
                                                     "tcp_retransmissions",
                                                     "ecn_echoes",
                                                     "terminates",
                                                     "pcie_replays",
                                                     "credit_starved_s",
                                                     "nvlink_replays",
                                                     "cxl_flits",
                                                     "cxl_replays",
                                                     "bit_error_drops",
                                                     "retransmitted_packets",
                                                     "retransmission_timeouts",
                                                     "pfc_watchdog_triggers",
                                                     "link_down_drops",
                                                     "reroutes",
                                                     "sm_sweeps"};
        const std::string rest = e.metric.substr(std::min(e.metric.size(), top.size() + 1));
        if (std::find(totals.begin(), totals.end(), rest) == totals.end())
        {
            const std::string close = Closest(rest, totals);
            r.Fail(key,
                   fmt::format("expect: unknown metric '{}'{}", e.metric,
                               close.empty() ? ""
                                             : fmt::format("; did you mean 'totals.{}'?", close)));
        }
    }
    e.want = r.Scalar(value, "expect: " + e.metric);
    static const std::regex cmp(
        R"(^\s*(>=|<=|==|>|<)?\s*(-?[0-9]+(\.[0-9]+)?([eE][+-]?[0-9]+)?)\s*$)");
    static const std::regex range(
        R"(^\s*(-?[0-9]+(\.[0-9]+)?([eE][+-]?[0-9]+)?)\s*\.\.\s*(-?[0-9]+(\.[0-9]+)?([eE][+-]?[0-9]+)?)\s*$)");
    // strtod, not stod: a number beyond double's range ("1e400") is refused here by name,
    // where stod would throw std::out_of_range out of the loader.
    const auto number = [&](const std::string& text) {
        const double x = std::strtod(text.c_str(), nullptr);
        if (!std::isfinite(x))
        {
            r.Fail(value, fmt::format("expect: {}: {} in '{}' is beyond the range of numbers",
                                      e.metric, text, e.want));
        }
        return x;
    };
    std::smatch m;
    if (std::regex_match(e.want, m, range))
    {
        e.op = Expectation::Op::Range;
        e.a = number(m[1]);
        e.b = number(m[4]);
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
        e.a = number(m[2]);
    }
    else
    {
        r.Fail(value, fmt::format("expect: {}: '{}' is not a number, \">x\", \">=x\", \"<x\", "
                                  "\"<=x\" or \"a..b\"",
                                  e.metric, e.want));
    }
    return e;
}

Scenario
LoadScenario(const std::string& file, const std::vector<std::string>& overrides)
{
    std::error_code ec;
    if (std::filesystem::is_directory(file, ec))
    {
        throw ScenarioError(file, {}, "is a folder, not a scenario file");
    }
    std::ifstream in(file);
    if (!in)
    {
        throw ScenarioError(
            file, {}, fmt::format("cannot read the scenario file ({})", std::strerror(errno)));
    }
    std::stringstream text;
    text << in.rdbuf();
    return ParseScenario(text.str(), file, overrides);
}

} // namespace fabemu
