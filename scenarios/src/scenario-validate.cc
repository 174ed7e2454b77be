// Cross-key checks: what one key's value says about another's, once both are read.
#include "scenarios/src/scenario-keys.h"

#include <fmt/format.h>

#include <algorithm>
#include <tuple>

namespace fabemu
{

namespace
{

/// The node at \p path, else at \p fallback (a key given by --set may have made neither).
YAML::Node
At(const YAML::Node& root, const std::string& path, const std::string& fallback = "")
{
    const YAML::Node n = NodeAt(root, path);
    if (n || fallback.empty())
    {
        return n;
    }
    return NodeAt(root, fallback);
}

[[noreturn]] void
FailAt(const Reader& r, const YAML::Node& n, const std::string& what)
{
    if (n)
    {
        r.Fail(n, what);
    }
    r.Fail(SourceMark{}, what);
}

bool
IsVm(const Scenario& s, uint32_t h)
{
    return std::any_of(s.endpoints.begin(), s.endpoints.end(),
                       [h](const EndpointSpec& e) { return e.index == h; });
}

/// Host \p h's endpoint kind (vm, netns), or "" when it is simulated.
std::string
KindOf(const Scenario& s, uint32_t h)
{
    for (const auto& e : s.endpoints)
    {
        if (e.index == h)
        {
            return e.kind;
        }
    }
    return "";
}

void
ValidateFabric(const Reader& r, const YAML::Node& root, const Scenario& s)
{
    const auto& fab = s.fabric;
    if (fab.type == "roce" && fab.kmin > fab.kmax)
    {
        FailAt(r, At(root, "fabric.ecn", "fabric"),
               fmt::format("fabric.ecn: kmin ({}) is above kmax ({})", fab.kmin, fab.kmax));
    }
}

void
ValidateEndpoints(const Reader& r, const YAML::Node& root, const Scenario& s)
{
    for (const auto& ep : s.endpoints)
    {
        const std::string device = "endpoints." + ep.host + ".device";
        if (ep.device == "none" && ep.kind != "netns")
        {
            FailAt(r, At(root, device),
                   fmt::format("endpoints.{}.device: none (plain IP, no RDMA device) is for kind: "
                               "netns; a VM endpoint has rxe or siw",
                               ep.host));
        }
    }
    for (const auto& ep : s.endpoints)
    {
        const YAML::Node device = At(root, "endpoints." + ep.host + ".device");
        if (s.fabric.type == "infiniband" && ep.device == "siw")
        {
            FailAt(r, device,
                   fmt::format("endpoints.{}.device: siw speaks iWARP; on fabric.type "
                               "infiniband the endpoints are rxe, whose RoCEv2 the edge "
                               "gateways carry as IB",
                               ep.host));
        }
        if (s.fabric.type == "infiniband" && ep.device == "none")
        {
            FailAt(r, device,
                   fmt::format("endpoints.{}.device: none sends plain IP, which an "
                               "infiniband fabric does not carry (its edges carry RoCEv2 "
                               "as IB); use rxe",
                               ep.host));
        }
        if (s.fabric.type == "iwarp" && ep.device == "rxe")
        {
            FailAt(r, device,
                   fmt::format("endpoints.{}.device: rxe speaks RoCEv2; on fabric.type "
                               "iwarp the endpoints are siw",
                               ep.host));
        }
    }
    if (s.fabric.type == "infiniband" && s.HasVms() && s.fabric.cc == "ibcc")
    {
        FailAt(
            r, At(root, "fabric.cc", "endpoints"),
            "fabric.cc ibcc with VM endpoints: the gateways do not pace the VMs' flows (yet); use "
            "cc: none");
    }
    if (s.topology.builder == "rail" && !s.record.pcap.empty())
    {
        FailAt(r, At(root, "record.pcap", "record"),
               "record.pcap on a rail cluster: capturing a server's rail ports is not built yet");
    }
    if (!s.record.pcieTrace.empty() && !s.topology.node.hasPcie)
    {
        FailAt(r, At(root, "record.pcie_trace", "record"),
               "record.pcie_trace: the servers have no PCIe tree (give topology.node.pcie)");
    }
    if (s.HasVms() && (s.topology.node.hasPcie || s.topology.node.hasCxl))
    {
        FailAt(r, At(root, "topology.node", "endpoints"),
               "topology.node with endpoints: a real endpoint brings its own host, whose PCIe "
               "and memory are not modelled; give topology.node to simulation scenarios");
    }
    if (s.endpoints.size() > 16)
    {
        FailAt(r, At(root, "endpoints"),
               fmt::format("endpoints: {} VMs; at most 16 run on one host", s.endpoints.size()));
    }
}

bool
InNode(const Scenario& s, const std::string& device)
{
    const auto names = s.topology.node.Endpoints();
    return std::find(names.begin(), names.end(), device) != names.end();
}

/// A dma workload: two devices of one server's PCIe tree, a DMA engine at src.
void
ValidateDma(const Reader& r, const YAML::Node& item, const Scenario& s, const WorkloadSpec& wl)
{
    const std::string where = "workload 'dma'";
    if (!s.topology.node.hasPcie)
    {
        FailAt(r, item,
               where + " moves bytes inside a server over PCIe; give the servers a tree "
                       "with topology.node.pcie");
    }
    // The ends a dma can have: the PCIe tree's devices and host memory (not CXL's).
    const auto isPcie = [](const std::string& name) {
        return name.rfind("gpu", 0) == 0 || name.rfind("nic", 0) == 0 || name == "mem";
    };
    std::vector<std::string> onPcie;
    for (const auto& name : s.topology.node.Endpoints())
    {
        if (isPcie(name))
        {
            onPcie.push_back(name);
        }
    }
    const auto device = [&](const char* key, const std::string& name, bool memOk) {
        if (name.empty() || !isPcie(name) || !InNode(s, name) || (!memOk && name == "mem"))
        {
            const uint32_t host = key[0] == 's' ? wl.src : wl.dst;
            FailAt(r, item[key],
                   fmt::format("{}.{}: '{}' is not {} of h{} (it has {})", where, key,
                               name.empty() ? "h" + std::to_string(host) : name,
                               memOk ? "a device or the memory"
                                     : "a GPU or NIC, whose DMA engine "
                                       "moves the bytes,",
                               host, fmt::join(onPcie, ", ")));
        }
    };
    device("src", wl.srcDevice, false);
    device("dst", wl.dstDevice, true);
    if (const int64_t k = s.topology.node.hasCxl ? s.topology.node.cxl.SharedBy(wl.srcDevice) : -1;
        k >= 0 && (wl.dstDevice != "mem" || wl.op != "write"))
    {
        FailAt(r, item,
               fmt::format("{}: {} shares cxl{}'s root port, where its DMA writes host memory "
                           "(dst: h{}.mem, op: write) over CXL.io; other transfers of it are "
                           "not built",
                           where, wl.srcDevice, k, wl.src));
    }
    if (wl.src != wl.dst)
    {
        FailAt(r, item["dst"],
               fmt::format("{}: a dma stays inside one server, but src is in h{} and dst in h{} "
                           "(between servers, use an RDMA workload with src_mem/dst_mem)",
                           where, wl.src, wl.dst));
    }
    if (wl.srcDevice == wl.dstDevice)
    {
        FailAt(r, item["dst"], fmt::format("{}: src and dst are both {}", where, wl.srcDevice));
    }
    if (wl.op == "send")
    {
        FailAt(r, item["op"], where + ".op: a dma is a write or a read, not send");
    }
}

/// A memory workload: a server's CPU loading from and storing to its own memory over CXL.
void
ValidateMemory(const Reader& r, const YAML::Node& item, const Scenario& s, const WorkloadSpec& wl)
{
    const std::string where = "workload 'memory'";
    const CxlNodeYaml& cxl = s.topology.node.cxl;
    if (!s.topology.node.hasCxl)
    {
        FailAt(r, item,
               where + " loads and stores over CXL; give the servers CXL memory with "
                       "topology.node.cxl (or the preset cxl-pool)");
    }
    if (wl.onDevice != "cpu")
    {
        FailAt(r, item["on"],
               fmt::format("{}.on: '{}' is not a CPU; name the server's CPU, h{}.cpu", where,
                           wl.onDevice.empty() ? "h" + std::to_string(wl.on) : wl.onDevice, wl.on));
    }
    const std::string target = fmt::format("h{}.{}", wl.dst, wl.dstDevice);
    if (wl.dstDevice == "cpu" || !InNode(s, wl.dstDevice) || wl.dstDevice.rfind("gpu", 0) == 0 ||
        wl.dstDevice.rfind("nic", 0) == 0)
    {
        FailAt(r, item["target"],
               fmt::format("{}.target: '{}' is not memory of h{} (it has mem{}{})", where,
                           wl.dstDevice.empty() ? target : wl.dstDevice, wl.dst,
                           cxl.expanders.empty()
                               ? std::string()
                               : fmt::format(", cxl0..cxl{}", cxl.expanders.size() - 1),
                           cxl.hasPool ? ", pool" : ""));
    }
    if (wl.dst != wl.on)
    {
        FailAt(r, item["target"],
               fmt::format("{}.target: {} is memory of h{}, but the CPU is h{}'s; a CPU reaches "
                           "its own server's memory (another server's only through the pool, "
                           "as h{}.pool)",
                           where, target, wl.dst, wl.on, wl.on));
    }
    if (wl.dstDevice == "pool" && !cxl.InPool(wl.on))
    {
        FailAt(r, item["target"],
               fmt::format("{}.target: h{} is not wired to the pool's switch (pool.hosts: h{})",
                           where, wl.on, fmt::join(cxl.poolHosts, ", h")));
    }
    if ((wl.bytes > 0) == (wl.memoryDurationPs > 0))
    {
        FailAt(r, item, where + ": give bytes or duration (one of them)");
    }
    if (!wl.sizes.empty())
    {
        FailAt(r, item["bytes"],
               where + ".bytes: a sweep of sizes is for collective workloads; "
                       "sweep memory load with several workloads at rising "
                       "rates");
    }
    if (wl.startPs + wl.memoryDurationPs >= s.durationPs)
    {
        FailAt(r, item["duration"] ? item["duration"] : item["start"],
               where + ": start + duration must end before the scenario's duration, which "
                       "leaves the requests in flight time to complete");
    }
    if (IsVm(s, wl.on))
    {
        FailAt(r, item["on"],
               fmt::format("{}: h{} is a VM endpoint; memory workloads run on simulated servers",
                           where, wl.on));
    }
    if (s.fidelity == "analytical")
    {
        FailAt(r, item,
               where + ": fidelity analytical times collectives only; memory "
                       "traffic needs the packet mode");
    }
}

/// A copy: GPU to GPU, inside a server (NVLink, else PCIe) or between servers (RDMA).
void
ValidateCopy(const Reader& r, const YAML::Node& item, const Scenario& s, const WorkloadSpec& wl)
{
    const std::string where = "workload 'copy'";
    const NodeYaml& node = s.topology.node;
    for (const auto& [key, host, device] :
         {std::tuple<const char*, uint32_t, std::string>{"src", wl.src, wl.srcDevice},
          std::tuple<const char*, uint32_t, std::string>{"dst", wl.dst, wl.dstDevice}})
    {
        if (device.rfind("gpu", 0) != 0 || !InNode(s, device))
        {
            FailAt(r, item[key],
                   fmt::format("{}.{}: '{}' is not a GPU of h{} ({})", where, key,
                               device.empty() ? "h" + std::to_string(host) : device, host,
                               node.Gpus() == 0
                                   ? "its servers have none: give topology.node"
                                   : fmt::format("it has gpu0..gpu{}", node.Gpus() - 1)));
        }
    }
    if (wl.op != "write")
    {
        FailAt(r, item["op"], where + ".op: a copy writes; it has no " + wl.op);
    }
    if (wl.src == wl.dst)
    {
        if (wl.srcDevice == wl.dstDevice)
        {
            FailAt(r, item["dst"], fmt::format("{}: src and dst are both {}", where, wl.srcDevice));
        }
        if (!node.NvlinkJoins(wl.srcDevice, wl.dstDevice) && !node.hasPcie)
        {
            FailAt(r, item["dst"],
                   fmt::format("{}: no NVLink joins {} and {}, and the server has no PCIe tree "
                               "to carry it",
                               where, wl.srcDevice, wl.dstDevice));
        }
        return;
    }
    if (s.topology.builder == "node")
    {
        FailAt(r, item["dst"],
               where + ": the node builder is one server; a copy to another needs "
                       "a network");
    }
    if (!node.hasPcie || node.pcie.nics.empty())
    {
        FailAt(r, item["dst"],
               fmt::format("{}: between servers a copy goes GPU -> PCIe -> NIC; give the servers "
                           "a PCIe tree with a NIC",
                           where));
    }
}

/// An RDMA workload between servers: its NICs stage WRITEs through PCIe when topology.node
/// has a tree; src_mem and dst_mem pick the memory.
void
ValidateStaging(const Reader& r, const YAML::Node& item, const Scenario& s, const WorkloadSpec& wl)
{
    const std::string where = "workload '" + wl.type + "'";
    for (const auto& [key, device, memory] :
         {std::tuple<const char*, std::string, std::string>{"src", wl.srcDevice, wl.srcMemory},
          std::tuple<const char*, std::string, std::string>{"dst", wl.dstDevice, wl.dstMemory}})
    {
        // A GPU may stand for its server: hN.gpuK is hN with its NIC reading or writing gpuK.
        const bool gpu = device.rfind("gpu", 0) == 0 && s.topology.node.hasPcie;
        if (!device.empty() && !gpu)
        {
            FailAt(r, item[key],
                   fmt::format("{}.{}: '{}' is inside a server; {} flows run between hosts or "
                               "their GPUs (a dma workload moves bytes inside one server)",
                               where, key, device, wl.type));
        }
        if (gpu && memory != "host" && memory != device)
        {
            FailAt(r, item[key],
                   fmt::format("{}.{}: names {}, but {}_mem says {}", where, key, device, key,
                               memory));
        }
    }
    if (s.topology.builder == "node")
    {
        FailAt(r, item,
               fmt::format("{}: the node builder is one server without a network; "
                           "its workloads are dma",
                           where));
    }
    for (const auto& [key, memory] :
         {std::pair<const char*, std::string>{"src_mem",
                                              wl.srcDevice.empty() ? wl.srcMemory : wl.srcDevice},
          std::pair<const char*, std::string>{"dst_mem",
                                              wl.dstDevice.empty() ? wl.dstMemory : wl.dstDevice}})
    {
        if (!s.topology.node.hasPcie && memory != "host")
        {
            FailAt(r, item[key],
                   fmt::format("{}.{}: '{}' is a memory inside a server; give the servers a PCIe "
                               "tree with topology.node.pcie",
                               where, key, memory));
        }
        if (s.topology.node.hasPcie && memory != "host" &&
            (memory.rfind("gpu", 0) != 0 || !InNode(s, memory)))
        {
            FailAt(r, item[key],
                   fmt::format("{}.{}: no GPU '{}' in the servers (host{})", where, key, memory,
                               s.topology.node.pcie.gpus.empty()
                                   ? ": they have none"
                                   : fmt::format(", or gpu0..gpu{}",
                                                 s.topology.node.pcie.gpus.size() - 1)));
        }
    }
    if (!s.topology.node.hasPcie)
    {
        return;
    }
    if (s.topology.node.pcie.nics.empty())
    {
        FailAt(r, item,
               fmt::format("{}: topology.node.pcie has no NIC; RDMA between servers goes through "
                           "nic0 (add nics: [root] or a switch)",
                           where));
    }
    if (wl.op != "write")
    {
        FailAt(r, item["op"] ? item["op"] : item,
               fmt::format("{}.op: with topology.node.pcie, RDMA runs as WRITEs staged through "
                           "PCIe; a {} through PCIe is not modelled yet",
                           where, wl.op));
    }
}

/// A collective's ranks: hosts of the network (no servers inside), or GPUs that NVLink
/// joins inside each server, on one server or, over a network that their NICs reach
/// through PCIe (GPUDirect RDMA), on several; every rank simulated.
/// nvls: GPU ranks of one server whose NVSwitches sum (gen3 on).
void
ValidateNvls(const Reader& r, const YAML::Node& item, const Scenario& s, const WorkloadSpec& wl)
{
    const std::string where = "workload 'collective'.algorithm nvls";
    const NodeYaml& node = s.topology.node;
    const std::string server = node.preset.empty() ? "the server" : node.preset;
    if (wl.rankDevices.empty())
    {
        FailAt(r, item["algorithm"],
               fmt::format("{}: NVLS sums in a server's NVSwitches; the ranks are hosts, give "
                           "GPUs (h0.gpu0)",
                           where));
    }
    for (uint32_t h : wl.hosts)
    {
        if (h != wl.hosts.front())
        {
            FailAt(r, item["algorithm"],
                   fmt::format("{}: the ranks are on h{} and h{}; NVLS across servers (NCCL's "
                               "NVLS with a tree) is not built, only inside one server",
                               where, wl.hosts.front(), h));
        }
    }
    if (!node.hasNvlink || node.nvlink.split.empty())
    {
        FailAt(r, item["algorithm"],
               fmt::format("{}: {} has no NVSwitch ({}); NVLS sums in NVSwitches", where, server,
                           node.hasNvlink ? "its GPUs' NVLinks join them directly" : "no NVLink"));
    }
    if (node.nvlink.switchGeneration < 3)
    {
        FailAt(r, item["algorithm"],
               fmt::format("{}: {}'s NVSwitches are gen{}; NVLS needs gen3 or later (NVLink "
                           "SHARP, from H100 on)",
                           where, server, node.nvlink.switchGeneration));
    }
}

void
ValidateCollective(const Reader& r, const YAML::Node& item, const Scenario& s,
                   const WorkloadSpec& wl)
{
    const std::string where = "workload 'collective'";
    const NodeYaml& node = s.topology.node;
    const YAML::Node ranks = item["ranks"] ? item["ranks"] : item;
    const bool servers = node.hasPcie || node.hasNvlink;
    if (wl.rankDevices.empty() && servers)
    {
        FailAt(r, ranks,
               fmt::format("{}: with topology.node the ranks are GPUs (h0.gpu3); ranks that are "
                           "whole servers are not built yet",
                           where));
    }
    if (!wl.rankDevices.empty())
    {
        if (!servers)
        {
            FailAt(r, ranks, fmt::format("{}: GPU ranks need servers (topology.node)", where));
        }
        for (size_t i = 0; i < wl.hosts.size(); ++i)
        {
            const std::string name = wl.RankName(i);
            if (DeviceNumber(wl.rankDevices[i]) >= node.Gpus())
            {
                FailAt(r, ranks[i],
                       fmt::format("{}: there is no {}: a server has gpu0..gpu{}", where, name,
                                   node.Gpus() - 1));
            }
            if (wl.hosts[i] != wl.hosts[0])
            {
                if (s.topology.builder == "node")
                {
                    FailAt(r, ranks[i],
                           fmt::format("{}: {} is on another server than h{}, but the node "
                                       "builder is one server without a network",
                                       where, name, wl.hosts[0]));
                }
                if (!node.hasPcie || node.pcie.nics.empty())
                {
                    FailAt(r, ranks[i],
                           fmt::format("{}: {} is on another server than h{}: between servers "
                                       "ranks go GPU -> PCIe -> NIC; give the servers a PCIe "
                                       "tree with a NIC",
                                       where, name, wl.hosts[0]));
                }
            }
            for (size_t j = 0; j < i && node.hasNvlink && !node.hasPcie; ++j)
            {
                // NVLink carries the pairs it joins, the server's PCIe tree the others.
                if (wl.hosts[j] == wl.hosts[i] &&
                    !node.NvlinkJoins(wl.rankDevices[j], wl.rankDevices[i]))
                {
                    FailAt(r, ranks[i],
                           fmt::format("{}: NVLink does not join {} and {}, and the server has "
                                       "no PCIe tree to carry them",
                                       where, wl.RankName(j), name));
                }
            }
        }
    }
    for (uint32_t h : wl.hosts)
    {
        if (IsVm(s, h))
        {
            FailAt(r, ranks,
                   fmt::format("{}: h{} is a VM endpoint; collectives run between simulated "
                               "hosts",
                               where, h));
        }
    }
    if (wl.algorithm == "nvls")
    {
        ValidateNvls(r, item, s, wl);
    }
}

void
ValidateWorkload(const Reader& r, const YAML::Node& item, const Scenario& s, const WorkloadSpec& wl)
{
    const std::string where = "workload '" + wl.type + "'";
    if (wl.type == "command")
    {
        if (!wl.onDevice.empty())
        {
            FailAt(r, item["on"],
                   fmt::format("{}.on: a command runs on a VM endpoint, hN, not on '{}'", where,
                               wl.onDevice));
        }
        if (!IsVm(s, wl.on))
        {
            FailAt(r, item["on"],
                   fmt::format("{}: h{} is simulated; commands run on VM endpoints (add "
                               "it under endpoints:)",
                               where, wl.on));
        }
        return;
    }
    if (wl.type == "launch")
    {
        for (const uint32_t h : wl.hosts) // (the hosts' reader refuses one named twice)
        {
            const auto e = std::find_if(s.endpoints.begin(), s.endpoints.end(),
                                        [h](const EndpointSpec& x) { return x.index == h; });
            if (e == s.endpoints.end() || e->kind != "vm")
            {
                FailAt(r, item["on"],
                       fmt::format("{}: h{} is {}; a launch runs on VM endpoints (kind: vm)", where,
                                   h,
                                   e == s.endpoints.end() ? "simulated (add it under endpoints:)"
                                                          : "a namespace"));
            }
        }
        // A launch in the background still runs when the next ones start: their rank 0
        // may not listen on the same host and port.
        for (const auto& other : s.workloads)
        {
            if (&other == &wl)
            {
                break;
            }
            if (other.type == "launch" && other.background &&
                other.hosts.front() == wl.hosts.front() && other.masterPort == wl.masterPort)
            {
                FailAt(r, item["on"],
                       fmt::format("{}: rank 0 on h{} and port {} is taken by an earlier launch "
                                   "in the background; give this one another port:",
                                   where, wl.hosts.front(), wl.masterPort));
            }
        }
        return;
    }
    if (wl.startPs > s.durationPs)
    {
        FailAt(r, item["start"],
               fmt::format("{}.start is out of range: {}", where, item["start"].Scalar()));
    }
    if (wl.type == "dma")
    {
        ValidateDma(r, item, s, wl);
        return;
    }
    if (wl.type == "memory")
    {
        ValidateMemory(r, item, s, wl);
        return;
    }
    if (wl.type == "copy")
    {
        ValidateCopy(r, item, s, wl);
        return;
    }
    if (wl.type == "collective")
    {
        ValidateCollective(r, item, s, wl);
        return;
    }
    if (wl.type != "collective" && s.fidelity == "analytical")
    {
        FailAt(r, item,
               fmt::format("{}: fidelity analytical times collective workloads only; this one "
                           "needs the packet mode (fidelity: packet)",
                           where));
    }
    if (wl.type != "collective")
    {
        ValidateStaging(r, item, s, wl);
    }
    if (wl.type == "bulk" && wl.src == wl.dst)
    {
        FailAt(r, item["dst"], fmt::format("{}: src and dst are both h{}", where, wl.src));
    }
    if (wl.type != "bulk" && wl.type != "incast" && wl.type != "collective" && wl.hosts.size() < 2)
    {
        FailAt(r, item["hosts"] ? item["hosts"] : item, where + ".hosts needs at least two hosts");
    }
    if (wl.type == "poisson")
    {
        if (wl.stopPs > s.durationPs)
        {
            FailAt(r, item["stop"],
                   fmt::format("{}.stop is out of range: {}", where, item["stop"].Scalar()));
        }
        if (wl.stopPs <= wl.startPs)
        {
            FailAt(r, item, where + ": stop must come after start");
        }
    }
    std::vector<uint32_t> simulated = wl.hosts;
    if (wl.type == "bulk")
    {
        simulated = {wl.src, wl.dst};
    }
    if (wl.type == "incast")
    {
        simulated.push_back(wl.dst);
    }
    for (uint32_t h : simulated)
    {
        if (IsVm(s, h))
        {
            FailAt(r, item,
                   fmt::format("{}: h{} is a VM endpoint; simulated flows run between "
                               "simulated hosts (use a command workload on a VM)",
                               where, h));
        }
    }
}

/// topology.node.cxl: a link the specification allows, a pool of existing servers.

/// topology.node.cxl.pool.switches (at \p n): CXL 3.x, every pool server on one of them,
/// and nothing else on them.
void
ValidatePoolSwitches(const Reader& r, const YAML::Node& n, const Scenario& s)
{
    const CxlNodeYaml& c = s.topology.node.cxl;
    const std::string where = "topology.node.cxl.pool.switches";
    if (c.version.empty() || c.version[0] != '3')
    {
        FailAt(r, n,
               fmt::format("{}: switches under the pool's switch route by port ID, which CXL {} "
                           "does not have (version 3.0 or 3.1)",
                           where, c.version));
    }
    const uint32_t servers = s.topology.HostCount();
    std::vector<int64_t> on(servers, -1);
    for (size_t k = 0; k < c.poolSwitches.size(); ++k)
    {
        const YAML::Node at = n.IsSequence() && k < n.size() ? n[k] : n;
        for (uint32_t h : c.poolSwitches[k])
        {
            if (h >= servers || !c.InPool(h))
            {
                FailAt(r, at,
                       fmt::format("{}.{}: h{} does not share the pool (pool.hosts)", where, k, h));
            }
            if (on[h] >= 0)
            {
                FailAt(r, at,
                       fmt::format("{}.{}: h{} is on switch {} already", where, k, h, on[h]));
            }
            on[h] = static_cast<int64_t>(k);
        }
    }
    for (uint32_t h = 0; h < servers; ++h)
    {
        if (c.InPool(h) && on[h] < 0)
        {
            FailAt(r, n,
                   fmt::format("{}: h{} shares the pool but is on none of its switches", where, h));
        }
    }
}

void
ValidateCxl(const Reader& r, const YAML::Node& t, const Scenario& s)
{
    const CxlNodeYaml& c = s.topology.node.cxl;
    const YAML::Node node = t["node"];
    const YAML::Node cxl = node && node.IsMap() && node["cxl"] ? node["cxl"] : node;
    const auto at = [&](const char* key) {
        return cxl && cxl.IsMap() && cxl[key] ? cxl[key] : cxl ? cxl : t;
    };
    if (const std::string wrong = CxlLinkOf(c).Check(); !wrong.empty())
    {
        FailAt(r, c.flit.empty() ? at("gts") : at("flit"), "topology.node.cxl: " + wrong);
    }
    const YAML::Node expanders = at("expanders");
    for (size_t k = 0; k < c.expanders.size(); ++k)
    {
        const std::string& gpu = c.expanders[k].shares;
        if (gpu.empty())
        {
            continue;
        }
        const YAML::Node item =
            expanders.IsSequence() && k < expanders.size() && expanders[k]["shares"]
                ? expanders[k]["shares"]
                : expanders;
        const auto& gpus = s.topology.node.pcie.gpus;
        // "gpuK" as the tree names it: no sign, no leading zero, a number it has.
        const bool known = gpu.rfind("gpu", 0) == 0 && gpu.size() > 3 && gpu.size() <= 8 &&
                           gpu.find_first_not_of("0123456789", 3) == std::string::npos &&
                           (gpu[3] != '0' || gpu.size() == 4) && s.topology.node.hasPcie &&
                           DeviceNumber(gpu) < gpus.size();
        if (!known)
        {
            FailAt(r, item,
                   fmt::format("topology.node.cxl.expanders.{}.shares: '{}' is not a GPU of the "
                               "server's PCIe tree (topology.node.pcie: {} GPUs)",
                               k, gpu, s.topology.node.hasPcie ? gpus.size() : 0));
        }
        if (c.version == "1.1")
        {
            FailAt(r, item,
                   fmt::format("topology.node.cxl.expanders.{}.shares: a root port shared "
                               "through a switch needs CXL 2.0 or later, not 1.1",
                               k));
        }
        if (c.SharedBy(gpu) != static_cast<int64_t>(k))
        {
            FailAt(r, item,
                   fmt::format("topology.node.cxl.expanders.{}.shares: {} shares cxl{}'s root "
                               "port already",
                               k, gpu, c.SharedBy(gpu)));
        }
    }
    if (!c.hasPool)
    {
        return;
    }
    const YAML::Node pool = at("pool");
    const YAML::Node hosts = pool.IsMap() && pool["hosts"] ? pool["hosts"] : pool;
    const uint32_t servers = s.topology.HostCount();
    for (uint32_t h : c.poolHosts)
    {
        if (h >= servers)
        {
            FailAt(r, hosts,
                   fmt::format("topology.node.cxl.pool.hosts: h{} is not a server of this "
                               "topology (h0..h{}), so it is not wired to the pool's switch",
                               h, servers - 1));
        }
    }
    const size_t n = c.poolHosts.empty() ? servers : c.poolHosts.size();
    if (n > 16)
    {
        FailAt(r, hosts,
               fmt::format("topology.node.cxl.pool: {} hosts, but a pooled expander has at most "
                           "16 logical devices",
                           n));
    }
    if (!c.poolSwitches.empty())
    {
        ValidatePoolSwitches(r, pool.IsMap() && pool["switches"] ? pool["switches"] : pool, s);
    }
}

} // namespace

void
ValidateTopology(const Reader& r, const YAML::Node& t, const Scenario& s)
{
    const auto& top = s.topology;
    if (top.builder == "ring" && top.leaves < 3)
    {
        // Without the key, leaves' default (2, a leaf-spine's) is no ring either.
        if (!t["leaves"])
        {
            r.Fail(t, "topology.builder ring needs leaves: its switches (3..256)");
        }
        r.Fail(t["leaves"],
               fmt::format("topology.leaves must be 3..256, not {}", t["leaves"].Scalar()));
    }
    if (top.node.hasCxl)
    {
        ValidateCxl(r, t, s);
    }
    if (top.builder == "node")
    {
        if (!top.node.hasPcie && !top.node.hasNvlink && !top.node.hasCxl)
        {
            r.Fail(t, "topology: the node builder is one server with nothing inside yet; give it "
                      "topology.node (a server preset, pcie, nvlink or cxl)");
        }
        return;
    }
    if (top.builder == "leaf-spine" && top.spines == 0)
    {
        r.Fail(t["spines"], "topology.spines must be 1..256 for leaf-spine, not 0");
    }
    if (top.builder == "rail")
    {
        if (!top.node.hasPcie || top.node.pcie.nics.empty())
        {
            r.Fail(t, "topology: a rail cluster joins servers' NICs; give topology.node (a server "
                      "preset such as dgx-h100, or a PCIe tree with NICs)");
        }
        if (top.rails > top.node.pcie.nics.size())
        {
            r.Fail(t["rails"], fmt::format("topology.rails: {} rails, but each server has {} NIC{}",
                                           top.rails, top.node.pcie.nics.size(),
                                           top.node.pcie.nics.size() == 1 ? "" : "s"));
        }
        if (top.NetworkHosts() > 4096)
        {
            r.Fail(t,
                   fmt::format("topology: {} NICs on the rails; at most 4096", top.NetworkHosts()));
        }
        if (t["spine_link"] && top.spines == 0)
        {
            r.Fail(t["spine_link"], "topology.spine_link: no spines join the rails (spines: 0)");
        }
        return;
    }
    if (top.HostCount() < 2 || top.HostCount() > 4096)
    {
        r.Fail(t, fmt::format("topology: {} hosts; it must have 2..4096", top.HostCount()));
    }
}

void
ValidateScenario(const Reader& r, const YAML::Node& root, const Scenario& s)
{
    ValidateFabric(r, root, s);
    ValidateEndpoints(r, root, s);
    for (size_t i = 0; i < s.workloads.size(); ++i)
    {
        ValidateWorkload(r, root["workloads"][i], s, s.workloads[i]);
    }
    if (s.HasVms() &&
        std::none_of(s.workloads.begin(), s.workloads.end(), [](const WorkloadSpec& w) {
            return w.type == "command" || w.type == "launch";
        }))
    {
        FailAt(r, At(root, "endpoints"),
               "endpoints are real hosts (VMs or namespaces) but no command or launch workload "
               "runs on them");
    }
    if (s.fidelity == "analytical" &&
        std::none_of(s.workloads.begin(), s.workloads.end(),
                     [](const WorkloadSpec& w) { return w.type == "collective"; }))
    {
        FailAt(r, At(root, "fidelity"),
               "fidelity analytical times collective workloads, and there is none");
    }
    if (s.fidelity == "analytical" && !s.faults.empty())
    {
        FailAt(r, At(root, "faults"),
               "faults: fidelity analytical simulates nothing for a fault to break; faults "
               "need fidelity: packet");
    }
    for (size_t i = 0; i < s.faults.size(); ++i)
    {
        const FaultSpec& f = s.faults[i];
        if (!f.crash.empty() && KindOf(s, static_cast<uint32_t>(f.host)) != "vm")
        {
            const std::string kind = KindOf(s, static_cast<uint32_t>(f.host));
            throw ScenarioError(
                s.file, f.mark,
                fmt::format(
                    "faults.{}: crash: vm kills a VM endpoint's QEMU, and h{} is {}", i, f.host,
                    kind.empty() ? fmt::format("simulated (endpoints: {{h{}: {{kind: vm}}}} "
                                               "makes it a VM)",
                                               f.host)
                                 : "a network namespace"));
        }
        if (f.crash.empty() && f.host >= 0 && IsVm(s, static_cast<uint32_t>(f.host)))
        {
            throw ScenarioError(s.file, f.mark,
                                fmt::format("faults.{}: h{} is a VM endpoint, whose messages are "
                                            "real; a host's fault breaks a simulated host",
                                            i, f.host));
        }
        if (!f.pauseStorm.empty() && (s.fabric.type != "roce" || !s.fabric.pfc))
        {
            throw ScenarioError(s.file, f.mark,
                                fmt::format("faults.{}: a pause storm needs PFC: fabric roce "
                                            "with pfc on (this fabric is {}{})",
                                            i, s.fabric.type,
                                            s.fabric.type == "roce" ? ", pfc off" : ""));
        }
    }
    if (s.fidelity == "analytical" && s.HasVms())
    {
        FailAt(r, At(root, "fidelity"),
               "fidelity analytical runs nothing in real time: a scenario with endpoints is "
               "packet-level");
    }
    if (s.HasVms() && s.fabric.type == "iwarp")
    {
        // Real siw endpoints run their own TCP over the switches; simulated iWARP flows
        // would need the model's TCP on those same switches, which is not built.
        for (size_t i = 0; i < s.workloads.size(); ++i)
        {
            if (s.workloads[i].type != "command" && s.workloads[i].type != "launch")
            {
                FailAt(r, root["workloads"][i],
                       "with VM endpoints on fabric.type iwarp, workloads are "
                       "commands on the VMs (simulated iWARP flows run in "
                       "scenarios without endpoints)");
            }
        }
    }
}

} // namespace fabemu
