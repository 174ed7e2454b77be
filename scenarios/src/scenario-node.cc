// topology.node: the inside of every server, read and written here: its PCIe tree
// (topology.node.pcie: a preset name, or a map of links, switches, GPUs and NICs), its
// NVLink (topology.node.nvlink) and its CXL memory (topology.node.cxl).
#include "scenarios/src/scenario-keys.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

namespace fabemu
{

namespace
{

const std::string kPcie = "topology.node.pcie";

/// The shipped trees, by name.
const std::map<std::string, PcieNodeYaml>&
PciePresets()
{
    static const std::map<std::string, PcieNodeYaml> presets = [] {
        std::map<std::string, PcieNodeYaml> p;
        PcieNodeYaml one; // Gen5 x16: gpu0 and nic0 under one switch (GPUDirect RDMA)
        one.switches = {PcieLinkYaml{}};
        one.gpus = {PcieDeviceYaml{}};
        one.nics = {PcieDeviceYaml{}};
        p["gpudirect"] = one;
        PcieNodeYaml eight; // Gen5 x16: two GPUs and one NIC under each of four switches
        eight.switches.assign(4, PcieLinkYaml{});
        for (uint32_t k = 0; k < 8; ++k)
        {
            eight.gpus.push_back(PcieDeviceYaml{"sw" + std::to_string(k / 2), {}, {}});
        }
        for (uint32_t k = 0; k < 4; ++k)
        {
            eight.nics.push_back(PcieDeviceYaml{"sw" + std::to_string(k), {}, {}});
        }
        p["pcie-8gpu"] = eight;
        PcieNodeYaml host; // Gen5 x16: nic0 on a root port, no GPU: RDMA from host memory
        host.nics = {PcieDeviceYaml{"root", {}, {}}};
        p["host-nic"] = host;
        return p;
    }();
    return presets;
}

/// The names of a table of presets, in order.
template <class T>
std::vector<std::string>
NamesOf(const std::map<std::string, T>& presets)
{
    std::vector<std::string> names;
    for (const auto& entry : presets)
    {
        names.push_back(entry.first);
    }
    return names;
}

std::vector<std::string>
PresetNames()
{
    return NamesOf(PciePresets());
}

uint32_t
Lanes(const Reader& r, const YAML::Node& n, const std::string& what)
{
    const auto x = static_cast<uint32_t>(r.Integer(n, what, 1, 16));
    if (x != 1 && x != 2 && x != 4 && x != 8 && x != 16)
    {
        r.Fail(n, fmt::format("{}: x{} is not a PCIe link width (1, 2, 4, 8 or 16)", what, x));
    }
    return x;
}

/// MPS and MRRS: 128 << n up to 4096 (the spec's encoding).
uint32_t
PowerOfTwoSize(const Reader& r, const YAML::Node& n, const std::string& what)
{
    const std::string v = r.Scalar(n, what);
    const bool digits =
        !v.empty() && v.size() <= 6 && v.find_first_not_of("0123456789") == std::string::npos;
    const uint32_t x = digits ? static_cast<uint32_t>(std::stoul(v)) : 0;
    if (x < 128 || x > 4096 || (x & (x - 1)) != 0)
    {
        r.Fail(n, fmt::format("{} must be a power of two from 128 to 4096 bytes, not {}", what, v));
    }
    return x;
}

/// generation and lanes of a link map (absent: 0, the tree's own).
PcieLinkYaml
ReadLink(const Reader& r, const YAML::Node& n, const std::string& where)
{
    PcieLinkYaml l;
    if (n["generation"])
    {
        l.generation =
            static_cast<uint32_t>(r.Integer(n["generation"], where + ".generation", 1, 6));
    }
    if (n["lanes"])
    {
        l.lanes = Lanes(r, n["lanes"], where + ".lanes");
    }
    return l;
}

std::vector<PcieLinkYaml>
ReadSwitches(const Reader& r, const YAML::Node& n)
{
    const std::string what = kPcie + ".switches";
    if (n.IsScalar())
    {
        return std::vector<PcieLinkYaml>(r.Integer(n, what, 0, 32));
    }
    if (!n.IsSequence() || n.size() > 32)
    {
        r.Fail(n, what + " is a count (0..32) or a list of at most 32 maps {generation, lanes}");
    }
    std::vector<PcieLinkYaml> out;
    for (size_t i = 0; i < n.size(); ++i)
    {
        const std::string where = fmt::format("{}.{}", what, i);
        r.CheckMap(n[i], where, {"generation", "lanes"});
        out.push_back(ReadLink(r, n[i], where));
    }
    return out;
}

/// gpus: or nics:, each item the switch it sits under ("sw0", "root") or a map with it.
/// A NIC's `serves`: gpuK, or a list of them.
std::vector<uint32_t>
ReadServes(const Reader& r, const YAML::Node& n, const std::string& where)
{
    std::vector<YAML::Node> items;
    for (size_t i = 0; n.IsSequence() && i < n.size(); ++i)
    {
        items.push_back(n[i]);
    }
    if (!n.IsSequence())
    {
        items.push_back(n);
    }
    std::vector<uint32_t> gpus;
    for (const auto& item : items)
    {
        const std::string name = item.IsScalar() ? item.Scalar() : "";
        if (name.rfind("gpu", 0) != 0 || name.size() < 4 || name.size() > 5 ||
            name.find_first_not_of("0123456789", 3) != std::string::npos)
        {
            r.Fail(item,
                   fmt::format("{} names GPUs of the server: gpuK, or a list of them", where));
        }
        gpus.push_back(DeviceNumber(name));
    }
    return gpus;
}

std::vector<PcieDeviceYaml>
ReadDevices(const Reader& r, const YAML::Node& n, const std::string& key, size_t switches)
{
    const std::string what = kPcie + "." + key;
    const bool nics = key == "nics";
    if (!n.IsSequence() || n.size() > 64)
    {
        r.Fail(n, what +
                      " is a list of at most 64 items, each sw0.. or root, or a map {under, "
                      "generation, lanes" +
                      (nics ? ", serves}" : "}"));
    }
    std::vector<PcieDeviceYaml> out;
    for (size_t i = 0; i < n.size(); ++i)
    {
        const std::string where = fmt::format("{}.{}", what, i);
        PcieDeviceYaml d;
        // One Node, never assigned again: yaml-cpp's operator= would write into n[i].
        const YAML::Node under = n[i].IsMap() ? n[i]["under"] : n[i];
        if (n[i].IsMap())
        {
            r.CheckMap(n[i], where,
                       nics ? std::vector<std::string>{"under", "generation", "lanes", "serves"}
                            : std::vector<std::string>{"under", "generation", "lanes"});
            d.link = ReadLink(r, n[i], where);
            if (n[i]["serves"])
            {
                d.serves = ReadServes(r, n[i]["serves"], where + ".serves");
            }
            if (!under)
            {
                r.Fail(n[i], where + " needs 'under' (sw0.. or root)");
            }
        }
        d.under = r.Scalar(under, where);
        const bool onSwitch = d.under.rfind("sw", 0) == 0 && d.under.size() > 2 &&
                              d.under.find_first_not_of("0123456789", 2) == std::string::npos &&
                              d.under.size() < 6 && std::stoul(d.under.substr(2)) < switches;
        if (d.under != "root" && !onSwitch)
        {
            r.Fail(under, fmt::format("{}: no switch '{}' in the tree ({})", where, d.under,
                                      switches == 0   ? "it has none; use root"
                                      : switches == 1 ? "it has sw0, or root"
                                                      : fmt::format("it has sw0..sw{}, or root",
                                                                    switches - 1)));
        }
        out.push_back(d);
    }
    return out;
}

/// Each GPU a NIC serves exists, and no other NIC serves it too.
void
CheckServes(const Reader& r, const YAML::Node& n, const PcieNodeYaml& p)
{
    std::map<uint32_t, size_t> servedBy;
    for (size_t i = 0; i < p.nics.size(); ++i)
    {
        for (size_t j = 0; j < p.nics[i].serves.size(); ++j)
        {
            const uint32_t g = p.nics[i].serves[j];
            const YAML::Node serves = n["nics"][i]["serves"];
            const YAML::Node at = serves.IsSequence() ? serves[j] : serves;
            const std::string where = fmt::format("{}.nics.{}.serves", kPcie, i);
            if (g >= p.gpus.size())
            {
                r.Fail(at,
                       fmt::format("{}: there is no gpu{}: the tree has {}", where, g,
                                   p.gpus.empty() ? std::string("no GPU")
                                                  : fmt::format("gpu0..gpu{}", p.gpus.size() - 1)));
            }
            if (const auto [it, fresh] = servedBy.emplace(g, i); !fresh)
            {
                r.Fail(at,
                       fmt::format("{}: gpu{} is served by nic{} already", where, g, it->second));
            }
        }
    }
}

PcieNodeYaml
ReadPcie(const Reader& r, const YAML::Node& n)
{
    if (n.IsScalar())
    {
        return PciePresets().at(r.Choice(n, kPcie + " (a preset)", PresetNames()));
    }
    r.CheckMap(n, kPcie,
               {"preset", "generation", "lanes", "mps", "mrrs", "acs", "switch_latency",
                "root_complex", "switches", "gpus", "nics"});
    PcieNodeYaml p;
    if (n["preset"])
    {
        p = PciePresets().at(r.Choice(n["preset"], kPcie + ".preset", PresetNames()));
    }
    if (n["generation"])
    {
        p.generation =
            static_cast<uint32_t>(r.Integer(n["generation"], kPcie + ".generation", 1, 6));
    }
    if (n["lanes"])
    {
        p.lanes = Lanes(r, n["lanes"], kPcie + ".lanes");
    }
    if (n["mps"])
    {
        p.mps = PowerOfTwoSize(r, n["mps"], kPcie + ".mps");
    }
    if (n["mrrs"])
    {
        p.mrrs = PowerOfTwoSize(r, n["mrrs"], kPcie + ".mrrs");
    }
    if (n["acs"])
    {
        p.acs = r.Bool(n["acs"], kPcie + ".acs");
    }
    if (n["switch_latency"])
    {
        p.switchLatency = r.Scalar(n["switch_latency"], kPcie + ".switch_latency");
        p.switchLatencyPs =
            r.Duration(n["switch_latency"], kPcie + ".switch_latency", 0, 10'000'000);
    }
    if (n["root_complex"])
    {
        r.CheckMap(n["root_complex"], kPcie + ".root_complex", {"intel_p2p"});
        if (n["root_complex"]["intel_p2p"])
        {
            p.intelP2p = r.Bool(n["root_complex"]["intel_p2p"], kPcie + ".root_complex.intel_p2p");
        }
    }
    if (n["switches"])
    {
        p.switches = ReadSwitches(r, n["switches"]);
        if (!n["gpus"] && !n["nics"])
        {
            p.gpus.clear(); // a preset's devices stood under its own switches
            p.nics.clear();
        }
    }
    if (n["gpus"])
    {
        p.gpus = ReadDevices(r, n["gpus"], "gpus", p.switches.size());
    }
    if (n["nics"])
    {
        p.nics = ReadDevices(r, n["nics"], "nics", p.switches.size());
    }
    CheckServes(r, n, p);
    return p;
}

void
WriteLinkKeys(YAML::Emitter& y, const PcieLinkYaml& l)
{
    if (l.generation)
    {
        y << YAML::Key << "generation" << YAML::Value << l.generation;
    }
    if (l.lanes)
    {
        y << YAML::Key << "lanes" << YAML::Value << l.lanes;
    }
}

void
WriteDevices(YAML::Emitter& y, const std::string& key, const std::vector<PcieDeviceYaml>& devices)
{
    y << YAML::Key << key << YAML::Value << YAML::Flow << YAML::BeginSeq;
    for (const auto& d : devices)
    {
        if (!d.link.generation && !d.link.lanes && d.serves.empty())
        {
            y << d.under;
            continue;
        }
        y << YAML::Flow << YAML::BeginMap << YAML::Key << "under" << YAML::Value << d.under;
        WriteLinkKeys(y, d.link);
        if (!d.serves.empty())
        {
            y << YAML::Key << "serves" << YAML::Value << YAML::Flow << YAML::BeginSeq;
            for (uint32_t g : d.serves)
            {
                y << "gpu" + std::to_string(g);
            }
            y << YAML::EndSeq;
        }
        y << YAML::EndMap;
    }
    y << YAML::EndSeq;
}

std::vector<NvlinkEdgeYaml>
ReadMesh(const Reader& r, const YAML::Node& n, uint32_t gpus)
{
    const std::string what = "topology.node.nvlink.mesh";
    if (!n.IsSequence() || n.size() > 1024)
    {
        r.Fail(n, what + " is a list of {gpus: [a, b], links: N}");
    }
    std::vector<NvlinkEdgeYaml> out;
    for (size_t i = 0; i < n.size(); ++i)
    {
        const std::string where = fmt::format("{}.{}", what, i);
        r.CheckMap(n[i], where, {"gpus", "links"});
        const YAML::Node g = n[i]["gpus"];
        if (!g || !g.IsSequence() || g.size() != 2)
        {
            r.Fail(g ? g : n[i], where + ".gpus is two GPU numbers, [a, b]");
        }
        NvlinkEdgeYaml e;
        e.a = static_cast<uint32_t>(r.Integer(g[0], where + ".gpus.0", 0, 63));
        e.b = static_cast<uint32_t>(r.Integer(g[1], where + ".gpus.1", 0, 63));
        if (e.a == e.b)
        {
            r.Fail(g, fmt::format("{}: a GPU is not linked to itself ({})", where, e.a));
        }
        if (e.a >= gpus || e.b >= gpus)
        {
            r.Fail(g, fmt::format("{}: GPU {} is not one of the {} GPUs", where, std::max(e.a, e.b),
                                  gpus));
        }
        if (n[i]["links"])
        {
            e.links = static_cast<uint32_t>(r.Integer(n[i]["links"], where + ".links", 1, 18));
        }
        out.push_back(e);
    }
    return out;
}

void
WritePcie(YAML::Emitter& y, const PcieNodeYaml& p)
{
    y << YAML::BeginMap;
    y << YAML::Key << "generation" << YAML::Value << p.generation;
    y << YAML::Key << "lanes" << YAML::Value << p.lanes;
    y << YAML::Key << "mps" << YAML::Value << p.mps;
    y << YAML::Key << "mrrs" << YAML::Value << p.mrrs;
    y << YAML::Key << "acs" << YAML::Value << p.acs;
    y << YAML::Key << "switch_latency" << YAML::Value << p.switchLatency;
    y << YAML::Key << "root_complex" << YAML::Value << YAML::Flow << YAML::BeginMap << YAML::Key
      << "intel_p2p" << YAML::Value << p.intelP2p << YAML::EndMap;
    y << YAML::Key << "switches" << YAML::Value << YAML::Flow << YAML::BeginSeq;
    for (const auto& l : p.switches)
    {
        y << YAML::Flow << YAML::BeginMap;
        WriteLinkKeys(y, l);
        y << YAML::EndMap;
    }
    y << YAML::EndSeq;
    WriteDevices(y, "gpus", p.gpus);
    WriteDevices(y, "nics", p.nics);
    y << YAML::EndMap;
}

void
WriteNvlink(YAML::Emitter& y, const NvlinkNodeYaml& v)
{
    y << YAML::BeginMap;
    y << YAML::Key << "generation" << YAML::Value << v.generation;
    y << YAML::Key << "gpus" << YAML::Value << v.gpus;
    y << YAML::Key << "switch_generation" << YAML::Value << v.switchGeneration;
    if (!v.split.empty())
    {
        y << YAML::Key << "split" << YAML::Value << YAML::Flow << v.split;
    }
    else
    {
        y << YAML::Key << "mesh" << YAML::Value << YAML::Flow << YAML::BeginSeq;
        for (const auto& e : v.mesh)
        {
            y << YAML::Flow << YAML::BeginMap << YAML::Key << "gpus" << YAML::Value << YAML::Flow
              << YAML::BeginSeq << e.a << e.b << YAML::EndSeq << YAML::Key << "links" << YAML::Value
              << e.links << YAML::EndMap;
        }
        y << YAML::EndSeq;
    }
    y << YAML::EndMap;
}

const std::string kNvlink = "topology.node.nvlink";

NvlinkNodeYaml
ReadNvlink(const Reader& r, const YAML::Node& n, NvlinkNodeYaml v)
{
    r.CheckMap(n, kNvlink,
               {"generation", "gpus", "switch_generation", "links_per_gpu", "split", "mesh"});
    if (n["generation"])
    {
        v.generation =
            static_cast<uint32_t>(r.Integer(n["generation"], kNvlink + ".generation", 1, 5));
    }
    if (n["gpus"])
    {
        v.gpus = static_cast<uint32_t>(r.Integer(n["gpus"], kNvlink + ".gpus", 2, 64));
    }
    if (n["switch_generation"])
    {
        v.switchGeneration = static_cast<uint32_t>(
            r.Integer(n["switch_generation"], kNvlink + ".switch_generation", 1, 4));
    }
    if (n["split"])
    {
        const YAML::Node sp = n["split"];
        if (!sp.IsSequence() || sp.size() == 0 || sp.size() > 16)
        {
            r.Fail(sp, kNvlink + ".split is a list of 1..16 link counts, one per NVSwitch");
        }
        v.split.clear();
        for (size_t i = 0; i < sp.size(); ++i)
        {
            v.split.push_back(static_cast<uint32_t>(
                r.Integer(sp[i], fmt::format("{}.split.{}", kNvlink, i), 0, 18)));
        }
        v.mesh.clear();
    }
    if (n["mesh"])
    {
        v.mesh = ReadMesh(r, n["mesh"], v.gpus);
        v.split.clear();
    }
    if (n["links_per_gpu"])
    {
        const auto want =
            static_cast<uint32_t>(r.Integer(n["links_per_gpu"], kNvlink + ".links_per_gpu", 1, 72));
        uint32_t sum = 0;
        for (uint32_t l : v.split)
        {
            sum += l;
        }
        if (!v.split.empty() && sum != want)
        {
            r.Fail(n["split"] ? n["split"] : n["links_per_gpu"],
                   fmt::format("{}.split: {} links, but links_per_gpu is {} ({})", kNvlink, sum,
                               want, fmt::join(v.split, " + ")));
        }
    }
    if (v.split.empty() && v.mesh.empty())
    {
        r.Fail(n, kNvlink + " needs a split (links to each NVSwitch) or a mesh (direct links)");
    }
    for (const auto& e : v.mesh)
    {
        if (e.a >= v.gpus || e.b >= v.gpus)
        {
            r.Fail(n["mesh"] ? n["mesh"] : n,
                   fmt::format("{}.mesh: GPU {} is not one of the {} GPUs", kNvlink,
                               std::max(e.a, e.b), v.gpus));
        }
    }
    return v;
}

/// The shipped servers, by name: NVLink and PCIe together (docs/nvlink.md gives sources).
const std::map<std::string, NodeYaml>&
ServerPresets()
{
    static const std::map<std::string, NodeYaml> presets = [] {
        // Two GPUs and two NICs under each of four PCIe switches: GPU k and NIC k share one.
        const auto paired = [](uint32_t generation, uint32_t nicsPerSwitch) {
            PcieNodeYaml p;
            p.generation = generation;
            p.switches.assign(4, PcieLinkYaml{});
            for (uint32_t k = 0; k < 8; ++k)
            {
                p.gpus.push_back(PcieDeviceYaml{"sw" + std::to_string(k / 2), {}, {}});
            }
            for (uint32_t k = 0; k < 4 * nicsPerSwitch; ++k)
            {
                p.nics.push_back(PcieDeviceYaml{"sw" + std::to_string(k / nicsPerSwitch), {}, {}});
            }
            return p;
        };
        const auto server = [](const std::string& name, PcieNodeYaml pcie, NvlinkNodeYaml nv,
                               bool nvlink, const std::string& nicRate) {
            NodeYaml n;
            n.preset = name;
            n.nicRate = nicRate;
            n.hasPcie = true;
            n.pcie = std::move(pcie);
            n.hasNvlink = nvlink;
            n.nvlink = std::move(nv);
            return n;
        };
        std::map<std::string, NodeYaml> m;
        NvlinkNodeYaml h100; // NVLink4, 18 links split 5/4/4/5 over four gen3 NVSwitches
        h100.generation = 4;
        h100.switchGeneration = 3;
        h100.split = {5, 4, 4, 5};
        m["dgx-h100"] = server("dgx-h100", paired(5, 2), h100, true, "400Gbps"); // ConnectX-7
        NvlinkNodeYaml a100; // NVLink3, 12 links, two to each of six gen2 NVSwitches
        a100.generation = 3;
        a100.switchGeneration = 2;
        a100.split = {2, 2, 2, 2, 2, 2};
        m["dgx-a100"] = server("dgx-a100", paired(4, 2), a100, true, "200Gbps"); // ConnectX-6
        NvlinkNodeYaml b200; // NVLink5, 18 links, nine to each of two NVLink Switch chips
        b200.generation = 5;
        b200.switchGeneration = 4;
        b200.split = {9, 9};
        m["hgx-b200"] = server("hgx-b200", paired(5, 2), b200, true, "400Gbps"); // ConnectX-7
        NvlinkNodeYaml cube; // DGX-1 (P100): NVLink1 hybrid cube mesh, 4 links per GPU
        cube.generation = 1;
        for (uint32_t q : {0u, 4u})
        {
            for (uint32_t a = 0; a < 4; ++a)
            {
                for (uint32_t b = a + 1; b < 4; ++b)
                {
                    cube.mesh.push_back({q + a, q + b, 1});
                }
            }
        }
        for (uint32_t a = 0; a < 4; ++a)
        {
            cube.mesh.push_back({a, a + 4, 1});
        }
        m["dgx-1"] = server("dgx-1", paired(3, 1), cube, true, "100Gbps"); // 4 x EDR InfiniBand
        m["pcie-8gpu"] = server("pcie-8gpu", PciePresets().at("pcie-8gpu"), {}, false, "");
        NodeYaml pool; // every server's CPU on one CXL 2.0 switch and its pooled expander
        pool.preset = "cxl-pool";
        pool.hasCxl = true;
        pool.cxl.hasPool = true;
        m["cxl-pool"] = pool;
        return m;
    }();
    return presets;
}

const std::string kCxl = "topology.node.cxl";

/// An expander's keys of map \p n (the caller has checked its keys).
CxlExpanderYaml
ReadExpander(const Reader& r, const YAML::Node& n, const std::string& where, CxlExpanderYaml e)
{
    if (n["capacity"])
    {
        e.capacity = r.Bytes(n["capacity"], where + ".capacity", 1 << 20, uint64_t{1} << 50);
    }
    if (n["dram_rate"])
    {
        e.dramBitsPerSecond = r.Rate(n["dram_rate"], where + ".dram_rate");
    }
    if (n["dram_latency"])
    {
        e.dramLatencyPs = r.Duration(n["dram_latency"], where + ".dram_latency", 0, 10'000'000);
    }
    if (n["shares"])
    {
        // Checked against the PCIe tree once the whole node is read (ValidateTopology).
        e.shares = r.Scalar(n["shares"], where + ".shares");
    }
    return e;
}

void
ReadPool(const Reader& r, const YAML::Node& n, CxlNodeYaml& c)
{
    const std::string where = kCxl + ".pool";
    r.CheckMap(n, where, {"hosts", "switches", "capacity", "dram_rate", "dram_latency"});
    c.hasPool = true;
    const YAML::Node hosts = n["hosts"];
    c.poolHosts.clear(); // all, unless listed
    if (hosts && !(hosts.IsScalar() && hosts.Scalar() == "all"))
    {
        // Checked against the topology's servers once it is known (ValidateTopology).
        c.poolHosts = r.Hosts(hosts, where + ".hosts", UINT32_MAX);
    }
    c.poolSwitches.clear();
    if (const YAML::Node switches = n["switches"])
    {
        if (!switches.IsSequence() || switches.size() == 0)
        {
            r.Fail(switches, where + ".switches is a list of switches, each a list of servers "
                                     "([[h0, h1], [h2, h3]])");
        }
        for (size_t k = 0; k < switches.size(); ++k)
        {
            const std::string what = fmt::format("{}.switches.{}", where, k);
            if (!switches[k].IsSequence())
            {
                r.Fail(switches[k], what + " is a list of the servers on that switch ([h0, h1])");
            }
            c.poolSwitches.push_back(r.Hosts(switches[k], what, UINT32_MAX));
        }
    }
    c.pool = ReadExpander(r, n, where, c.pool);
}

CxlNodeYaml
ReadCxl(const Reader& r, const YAML::Node& n, CxlNodeYaml c)
{
    r.CheckMap(n, kCxl, {"version", "gts", "lanes", "flit", "expanders", "switch_latency", "pool"});
    if (n["version"])
    {
        c.version = r.Choice(n["version"], kCxl + ".version", {"1.1", "2.0", "3.0", "3.1", "ccix"});
    }
    if (n["gts"])
    {
        c.gigaTransfers = r.Number(n["gts"], kCxl + ".gts", 1, 64);
        const std::vector<double> rates{2.5, 5, 8, 16, 25, 32, 64};
        if (std::find(rates.begin(), rates.end(), c.gigaTransfers) == rates.end())
        {
            r.Fail(n["gts"], fmt::format("{}.gts: {} GT/s is not a CXL rate (2.5, 5, 8, 16, 32, "
                                         "64; ccix also 25)",
                                         kCxl, n["gts"].Scalar()));
        }
    }
    if (n["lanes"])
    {
        c.lanes = Lanes(r, n["lanes"], kCxl + ".lanes");
    }
    if (n["flit"])
    {
        c.flit = r.Choice(n["flit"], kCxl + ".flit", {"68", "256", "256-lopt"});
    }
    if (const YAML::Node e = n["expanders"])
    {
        c.expanders.clear();
        if (e.IsScalar())
        {
            c.expanders.resize(r.Integer(e, kCxl + ".expanders", 0, 16));
        }
        else if (!e.IsSequence())
        {
            r.Fail(e, kCxl + ".expanders must be a count or a list of {capacity, dram_rate, "
                             "dram_latency}");
        }
        if (e.IsSequence() && e.size() > 16)
        {
            r.Fail(e, fmt::format("{}.expanders: {} expanders; at most 16 on one CPU", kCxl,
                                  e.size()));
        }
        for (size_t i = 0; e.IsSequence() && i < e.size(); ++i)
        {
            const std::string where = fmt::format("{}.expanders.{}", kCxl, i);
            r.CheckMap(e[i], where, {"capacity", "dram_rate", "dram_latency", "shares"});
            c.expanders.push_back(ReadExpander(r, e[i], where, {}));
        }
    }
    if (n["switch_latency"])
    {
        c.switchLatencyPs =
            r.Duration(n["switch_latency"], kCxl + ".switch_latency", 0, 10'000'000);
    }
    if (n["pool"])
    {
        ReadPool(r, n["pool"], c);
    }
    return c;
}

void
WriteExpanderKeys(YAML::Emitter& y, const CxlExpanderYaml& e)
{
    y << YAML::Key << "capacity" << YAML::Value << e.capacity;
    y << YAML::Key << "dram_rate" << YAML::Value << fmt::format("{}bps", e.dramBitsPerSecond);
    y << YAML::Key << "dram_latency" << YAML::Value << fmt::format("{}ps", e.dramLatencyPs);
    if (!e.shares.empty())
    {
        y << YAML::Key << "shares" << YAML::Value << e.shares;
    }
}

void
WriteCxl(YAML::Emitter& y, const CxlNodeYaml& c)
{
    y << YAML::BeginMap;
    y << YAML::Key << "version" << YAML::Value << c.version;
    if (c.gigaTransfers > 0)
    {
        y << YAML::Key << "gts" << YAML::Value << c.gigaTransfers;
    }
    y << YAML::Key << "lanes" << YAML::Value << c.lanes;
    if (!c.flit.empty())
    {
        y << YAML::Key << "flit" << YAML::Value << c.flit;
    }
    y << YAML::Key << "expanders" << YAML::Value << YAML::Flow << YAML::BeginSeq;
    for (const auto& e : c.expanders)
    {
        y << YAML::Flow << YAML::BeginMap;
        WriteExpanderKeys(y, e);
        y << YAML::EndMap;
    }
    y << YAML::EndSeq;
    y << YAML::Key << "switch_latency" << YAML::Value << fmt::format("{}ps", c.switchLatencyPs);
    if (c.hasPool)
    {
        y << YAML::Key << "pool" << YAML::Value << YAML::Flow << YAML::BeginMap;
        y << YAML::Key << "hosts" << YAML::Value;
        if (c.poolHosts.empty())
        {
            y << "all";
        }
        else
        {
            y << YAML::Flow << YAML::BeginSeq;
            for (uint32_t h : c.poolHosts)
            {
                y << "h" + std::to_string(h);
            }
            y << YAML::EndSeq;
        }
        if (!c.poolSwitches.empty())
        {
            y << YAML::Key << "switches" << YAML::Value << YAML::Flow << YAML::BeginSeq;
            for (const auto& hosts : c.poolSwitches)
            {
                y << YAML::Flow << YAML::BeginSeq;
                for (uint32_t h : hosts)
                {
                    y << "h" + std::to_string(h);
                }
                y << YAML::EndSeq;
            }
            y << YAML::EndSeq;
        }
        WriteExpanderKeys(y, c.pool);
        y << YAML::EndMap;
    }
    y << YAML::EndMap;
}

std::vector<std::string>
ServerNames()
{
    return NamesOf(ServerPresets());
}

} // namespace

void
ReadNode(const ReadContext& c, const YAML::Node& n, TopologyYaml& t)
{
    t.node = NodeYaml{};
    if (n.IsScalar())
    {
        t.node =
            ServerPresets().at(c.r.Choice(n, "topology.node (a server preset)", ServerNames()));
        return;
    }
    c.r.CheckMap(n, "topology.node", {"preset", "pcie", "nvlink", "cxl"});
    if (n["preset"])
    {
        t.node = ServerPresets().at(c.r.Choice(n["preset"], "topology.node.preset", ServerNames()));
    }
    if (n["pcie"])
    {
        t.node.hasPcie = true;
        t.node.pcie = ReadPcie(c.r, n["pcie"]);
    }
    if (n["nvlink"])
    {
        t.node.nvlink =
            ReadNvlink(c.r, n["nvlink"], t.node.hasNvlink ? t.node.nvlink : NvlinkNodeYaml{});
        t.node.hasNvlink = true;
    }
    if (n["cxl"])
    {
        t.node.cxl = ReadCxl(c.r, n["cxl"], t.node.hasCxl ? t.node.cxl : CxlNodeYaml{});
        t.node.hasCxl = true;
    }
    if (t.node.hasNvlink && t.node.hasPcie && !t.node.pcie.gpus.empty() &&
        t.node.nvlink.gpus != t.node.pcie.gpus.size())
    {
        c.r.Fail(
            n["nvlink"] ? n["nvlink"] : n,
            fmt::format("topology.node.nvlink.gpus: {} GPUs on NVLink, but the PCIe tree has {}",
                        t.node.nvlink.gpus, t.node.pcie.gpus.size()));
    }
}

void
WriteNode(YAML::Emitter& y, const TopologyYaml& t)
{
    y << YAML::BeginMap;
    if (t.node.hasPcie)
    {
        y << YAML::Key << "pcie" << YAML::Value;
        WritePcie(y, t.node.pcie);
    }
    if (t.node.hasNvlink)
    {
        y << YAML::Key << "nvlink" << YAML::Value;
        WriteNvlink(y, t.node.nvlink);
    }
    if (t.node.hasCxl)
    {
        y << YAML::Key << "cxl" << YAML::Value;
        WriteCxl(y, t.node.cxl);
    }
    y << YAML::EndMap;
}

namespace
{

/// Where a GPU or NIC sits in the PCIe tree: "swK", "root", or "" (not on PCIe).
std::string
PcieParent(const NodeYaml& node, bool gpu, uint32_t k)
{
    if (!node.hasPcie)
    {
        return "";
    }
    const auto& devices = gpu ? node.pcie.gpus : node.pcie.nics;
    return k < devices.size() ? devices[k].under : "";
}

std::string
Cell(const NodeYaml& node, bool gpuA, uint32_t a, bool gpuB, uint32_t b)
{
    if (gpuA == gpuB && a == b)
    {
        return "X";
    }
    if (gpuA && gpuB && node.hasNvlink && node.nvlink.Reaches(a, b))
    {
        return "NV" + std::to_string(node.nvlink.LinksBetween(a, b));
    }
    const std::string pa = PcieParent(node, gpuA, a);
    const std::string pb = PcieParent(node, gpuB, b);
    if (pa.empty() || pb.empty())
    {
        return "-";
    }
    return pa == pb && pa != "root" ? "PIX" : "PHB";
}

} // namespace

std::string
NodeTopologyMatrix(const NodeYaml& node)
{
    std::vector<std::pair<bool, uint32_t>> devices; // (GPU?, index)
    for (uint32_t k = 0; k < node.Gpus(); ++k)
    {
        devices.emplace_back(true, k);
    }
    for (uint32_t k = 0; node.hasPcie && k < node.pcie.nics.size(); ++k)
    {
        devices.emplace_back(false, k);
    }
    const auto name = [](const std::pair<bool, uint32_t>& d) {
        return (d.first ? "GPU" : "NIC") + std::to_string(d.second);
    };
    const auto line = [](std::string row) {
        row.erase(row.find_last_not_of(' ') + 1);
        return row + "\n";
    };
    std::string row = fmt::format("{:<7}", "");
    for (const auto& d : devices)
    {
        row += fmt::format("{:<7}", name(d));
    }
    std::string out = line(row);
    for (const auto& r : devices)
    {
        row = fmt::format("{:<7}", name(r));
        for (const auto& c : devices)
        {
            row += fmt::format("{:<7}", Cell(node, r.first, r.second, c.first, c.second));
        }
        out += line(row);
    }
    out += "\nLegend:\n"
           "  X    = Self\n"
           "  NV#  = Connection traversing a bonded set of # NVLinks\n"
           "  PIX  = Connection traversing at most a single PCIe switch\n"
           "  PHB  = Connection traversing PCIe as well as a PCIe Host Bridge (the root complex)\n"
           "  -    = No path on NVLink or PCIe\n";
    if (devices.empty())
    {
        out.clear(); // no GPU or NIC: no matrix (a server with CXL memory only)
    }
    if (node.hasCxl)
    {
        // CXL memory is the CPU's: a line per expander rather than matrix cells.
        const ns3::CxlLinkSpec link = CxlLinkOf(node.cxl);
        out += fmt::format("{}CXL {} x{} at {} GT/s, {}-byte flits ({:.2f} GB/s of reads per "
                           "link):\n",
                           out.empty() ? "" : "\n", link.version, link.lanes, link.gigaTransfers,
                           ns3::CxlFlitModeName(link.mode),
                           link.LineBytesPerSecond(ns3::CxlMessageType::S2mDrs) / 1e9);
        const auto expander = [](const std::string& label, const CxlExpanderYaml& e) {
            return fmt::format("  {:<6} {} GiB, DRAM {:.1f} GB/s, {} ns\n", label, e.capacity >> 30,
                               e.dramBitsPerSecond / 8e9, e.dramLatencyPs / 1000.0);
        };
        for (size_t k = 0; k < node.cxl.expanders.size(); ++k)
        {
            out += expander("cxl" + std::to_string(k), node.cxl.expanders[k]);
            if (!node.cxl.expanders[k].shares.empty())
            {
                out += fmt::format("         on one root port with {} (a CXL switch)\n",
                                   node.cxl.expanders[k].shares);
            }
        }
        if (node.cxl.hasPool)
        {
            out += expander("pool", node.cxl.pool);
            out += node.cxl.poolHosts.empty()
                       ? "         shared through a CXL switch by every server\n"
                       : fmt::format("         shared through a CXL switch by h{}\n",
                                     fmt::join(node.cxl.poolHosts, ", h"));
            for (size_t k = 0; k < node.cxl.poolSwitches.size(); ++k)
            {
                out += fmt::format("         under it switch {}: h{} (port-based routing)\n", k,
                                   fmt::join(node.cxl.poolSwitches[k], ", h"));
            }
        }
    }
    return out;
}

std::vector<std::string>
ServerPresetNames()
{
    return ServerNames();
}

std::vector<std::string>
PciePresetNames()
{
    return PresetNames();
}

} // namespace fabemu
