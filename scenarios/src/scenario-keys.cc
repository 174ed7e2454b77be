// The scenario's keys, one table per section; see scenario-keys.h.
#include "scenarios/src/scenario-keys.h"

#include "ns3/collective-schedule.h"

#include <fmt/format.h>

#include <regex>

namespace fabemu
{

namespace
{

constexpr int64_t kPsPerSecond = 1'000'000'000'000;

std::vector<std::string>
FabricNames()
{
    std::vector<std::string> names;
    for (const auto& f : FabricTypes())
    {
        names.push_back(f.name);
    }
    return names;
}

std::string
PowerOfTwoMtu(const std::string& what, const KeyValue& v)
{
    return (v.u & (v.u - 1)) == 0
               ? ""
               : fmt::format("{} must be 256, 512, 1024, 2048 or 4096, not {}", what, v.u);
}

/// link, uplink or bottleneck: a {rate, delay} map and its two keys.
void
AddLink(std::vector<Key<TopologyYaml>>& keys, const std::string& name, LinkSpec TopologyYaml::*link,
        const std::string& def, const std::string& help, const std::vector<std::string>& only,
        const std::string& inherit)
{
    using K = Key<TopologyYaml>;
    auto map =
        MakeKey<TopologyYaml>(name, KeyKind::Map, "{rate, delay}", def, help).Only(only).Flow();
    if (link != &TopologyYaml::link)
    {
        // Keys are read in order, so what it inherits is read already.
        LinkSpec TopologyYaml::*from =
            inherit == "uplink" ? &TopologyYaml::uplink : &TopologyYaml::link;
        map.Begin([link, from](TopologyYaml& t) { t.*link = t.*from; });
    }
    keys.push_back(map);
    keys.push_back(MakeKey<TopologyYaml>(name + ".rate", KeyKind::Rate, "rate",
                                         inherit.empty() ? "100Gbps" : inherit + ".rate",
                                         "Rate of " + help)
                       .Only(only)
                       .Example("25Gbps")
                       .Access(
                           [link](TopologyYaml& t, const KeyValue& v) {
                               (t.*link).rate = v.text;
                               (t.*link).bitsPerSecond = v.u;
                           },
                           [link](const TopologyYaml& t) {
                               KeyValue v;
                               v.text = (t.*link).rate;
                               v.u = (t.*link).bitsPerSecond;
                               return v;
                           }));
    K delay = MakeKey<TopologyYaml>(name + ".delay", KeyKind::Time, "time",
                                    inherit.empty() ? "1us" : inherit + ".delay",
                                    "Propagation delay of " + help)
                  .Only(only)
                  .Range(0, kPsPerSecond)
                  .Example("2us");
    delay.Access(
        [link](TopologyYaml& t, const KeyValue& v) {
            (t.*link).delay = v.text;
            (t.*link).delayPs = v.ps;
        },
        [link](const TopologyYaml& t) {
            KeyValue v;
            v.text = (t.*link).delay;
            v.ps = (t.*link).delayPs;
            return v;
        });
    keys.push_back(delay);
}

} // namespace

const std::vector<FabricType>&
FabricTypes()
{
    static const std::vector<FabricType> types{
        {"roce",
         "RoCEv2: PFC, RED/ECN, DCQCN; simulated hosts and rxe VMs",
         {"dcqcn", "none"},
         ", not roce",
         [](FabricSpec&) {}},
        {"infiniband",
         "InfiniBand: credits per VL, subnet-manager routing, IB CC; simulated hosts and rxe VMs "
         "through the edge gateways",
         {"none", "ibcc"},
         ", not infiniband (its switches are lossless by credits; buffers are "
         "ns3::IbPort::BufferBlocks)",
         [](FabricSpec& f) {
             f.cc = "none"; // IB congestion control is off by default, as on real fabrics
         }},
        {"iwarp",
         "iWARP: RDMAP/DDP/MPA over TCP on routed switches, no PFC; simulated hosts and siw VMs",
         {"dctcp", "newreno", "cubic"},
         ", not iwarp (iWARP runs on TCP over lossy Ethernet; its congestion control is fabric.cc: "
         "dctcp, newreno or cubic)",
         [](FabricSpec& f) {
             f.pfc = false; // iWARP needs no lossless fabric: TCP recovers
             f.cc = "dctcp";
             f.kmin = 100 * 1024; // DCTCP's K for 10-100 Gb/s ports, not DCQCN's Kmin
         }},
    };
    return types;
}

const FabricType&
FabricTypeOf(const std::string& name)
{
    for (const auto& f : FabricTypes())
    {
        if (f.name == name)
        {
            return f;
        }
    }
    return FabricTypes().front();
}

const std::vector<Builder>&
Builders()
{
    static const std::vector<Builder> builders{
        {"pair", "Two hosts on one link, no switch"},
        {"star", "Hosts on one switch"},
        {"dumbbell", "Two switches joined by the bottleneck link, hosts split between them"},
        {"leaf-spine", "Leaves with hosts, every leaf linked to every spine"},
        {"fat-tree", "A k-ary fat tree: k pods, k^3/4 hosts"},
        {"ring", "Switches in a ring (leaves of them), hosts_per_leaf hosts on each"},
        {"node",
         "One server (h0) and no network: experiments inside it (topology.node: PCIe, NVLink)"},
        {"rail", "A rail-optimised cluster: nodes servers (topology.node), NIC k of every server "
                 "on rail k (a leaf, or a leaf-spine of its own); spines join the rails"},
    };
    return builders;
}

const std::vector<WorkloadKind>&
WorkloadKinds()
{
    static const std::vector<WorkloadKind> kinds{
        {"bulk", "One flow from src to dst (sl: IB service level)"},
        {"incast", "Every src sends bytes to dst at once"},
        {"permutation", "Each host sends to one other, each receiving from one (random)"},
        {"all-to-all", "Every host sends bytes to every other"},
        {"poisson", "Poisson arrivals loading each host link to load (0..1), sizes from cdf "
                    "(websearch, hadoop or a file)"},
        {"dma", "Inside one server (topology.node.pcie): src's DMA engine writes bytes into dst's "
                "memory, or reads them from it"},
        {"copy", "GPU to GPU (hN.gpuK): over NVLink inside a server where it links them, else "
                 "PCIe; between servers GPUDirect RDMA through nic0"},
        {"memory", "Loads and stores of a server's CPU (hN.cpu) to its memory (hN.mem), a CXL "
                   "expander (hN.cxlK) or the CXL pool (hN.pool), in 64-byte lines: "
                   "memory.csv and summary.json's memory give latency against achieved "
                   "bandwidth (docs/cxl.md)"},
        {"collective", "A collective (all-reduce, reduce-scatter, all-gather, all-to-all, "
                       "broadcast, reduce, send-recv) over ranks, packet by packet on the fabric "
                       "or analytical (fidelity); "
                       "collectives.csv and summary.json's collectives give its time, algBw "
                       "and busBw (docs/collectives.md)"},
        {"command", "A command run inside a VM endpoint through the guest agent; {hN} expands to "
                    "hN's address; background: do not wait for it before the next"},
        {"launch", "One program started on several VM endpoints at once, one rank each, with "
                   "RANK, WORLD_SIZE, MASTER_ADDR (the first VM's address) and MASTER_PORT set "
                   "as torchrun sets them (fabemu-allreduce reads them); each rank is an entry "
                   "of commands, and a rank that fails stops the others (docs/endpoints.md)"},
    };
    return kinds;
}

const std::vector<Key<Scenario>>&
ScenarioKeys()
{
    using S = Scenario;
    static const std::vector<Key<S>> keys{
        MakeKey<S>("name", KeyKind::Text, "string", "(required)",
                   "Names the scenario; letters, digits, '-', '_', '.'")
            .Field(&S::name)
            .Example("t")
            .Check([](const std::string&, const KeyValue& v) {
                static const std::regex re("^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$");
                return std::regex_match(v.text, re)
                           ? std::string()
                           : fmt::format("name '{}' must be 1..64 letters, digits, '-', '_' or '.'",
                                         Shown(v.text));
            }),
        MakeKey<S>("description", KeyKind::Text, "string", "\"\"", "One line for humans")
            .Field(&S::description)
            .Example("two hosts"),
        MakeKey<S>("seed", KeyKind::Integer, "integer", "1",
                   "Random seed; the same file and seed give the same results")
            .Range(1, UINT32_MAX)
            .Field(&S::seed)
            .Example("7"),
        MakeKey<S>("duration", KeyKind::Time, "time", "10ms",
                   "Simulated time; a run ends earlier when every flow is done. With VM endpoints: "
                   "the longest the commands may take")
            .Range(1000, 3600 * kPsPerSecond)
            .Timed(&S::duration, &S::durationPs)
            .Example("20ms"),
        MakeKey<S>("lag_threshold", KeyKind::Time, "time", "1ms",
                   "Emulation: lag above which timing is not faithful")
            .Range(1000, 60 * kPsPerSecond)
            .Timed(&S::lagThreshold, &S::lagThresholdPs)
            .Example("2ms"),
        MakeKey<S>(
            "scheduling", KeyKind::Choice, "shared|realtime", "shared",
            "Emulation: the simulation thread at nice -10 beside the VMs (shared), or "
            "SCHED_FIFO, preempting them at once (realtime: lower lag, less VM throughput on "
            "a busy host)")
            .Choices({"shared", "realtime"})
            .Field(&S::scheduling)
            .Example("realtime"),
        MakeKey<S>("on_failure", KeyKind::Choice, "continue|stop", "continue",
                   "Emulation: when a command or launch fails (an exit status not 0, a "
                   "timeout, a VM that died), run the workloads after it (continue) or stop "
                   "the ones running and start no more (stop); the run exits 1 either way")
            .Choices({"continue", "stop"})
            .Field(&S::onFailure)
            .WrittenIf([](const S& s) { return s.onFailure != "continue"; })
            .Example("stop"),
        MakeKey<S>("fidelity", KeyKind::Choice, "packet|analytical", "packet",
                   "Collectives run packet by packet on the fabric, or are timed by their "
                   "alpha-beta cost from the same topology (analytical: collective workloads "
                   "only, nothing simulated)")
            .Choices({"packet", "analytical"})
            .Field(&S::fidelity)
            .WrittenIf([](const S& s) { return s.fidelity != "packet"; })
            .Example("analytical"),
        MakeKey<S>("fabric", KeyKind::Section, "map", "{}", "The fabric model: the fabric.* keys")
            .Own(ReadFabric, WriteFabric),
        MakeKey<S>("topology", KeyKind::Section, "map", "{}", "The shape: the topology.* keys")
            .Own(ReadTopology, WriteTopology),
        MakeKey<S>(
            "endpoints", KeyKind::Section, "map hN: {kind, device}", "{}",
            "Hosts that are real: QEMU VMs, or network namespaces where the host kernel "
            "gives namespaces rxe/siw (device none: plain IP); hosts not listed are simulated")
            .Own(ReadEndpoints, WriteEndpoints),
        MakeKey<S>("workloads", KeyKind::Section, "list", "[]",
                   "What the hosts do, each item {type: ..., ...}: the workloads.N.* keys")
            .Own(ReadWorkloads, WriteWorkloads),
        MakeKey<S>("record", KeyKind::Section, "map", "{}", "What is recorded: the record.* keys")
            .Own(ReadRecord, WriteRecord),
        MakeKey<S>(
            "faults", KeyKind::Section, "list", "[]",
            "What breaks on purpose, each item {at, link, rate, ber or down}: the faults.N.* keys "
            "(docs/faults.md)")
            .Own(ReadFaults, WriteFaults)
            .WrittenIf([](const S& s) { return !s.faults.empty(); }),
        MakeKey<S>("expect", KeyKind::Section, "map metric: want", "{}",
                   "Checked after the run; want is a number, \">0\", \">=x\", \"<x\", \"<=x\" or "
                   "\"a..b\"; any miss exits 3")
            .Own(ReadExpect, WriteExpect),
    };
    return keys;
}

const std::vector<Key<FabricSpec>>&
FabricKeys()
{
    using F = FabricSpec;
    static const std::vector<std::string> roce{"roce"};
    static const std::vector<std::string> ethernet{"roce", "iwarp"};
    static const std::string ramp =
        "; on iwarp the switches mark every packet above fabric.ecn.kmin (DCTCP's K)";
    static const std::vector<Key<F>> keys{
        MakeKey<F>("type", KeyKind::Choice, "roce|infiniband|iwarp", "roce",
                   "The fabric model; each runs simulated hosts and real VM endpoints")
            .Choices(FabricNames())
            .Field(&F::type)
            .Example("infiniband"),
        MakeKey<F>("mtu", KeyKind::Integer, "256|512|1024|2048|4096", "1024",
                   "RDMA path MTU, bytes of payload (iwarp: IP MTU 1500 up to 1024, 4200 for 2048 "
                   "and 4096)")
            .Range(256, 4096)
            .Check(PowerOfTwoMtu)
            .Field(&F::mtu)
            .Example("2048"),
        MakeKey<F>("pfc", KeyKind::Bool, "bool", "true", "PFC on the lossless priority (3)")
            .Only(roce)
            .Field(&F::pfc)
            .Example("false"),
        MakeKey<F>("ecn", KeyKind::Map, "bool or map", "{enabled: true}",
                   "RED/ECN marking; ecn: false is ecn: {enabled: false}")
            .Only(ethernet)
            .Shorthand("enabled")
            .Flow()
            .Example("false"),
        MakeKey<F>("ecn.enabled", KeyKind::Bool, "bool", "true",
                   "RED/ECN marking on switch egress queues")
            .Only(ethernet)
            .Field(&F::ecn)
            .Example("false"),
        MakeKey<F>("ecn.kmin", KeyKind::Bytes, "bytes", "5KB (iwarp: 100KB)",
                   "roce: queue depth where marking starts; iwarp: DCTCP's K, every packet above "
                   "it is marked")
            .Only(ethernet)
            .Range(0, int64_t{1} << 32)
            .Field(&F::kmin)
            .Example("20KB"),
        MakeKey<F>("ecn.kmax", KeyKind::Bytes, "bytes", "200KB",
                   "Queue depth where the marking probability reaches pmax")
            .Only(roce)
            .Refusal(ramp)
            .Range(1, int64_t{1} << 32)
            .Field(&F::kmax)
            .Example("300KB"),
        MakeKey<F>("ecn.pmax", KeyKind::Number, "0..1", "0.01", "Marking probability at kmax")
            .Only(roce)
            .Refusal(ramp)
            .Between(0, 1)
            .Field(&F::pmax)
            .Example("0.1"),
        MakeKey<F>("dcqcn", KeyKind::Choice, "paper|nvidia|hpcc", "paper",
                   "DCQCN variant and parameters (docs/fidelity.md)")
            .Only(roce)
            .Choices({"paper", "nvidia", "hpcc"})
            .Field(&F::dcqcnPreset)
            .Example("nvidia"),
        MakeKey<F>("buffer", KeyKind::Bytes, "bytes", "12MB",
                   "roce: packet buffer per switch; iwarp: split evenly among each switch's ports "
                   "(drop-tail beyond)")
            .Only(ethernet)
            .Range(64 * 1024, int64_t{1} << 34)
            .Field(&F::bufferBytes)
            .Example("16MB"),
        MakeKey<F>("cc", KeyKind::Choice, "dcqcn|none|ibcc|dctcp|newreno|cubic",
                   "dcqcn (infiniband: none, iwarp: dctcp)",
                   "Congestion control (roce: dcqcn | none; infiniband: none | ibcc; iwarp: TCP's, "
                   "dctcp | newreno | cubic)")
            .ChoicesOf([](const F& f) {
                return std::make_pair(" (" + f.type + ")", FabricTypeOf(f.type).cc);
            })
            .Field(&F::cc)
            .Example("none"),
        MakeKey<F>("lmc", KeyKind::Integer, "0..7", "0",
                   "LID Mask Control; 2^lmc LIDs (paths) per host, connections take them in turn")
            .Only({"infiniband"})
            .Refusal("")
            .Range(0, 7)
            .Field(&F::lmc)
            .Example("1"),
        MakeKey<F>("routing", KeyKind::Choice, "minhop|updown", "minhop",
                   "The subnet manager's routing; updown is deadlock-free on rings and tori")
            .Only({"infiniband"})
            .Refusal(" (its subnet manager); roce and iwarp route by ECMP over shortest paths")
            .Choices({"minhop", "updown"})
            .Field(&F::routing)
            .Example("updown"),
        MakeKey<F>("set", KeyKind::Section, "map", "{}",
                   "Any ns-3 attribute default by full name, e.g. ns3::SwitchMmu::Alpha: 0.5 "
                   "(applied last; --set ns3::X::Y=V puts it here)")
            .Own(ReadFabricSet, WriteFabricSet),
    };
    return keys;
}

const std::vector<Key<TopologyYaml>>&
TopologyKeys()
{
    using T = TopologyYaml;
    static const std::vector<Key<T>> keys = [] {
        std::vector<std::string> names;
        for (const auto& b : Builders())
        {
            names.push_back(b.name);
        }
        std::vector<Key<T>> k{
            MakeKey<T>("builder", KeyKind::Choice,
                       "pair|star|dumbbell|leaf-spine|fat-tree|ring|node|rail", "star", "The shape")
                .Choices(names)
                .Field(&T::builder)
                .Example("fat-tree"),
            MakeKey<T>("hosts", KeyKind::Integer, "integer", "2", "Number of hosts (h0..)")
                .Only({"star", "dumbbell"})
                .Range(2, 1024)
                .Field(&T::hosts)
                .Example("4"),
            MakeKey<T>("leaves", KeyKind::Integer, "integer", "2",
                       "leaf-spine: leaf switches; ring: switches in the ring (3..)")
                .Only({"leaf-spine", "ring"})
                .Range(1, 256)
                .Field(&T::leaves)
                .Example("3"),
            MakeKey<T>("spines", KeyKind::Integer, "integer", "2",
                       "Spine switches (rail: each joined to every rail; 0: the rails apart)")
                .Only({"leaf-spine", "rail"})
                .Range(0, 256)
                .Field(&T::spines)
                .Example("3"),
            MakeKey<T>("hosts_per_leaf", KeyKind::Integer, "integer", "2",
                       "Hosts on each leaf (ring switch)")
                .Only({"leaf-spine", "ring"})
                .Range(1, 256)
                .Field(&T::hostsPerLeaf)
                .Example("3"),
            MakeKey<T>("nodes", KeyKind::Integer, "integer", "2", "Servers (h0..)")
                .Only({"rail"})
                .Range(1, 512)
                .Field(&T::nodes)
                .Example("4"),
            MakeKey<T>("rails", KeyKind::Integer, "integer", "0: every NIC",
                       "Rails: NIC k of every server on rail k (k < rails)")
                .Only({"rail"})
                .Range(0, 64)
                .Field(&T::rails)
                .Example("2"),
            MakeKey<T>("servers_per_leaf", KeyKind::Integer, "integer", "0: one leaf",
                       "Servers on each rail leaf: a rail of more becomes a leaf-spine of "
                       "ceil(nodes / servers_per_leaf) leaves and rail_spines spines")
                .Only({"rail"})
                .Range(0, 512)
                .Field(&T::serversPerLeaf)
                .Example("16"),
            MakeKey<T>("rail_spines", KeyKind::Integer, "integer", "2",
                       "Spines inside a rail of several leaves, each joined to its leaves")
                .Only({"rail"})
                .Range(1, 64)
                .Field(&T::railSpines)
                .Example("4"),
            MakeKey<T>("k", KeyKind::Integer, "even integer", "4", "k (k^3/4 hosts)")
                .Only({"fat-tree"})
                .Range(2, 32)
                .Check([](const std::string& what, const KeyValue& v) {
                    return v.u % 2 ? fmt::format("{} must be even, not {}", what, v.u)
                                   : std::string();
                })
                .Field(&T::k)
                .Example("6"),
        };
        AddLink(k, "link", &T::link, "{100Gbps, 1us}", "the host links", {}, "");
        AddLink(k, "uplink", &T::uplink, "= link",
                "the switch-to-switch links (rail: a rail's leaves to its rail spines)",
                {"leaf-spine", "fat-tree", "ring", "rail"}, "link");
        AddLink(k, "spine_link", &T::spineLink, "= uplink",
                "rail: the links from each rail (its leaf, or its spines) to the spines that "
                "join the rails",
                {"rail"}, "uplink");
        for (auto& key : k)
        {
            if (key.name == "spine_link")
            {
                key.WrittenIf([](const T& t) { return t.spines > 0; }); // else refused
            }
        }
        AddLink(k, "bottleneck", &T::bottleneck, "= link", "dumbbell's middle link", {"dumbbell"},
                "link");
        k.push_back(MakeKey<T>("links", KeyKind::Section, "map name: {rate, delay}", "{}",
                               "Links unlike the rest, by their two ends as the builder names "
                               "them (s0-s3, h2-s0; on rail a server's NIC is h1.nic3): a slow "
                               "or long cable. An unknown name is refused with the links there "
                               "are")
                        .Own(ReadLinkOverrides, WriteLinkOverrides)
                        .WrittenIf([](const T& t) { return !t.overrides.empty(); })
                        .Example("{h1.nic3-s3: {rate: 200Gbps}}"));
        k.push_back(MakeKey<T>("partition", KeyKind::Section, "map switch: rank", "{}",
                               "A partitioned run (fabemu run --ranks N): switches pinned to a "
                               "rank, by the builder's names. A pinned leaf takes its hosts "
                               "along; the others split at switch tiers as by default (each "
                               "leaf with its hosts, the leaves in blocks, a switch above with "
                               "most of its neighbours). Ignored by a run on one rank")
                        .Own(ReadPartitionPins, WritePartitionPins)
                        .WrittenIf([](const T& t) { return !t.partition.empty(); })
                        .Example("{s0: 1, s4: 0}"));
        k.push_back(
            MakeKey<T>(
                "node", KeyKind::Section, "map", "{}",
                "Every server's inside: a server preset (dgx-h100, dgx-a100, "
                "hgx-b200, dgx-1, pcie-8gpu, cxl-pool) or a map {preset, pcie, nvlink, cxl}; a "
                "preset's NICs set link.rate unless it is given (dgx-h100, "
                "hgx-b200 400Gbps, dgx-a100 200Gbps, dgx-1 100Gbps). pcie: "
                "a preset (gpudirect, pcie-8gpu, host-nic) or a map {preset, "
                "generation, lanes, mps, mrrs, acs, switch_latency, root_complex: "
                "{intel_p2p}, switches, gpus, nics (each sw0.., root or {under, "
                "generation, lanes, serves: [gpuK]})}; docs/pcie.md. nvlink: "
                "{generation, gpus, switch_generation, links_per_gpu, split, mesh}; "
                "docs/nvlink.md. cxl (or the preset cxl-pool): {version, gts, "
                "lanes, flit, expanders (a count or [{capacity, dram_rate, "
                "dram_latency, shares: gpuK (on one root port with that GPU of the PCIe "
                "tree)}]), switch_latency, pool: {hosts, switches (CXL 3.x: "
                "[[hN, ...], ...], a switch each under the pool's), capacity, "
                "dram_rate, dram_latency}}; docs/cxl.md")
                .Own(ReadNode, WriteNode)
                .WrittenIf(
                    [](const T& t) { return t.node.hasPcie || t.node.hasNvlink || t.node.hasCxl; })
                .Example("{pcie: gpudirect}"));
        return k;
    }();
    return keys;
}

const std::vector<Key<FaultSpec>>&
FaultKeys()
{
    using F = FaultSpec;
    static const std::vector<Key<F>> keys{
        MakeKey<F>("at", KeyKind::Time, "time", "0s", "When the fault happens")
            .Range(0, 3600 * kPsPerSecond)
            .Timed(&F::at, &F::atPs)
            .Example("2ms"),
        MakeKey<F>("link", KeyKind::Text, "string", "(link or host)",
                   "The link, by its two ends as the topology names them (s0-s1, h2-s0; on "
                   "rail h1.nic3-s3), or a host's own link by the host (h3); an unknown name "
                   "is refused with the links there are")
            .WrittenIf([](const F& f) { return f.host < 0; })
            .Field(&F::link)
            .Example("h1"),
        MakeKey<F>("host", KeyKind::Host, "host", "(link or host)",
                   "A host's fault, instead of a link: with delay a straggler (every message "
                   "it starts from `at` on leaves late), with pause_storm its NIC storming "
                   "PFC pauses, with crash its VM killed")
            .WrittenIf([](const F& f) { return f.host >= 0; })
            .Access([](F& f, const KeyValue& v) { f.host = static_cast<int64_t>(v.u); },
                    [](const F& f) {
                        KeyValue v;
                        v.u = static_cast<uint64_t>(f.host);
                        return v;
                    })
            .Example("h2"),
        MakeKey<F>("delay", KeyKind::Time, "time", "(with host: delay, pause_storm or crash)",
                   "How late each message of the straggler leaves")
            .Range(1, 3600 * kPsPerSecond)
            .WrittenIf(
                [](const F& f) { return f.host >= 0 && f.pauseStorm.empty() && f.crash.empty(); })
            .Timed(&F::delay, &F::delayPs)
            .Example("50us"),
        MakeKey<F>("pause_storm", KeyKind::Time, "time", "(with host: delay, pause_storm or crash)",
                   "The host's NIC sends PFC pauses without end for this long (RoCEv2 with "
                   "PFC); switch ports' watchdog (RoceNetDevice::PfcWatchdogTime) may stop "
                   "honouring them")
            .Range(1, 3600 * kPsPerSecond)
            .WrittenIf([](const F& f) { return !f.pauseStorm.empty(); })
            .Timed(&F::pauseStorm, &F::pauseStormPs)
            .Example("2ms"),
        MakeKey<F>("crash", KeyKind::Choice, "vm", "(with host: delay, pause_storm or crash)",
                   "The host, a VM endpoint, crashes: its QEMU is killed at `at`; commands on "
                   "it fail naming it, and on_failure says whether the run goes on")
            .Choices({"vm"})
            .WrittenIf([](const F& f) { return !f.crash.empty(); })
            .Field(&F::crash)
            .Example("vm"),
        MakeKey<F>("rate", KeyKind::Rate, "rate", "(with link: rate, ber or down)",
                   "A degraded link: both ways at this rate from `at` on (what is on the wire "
                   "keeps its rate)")
            .WrittenIf([](const F& f) { return !f.rate.empty(); })
            .Access(
                [](F& f, const KeyValue& v) {
                    f.rate = v.text;
                    f.bitsPerSecond = v.u;
                },
                [](const F& f) {
                    KeyValue v;
                    v.text = f.rate;
                    v.u = f.bitsPerSecond;
                    return v;
                })
            .Example("10Gbps"),
        MakeKey<F>("ber", KeyKind::Number, "0..0.001", "(with link: rate, ber or down)",
                   "Bit errors: each bit that crosses the link, either way, is wrong with this "
                   "probability from `at` on; what one hits is dropped (RoCEv2: FCS; "
                   "InfiniBand: VCRC; iWARP: the frame) and the transport recovers")
            .Between(0, 1e-3)
            .WrittenIf([](const F& f) { return f.ber >= 0; })
            .Field(&F::ber)
            .Example("1e-6"),
        MakeKey<F>("down", KeyKind::Time, "time", "(with link: rate, ber or down)",
                   "The link goes down at `at` for this long, then comes back: what is on it "
                   "is lost; ECMP (RoCEv2) and the subnet manager (InfiniBand) route around "
                   "it once they have seen it, iWARP's TCP retransmits until it is back")
            .Range(1, 3600 * kPsPerSecond)
            .WrittenIf([](const F& f) { return !f.down.empty(); })
            .Timed(&F::down, &F::downPs)
            .Example("500us"),
    };
    return keys;
}

const std::vector<Key<EndpointSpec>>&
EndpointKeys()
{
    using E = EndpointSpec;
    static const std::vector<Key<E>> keys{
        MakeKey<E>("kind", KeyKind::Choice, "vm|netns", "vm",
                   "A QEMU VM, or a network namespace of this host")
            .Choices({"vm", "netns"})
            .Field(&E::kind)
            .Example("netns"),
        MakeKey<E>(
            "device", KeyKind::Choice, "rxe|siw|none", "rxe (iwarp: siw)",
            "Its RDMA device: rxe (roce, infiniband), siw (iwarp), none (netns only: plain IP)")
            .Choices({"rxe", "siw", "none"})
            .Field(&E::device)
            .Example("rxe"),
    };
    return keys;
}

namespace
{

/// A name that is a column of a CSV and a cell of report.md's tables: one word.
std::string
OneWord(const std::string& what, const KeyValue& v)
{
    if (v.text.empty() || v.text.find_first_of(" \t,|\"") != std::string::npos)
    {
        return fmt::format("{} '{}' must be one word: no spaces, commas, '|' or quotes (it is a "
                           "column of the results' CSVs)",
                           what, v.text);
    }
    return "";
}

std::vector<std::string>
CollectiveAlgorithmChoices()
{
    auto names = ns3::CollectiveAlgorithmNames();
    names.push_back("auto");
    return names;
}

/// The workload rows of collectives alone (they share bytes, start and op with flows).
std::vector<Key<WorkloadSpec>>
CollectiveWorkloadKeys()
{
    using W = WorkloadSpec;
    return {
        MakeKey<W>("algorithm", KeyKind::Choice,
                   "ring|halving-doubling|direct|hierarchical|tree|nvls|auto", "auto",
                   "How the collective runs; auto: the fastest by the alpha-beta cost on this "
                   "topology (all-to-all, send-recv: direct; broadcast, reduce: ring, a "
                   "pipelined chain from the first rank, the root). On GPUs of several servers a "
                   "ring has one "
                   "channel per rail; hierarchical (all-reduce): inside each server, then on "
                   "the rails, then inside; tree (all-reduce): NCCL's double binary tree; nvls "
                   "(all-reduce, reduce-scatter, all-gather on the GPUs of one server with "
                   "NVSwitch gen3 on): sums and multicasts in the switches")
            .Only({"collective"})
            .Choices(CollectiveAlgorithmChoices())
            .Field(&W::algorithm)
            .Example("ring"),
        MakeKey<W>("ranks", KeyKind::Section, "list of hosts or GPUs (hN.gpuK), or all", "all",
                   "The collective's ranks, in ring order: hosts of the network, or GPUs "
                   "(topology.node) that NVLink joins inside each server, on one server or on "
                   "several (GPUDirect RDMA between them, on their NICs' rails)")
            .Only({"collective"})
            .Own(ReadRanks, WriteRanks)
            .Example("[h0, h1]"),
        MakeKey<W>("stragglers", KeyKind::Section, "map rank: time", "{}",
                   "Ranks that are late: each one's first sends of every iteration leave that "
                   "long after the others' (h3: 2ms)")
            .Only({"collective"})
            .Own(ReadStragglers, WriteStragglers)
            .WrittenIf([](const W& w) { return !w.stragglers.empty(); })
            .Example("{h0: 1ms}"),
        MakeKey<W>("iterations", KeyKind::Integer, "1..100000", "1",
                   "How many times the collective runs, each after the last")
            .Only({"collective"})
            .Range(1, 100000)
            .Field(&W::iterations)
            .Example("5"),
        MakeKey<W>("compute", KeyKind::Time, "time", "0s",
                   "A training step: each iteration computes this long (forward and "
                   "backward), its gradients ready in `buckets` one after another as it goes; "
                   "each bucket's collective starts once it is ready and the one before it has "
                   "ended. training.csv and summary.json's training give each step's time and "
                   "the communication it exposes (the step's end after the compute's)")
            .Only({"collective"})
            .Range(0, 3600 * kPsPerSecond)
            .InNs()
            .Field(&W::computePs)
            .Example("20ms"),
        MakeKey<W>("buckets", KeyKind::Integer, "1..1024", "1",
                   "A training step's collective in this many buckets of bytes/buckets, "
                   "bucket k ready after (k+1)/buckets of the compute (PyTorch DDP's gradient "
                   "buckets); 1: after all of it, nothing overlapped")
            .Only({"collective"})
            .Range(1, 1024)
            .Field(&W::buckets)
            .Example("4"),
        MakeKey<W>("chunks", KeyKind::Integer, "1..64", "8",
                   "hierarchical: the chunks the buffer is pipelined in through its three "
                   "phases (fewer when the bytes do not cut into that many)")
            .Only({"collective"})
            .Range(1, 64)
            .Field(&W::chunks)
            .Example("4"),
        MakeKey<W>("job", KeyKind::Text, "string", "jobN (N: its place among the collectives)",
                   "What collectives.csv and summary.json call it")
            .Only({"collective"})
            .Check(OneWord)
            .Field(&W::job)
            .Example("training"),
    };
}

/// The workload rows of flows (simulated RDMA flows and dma transfers).
std::vector<Key<WorkloadSpec>>
FlowWorkloadKeys()
{
    using W = WorkloadSpec;
    static const std::vector<std::string> flows{"bulk", "incast", "permutation", "all-to-all",
                                                "poisson"};
    static const std::vector<std::string> flowsAndDma{
        "bulk", "incast", "permutation", "all-to-all", "poisson", "dma", "copy"};
    static const std::vector<std::string> flowsDmaAndCollective{
        "bulk", "incast", "permutation", "all-to-all", "poisson", "dma", "copy", "collective"};
    return {
        MakeKey<W>("src", KeyKind::Endpoint, "host (dma: hN.gpuK, hN.nicK; copy: hN.gpuK)",
                   "(required)", "The sender (dma: the device whose DMA engine moves the bytes)")
            .Only({"bulk", "dma", "copy"})
            .Required({"bulk", "dma", "copy"})
            .Endpoint(&W::src, &W::srcDevice)
            .Example("h1"),
        MakeKey<W>("dst", KeyKind::Endpoint, "host (dma: hN.gpuK, hN.nicK, hN.mem; copy: hN.gpuK)",
                   "(required)", "The receiver (dma: the memory written or read)")
            .Only({"bulk", "incast", "dma", "copy"})
            .Required({"bulk", "incast", "dma", "copy"})
            .Endpoint(&W::dst, &W::dstDevice)
            .Example("h0"),
        MakeKey<W>("src_mem", KeyKind::Text, "host|gpuK", "host",
                   "With topology.node.pcie: the memory the sender's NIC reads (gpuK: "
                   "GPUDirect RDMA)")
            .Only(flows)
            .Field(&W::srcMemory)
            .WrittenIf([](const W& w) { return w.srcMemory != "host"; })
            .Example("gpu0"),
        MakeKey<W>("dst_mem", KeyKind::Text, "host|gpuK", "host",
                   "With topology.node.pcie: the memory the receiver's NIC writes")
            .Only(flows)
            .Field(&W::dstMemory)
            .WrittenIf([](const W& w) { return w.dstMemory != "host"; })
            .Example("gpu0"),
        MakeKey<W>("srcs", KeyKind::Hosts, "list of hosts or all", "(required)",
                   "The senders; all: every host but dst")
            .Only({"incast"})
            .Required({"incast"})
            .Field(&W::hosts)
            .Example("all"),
        MakeKey<W>("hosts", KeyKind::Hosts, "list of hosts or all", "all", "The hosts taking part")
            .Only({"permutation", "all-to-all", "poisson"})
            .Field(&W::hosts)
            .Example("all"),
        MakeKey<W>("load", KeyKind::Number, "0.001..1", "(required)",
                   "Offered load on each host link")
            .Only({"poisson"})
            .Required({"poisson"})
            .Between(0.001, 1.0)
            .Field(&W::load)
            .Example("0.3"),
        MakeKey<W>("cdf", KeyKind::Text, "websearch|hadoop|file", "(required)",
                   "Flow sizes: a shipped CDF or a file beside the scenario")
            .Only({"poisson"})
            .Required({"poisson"})
            .Field(&W::cdf)
            .Example("websearch"),
        MakeKey<W>("stop", KeyKind::Time, "time", "= duration", "Arrivals end here")
            .Only({"poisson"})
            .Range(1, 3600 * kPsPerSecond)
            .InNs()
            .Field(&W::stopPs)
            .Example("5ms"),
        MakeKey<W>("bytes", KeyKind::Bytes, "bytes", "(required; memory: bytes or duration)",
                   "Bytes of each flow (collective: its size as nccl-tests gives it, or a sweep "
                   "{from, to, factor} as nccl-tests' -b, -e, -f)")
            .Only({"bulk", "incast", "permutation", "all-to-all", "dma", "copy", "collective",
                   "memory"})
            .Required({"bulk", "incast", "permutation", "all-to-all", "dma", "copy", "collective"})
            .Range(1, int64_t{1} << 40)
            .Sweep()
            .WrittenIf([](const W& w) { return w.bytes > 0; }) // memory: bytes or duration
            .Access(
                [](W& w, const KeyValue& v) {
                    w.bytes = v.u;
                    w.sizes = v.sweep;
                },
                [](const W& w) {
                    KeyValue v;
                    v.u = w.bytes;
                    v.sweep = w.sizes;
                    return v;
                })
            .Example("1MB"),
        MakeKey<W>("start", KeyKind::Time, "time", "0ns", "When its flows start (simulated time)")
            .Only({"bulk", "incast", "permutation", "all-to-all", "poisson", "dma", "copy",
                   "collective", "memory"})
            .Range(0, 3600 * kPsPerSecond)
            .InNs()
            .Field(&W::startPs)
            .Example("1ms"),
        MakeKey<W>("tag", KeyKind::Text, "string", "= type",
                   "What summary.json, fct.csv and report.md call this workload's flows")
            .Only(
                {"bulk", "incast", "permutation", "all-to-all", "poisson", "dma", "copy", "memory"})
            .Check(OneWord)
            .Access([](W& w, const KeyValue& v) { w.tag = v.text; },
                    [](const W& w) {
                        KeyValue v;
                        v.text = WorkloadLabel(w); // resolved: the name results use
                        return v;
                    })
            .Example("background"),
        MakeKey<W>("op", KeyKind::Choice,
                   "write|send|read (collective: all-reduce|reduce-scatter|all-gather|all-to-all|"
                   "broadcast|reduce|send-recv)",
                   "write (collective: all-reduce)",
                   "The RDMA operation (dma: write or read); the collective operation")
            .Only(flowsDmaAndCollective)
            .ChoicesOf([](const W& w) {
                return std::make_pair(std::string(),
                                      w.type == "collective"
                                          ? ns3::CollectiveOpNames()
                                          : std::vector<std::string>{"write", "send", "read"});
            })
            .Field(&W::op)
            .Example("read"),
        MakeKey<W>("sl", KeyKind::Integer, "0..15", "0", "Service level (InfiniBand: picks the VL)")
            .Only(flows)
            .Range(0, 15)
            .Field(&W::sl)
            .Example("1"),
    };
}

/// The rows of memory workloads (a CPU's loads and stores over CXL).
std::vector<Key<WorkloadSpec>>
MemoryWorkloadKeys()
{
    using W = WorkloadSpec;
    const std::vector<std::string> memory{"memory"};
    return {
        MakeKey<W>("target", KeyKind::Endpoint, "hN.mem|hN.cxlK|hN.pool", "(required)",
                   "The memory the CPU loads from and stores to: its own DRAM, a CXL expander "
                   "of its server, or its logical device of the CXL pool")
            .Only(memory)
            .Required(memory)
            .Endpoint(&W::dst, &W::dstDevice)
            .Example("h0.mem"),
        MakeKey<W>("read_ratio", KeyKind::Number, "0..1", "1", "The fraction of requests that read")
            .Only(memory)
            .Between(0.0, 1.0)
            .Field(&W::readRatio)
            .Example("0.7"),
        MakeKey<W>("pattern", KeyKind::Choice, "random|stream", "random",
                   "Addresses: random (every access opens a DRAM row) or stream (row hits)")
            .Only(memory)
            .Choices({"random", "stream"})
            .Field(&W::pattern)
            .Example("stream"),
        MakeKey<W>("outstanding", KeyKind::Integer, "1..4096", "64", "Requests in flight at most")
            .Only(memory)
            .Range(1, 4096)
            .Field(&W::outstanding)
            .Example("16"),
        MakeKey<W>("rate", KeyKind::Text, "rate|max", "max",
                   "Offered load as a Poisson stream of 64-byte requests (20GBps, 100Gbps); max: "
                   "a new request at each completion")
            .Only(memory)
            .Check([](const std::string& what, const KeyValue& v) {
                uint64_t bps = 0;
                return v.text == "max" || ParseRate(v.text, bps)
                           ? std::string()
                           : fmt::format("{} must be a rate such as 20GBps or 100Gbps, or max, "
                                         "not '{}'",
                                         what, Shown(v.text));
            })
            .Access(
                [](W& w, const KeyValue& v) {
                    w.memoryBitsPerSecond = 0;
                    if (v.text != "max")
                    {
                        ParseRate(v.text, w.memoryBitsPerSecond);
                    }
                },
                [](const W& w) {
                    KeyValue v;
                    v.text =
                        w.memoryBitsPerSecond ? fmt::format("{}bps", w.memoryBitsPerSecond) : "max";
                    return v;
                })
            .Example("20GBps"),
        MakeKey<W>("duration", KeyKind::Time, "time", "(bytes or duration)",
                   "Issue requests for this long (instead of bytes)")
            .Only(memory)
            .Range(1, 3600 * kPsPerSecond)
            .InNs()
            .Field(&W::memoryDurationPs)
            .WrittenIf([](const W& w) { return w.memoryDurationPs > 0; })
            .Example("10us"),
    };
}

} // namespace

const std::vector<Key<WorkloadSpec>>&
WorkloadKeys()
{
    using W = WorkloadSpec;
    static const std::vector<std::string> command{"command", "launch"};
    static const std::vector<Key<W>> keys = [] {
        std::vector<std::string> names;
        for (const auto& w : WorkloadKinds())
        {
            names.push_back(w.name);
        }
        std::vector<Key<W>> rows{
            MakeKey<W>(
                "type", KeyKind::Choice,
                "bulk|incast|permutation|all-to-all|poisson|dma|copy|collective|memory|command|"
                "launch",
                "(required)", "The workload type")
                .Choices(names)
                .Field(&W::type)
                .Example("bulk"),
            MakeKey<W>("on", KeyKind::Endpoint, "host (memory: hN.cpu)", "(required)",
                       "The VM endpoint it runs on (memory: the CPU that loads and stores)")
                .Only({"command", "memory"})
                .Required({"command", "memory"})
                .Endpoint(&W::on, &W::onDevice)
                .Example("h0"),
            MakeKey<W>("on", KeyKind::Hosts, "list of hosts", "(required)",
                       "The VM endpoints it runs on, rank 0 first")
                .Only({"launch"})
                .Required({"launch"})
                .Field(&W::hosts)
                .Example("[h0, h1]"),
            MakeKey<W>("run", KeyKind::Text, "string", "(required)",
                       "The command line; {hN} expands to hN's address")
                .Only(command)
                .Required(command)
                .Access(
                    [](W& w, const KeyValue& v) {
                        w.runAsWritten = v.text;
                        w.run = v.text;
                    },
                    [](const W& w) {
                        KeyValue v;
                        v.text = w.runAsWritten;
                        return v;
                    })
                .Example("ls"),
            MakeKey<W>("port", KeyKind::Integer, "integer", "29500",
                       "The TCP port of rank 0's rendezvous (MASTER_PORT)")
                .Only({"launch"})
                .Range(1024, 65535)
                .Field(&W::masterPort)
                .Example("29600"),
            MakeKey<W>("background", KeyKind::Bool, "bool", "false",
                       "Do not wait for it before the next command")
                .Only(command)
                .Field(&W::background)
                .Example("true"),
            MakeKey<W>("after", KeyKind::Time, "time", "0ns",
                       "Wall-clock wait after the previous command started")
                .Only(command)
                .Range(0, 600 * kPsPerSecond)
                .InNs()
                .Field(&W::afterPs)
                .Example("1s"),
            MakeKey<W>("timeout", KeyKind::Time, "time", "300s", "The longest it may run")
                .Only(command)
                .Range(1'000'000'000, 3600 * kPsPerSecond)
                .InNs()
                .Field(&W::timeoutPs)
                .Example("10s"),
        };
        for (auto& k : FlowWorkloadKeys())
        {
            rows.push_back(std::move(k));
        }
        for (auto& k : CollectiveWorkloadKeys())
        {
            rows.push_back(std::move(k));
        }
        for (auto& k : MemoryWorkloadKeys())
        {
            rows.push_back(std::move(k));
        }
        return rows;
    }();
    return keys;
}

const std::vector<Key<Scenario::Record>>&
RecordKeys()
{
    using R = Scenario::Record;
    static const std::vector<Key<R>> keys{
        MakeKey<R>("pcap", KeyKind::Hosts, "list of hosts", "[]",
                   "Hosts whose NIC port is captured to hN.pcap")
            .EmptyOk()
            .Field(&R::pcap)
            .Example("[h0, h1]"),
        MakeKey<R>("pcie_trace", KeyKind::Hosts, "list of hosts", "[]",
                   "Hosts whose PCIe TLPs (every link of topology.node.pcie) go to pcie-hN.txt, "
                   "a line each: Wireshark has no PCIe TLP dissector")
            .EmptyOk()
            .Field(&R::pcieTrace)
            .WrittenIf([](const R& r) { return !r.pcieTrace.empty(); })
            .Example("[h0]"),
        MakeKey<R>("queue_interval", KeyKind::Time, "time", "10us", "Queue depth sampling period")
            .Range(100'000, kPsPerSecond)
            .Timed(&R::queueInterval, &R::queueIntervalPs)
            .Example("20us"),
        MakeKey<R>("rate_interval", KeyKind::Time, "time", "10us",
                   "Flow throughput sampling period")
            .Range(100'000, kPsPerSecond)
            .Timed(&R::rateInterval, &R::rateIntervalPs)
            .Example("20us"),
        MakeKey<R>("fct_dport", KeyKind::Choice, "real|hpcc", "real",
                   "fct.txt's dport column: the flow's real port, or hpcc: 200 for flows of "
                   "incast workloads and 100 for the others (HPCC's fct_analysis.py keeps those)")
            .Choices({"real", "hpcc"})
            .Field(&R::fctDport)
            .Example("hpcc"),
    };
    return keys;
}

} // namespace fabemu
