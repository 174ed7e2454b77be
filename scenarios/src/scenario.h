/*
 * A scenario file: one experiment stated once. Load() reads the YAML, checks
 * every key, type, unit, range and host name, fills in the defaults, and
 * either returns the resolved scenario or throws a ScenarioError whose text is
 * "FILE:LINE:COL: what is wrong". Nothing is run here.
 *
 * The keys are data (scenario-keys.cc): one table per section, walked by
 * the parser, the validation, ResolvedYaml, --set, Keys() (`fabemu list`) and
 * the key table of docs/scenarios.md.
 */
#ifndef FABEMU_SCENARIO_H
#define FABEMU_SCENARIO_H

#include "ns3/cxl-spec.h"

#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace fabemu
{

/// A place in the scenario file, 1-based; 0 when unknown (e.g. a --set override).
struct SourceMark
{
    int line{0};
    int column{0};
};

/// A value from the file as a message shows it: at most 60 bytes (never half a UTF-8
/// character), then how long it was (a 1 MB name is not echoed whole).
std::string Shown(const std::string& value);

class ScenarioError : public std::runtime_error
{
  public:
    ScenarioError(const std::string& file, SourceMark mark, const std::string& what);
    const std::string& Reason() const { return m_reason; }
    SourceMark Mark() const { return m_mark; }

  private:
    std::string m_reason;
    SourceMark m_mark;
};

struct LinkSpec
{
    std::string rate{"100Gbps"};
    uint64_t bitsPerSecond{100'000'000'000};
    std::string delay{"1us"};
    int64_t delayPs{1'000'000};
};

struct FabricSpec
{
    std::string type{"roce"}; ///< roce | infiniband | iwarp
    uint32_t mtu{1024};
    bool pfc{true};
    bool ecn{true};
    uint64_t kmin{5 * 1024};
    uint64_t kmax{200 * 1024};
    double pmax{0.01};
    std::string cc{"dcqcn"};
    std::string dcqcnPreset{"paper"};
    uint64_t bufferBytes{12 * 1024 * 1024};
    uint8_t lmc{0};                ///< infiniband: LID Mask Control, 2^lmc paths per host
    std::string routing{"minhop"}; ///< infiniband: minhop | updown
    /// Any ns-3 attribute default by full name, applied last (after the keys above).
    struct Setting
    {
        std::string name;
        std::string value;
        SourceMark mark;
    };
    std::vector<Setting> set;
};

/// A PCIe link's generation and width; 0: the tree's own (topology.node.pcie).
struct PcieLinkYaml
{
    uint32_t generation{0};
    uint32_t lanes{0};
};

/// A GPU or NIC of a server's PCIe tree: the switch it sits under ("root": a root port).
struct PcieDeviceYaml
{
    std::string under{"sw0"};
    PcieLinkYaml link;
    std::vector<uint32_t> serves; ///< a NIC: the GPUs it serves, as given (empty: by position)
};

/// topology.node.pcie: every server's PCIe tree (ns3-modules/pcie).
struct PcieNodeYaml
{
    uint32_t generation{5};
    uint32_t lanes{16};
    uint32_t mps{256};
    uint32_t mrrs{512};
    bool acs{false};      ///< ACS redirect: P2P under a switch goes up to the root complex
    bool intelP2p{false}; ///< root complex: P2P split into 64-byte TLPs
    std::string switchLatency{"105ns"};
    int64_t switchLatencyPs{105'000};
    std::vector<PcieLinkYaml> switches; ///< sw0, sw1, ...: their upstream links
    std::vector<PcieDeviceYaml> gpus;   ///< gpu0, gpu1, ...
    std::vector<PcieDeviceYaml> nics;   ///< nic0, ...: nic0 carries the host's RDMA
};

/// Two GPUs joined directly by NVLink (a mesh edge).
struct NvlinkEdgeYaml
{
    uint32_t a{0};
    uint32_t b{0};
    uint32_t links{1};
};

/// topology.node.nvlink: every server's GPUs over NVLink (ns3-modules/nvlink).
struct NvlinkNodeYaml
{
    uint32_t generation{4}; ///< NVLink 1..5
    uint32_t gpus{8};
    uint32_t switchGeneration{3};     ///< NVSwitch 1..3 (its port count)
    std::vector<uint32_t> split;      ///< links from each GPU to switch s (switched)
    std::vector<NvlinkEdgeYaml> mesh; ///< direct links (no switch), when split is empty
    /// Whether GPUs \p a and \p b have an NVLink path (through a switch or an edge).
    bool Reaches(uint32_t a, uint32_t b) const;
    /// NVLinks between GPUs \p a and \p b: the GPU's links to the switches, or the edge's.
    uint32_t LinksBetween(uint32_t a, uint32_t b) const;
};

/// A CXL Type-3 memory expander (ns3-modules/cxl): hN.cxlK, or the pool's.
struct CxlExpanderYaml
{
    uint64_t capacity{uint64_t{256} << 30};      ///< bytes (reported: the model keeps no addresses)
    uint64_t dramBitsPerSecond{614'400'000'000}; ///< 76.8 GB/s: two DDR5-4800 channels
    int64_t dramLatencyPs{60'000};
    /// "gpuK": the expander sits under a CXL switch on its root port together with that
    /// GPU of the PCIe tree, whose DMA to host memory crosses the same link; "" alone.
    std::string shares;
};

/// topology.node.cxl: CXL memory on every server's CPU (ns3-modules/cxl, docs/cxl.md).
struct CxlNodeYaml
{
    std::string version{"2.0"}; ///< 1.1 | 2.0 | 3.0 | 3.1 | ccix
    double gigaTransfers{0};    ///< per lane; 0: the version's fastest
    uint32_t lanes{16};
    std::string flit;                       ///< "" (the rate's format) | 68 | 256 | 256-lopt
    std::vector<CxlExpanderYaml> expanders; ///< cxl0, cxl1, ...: each on a root port of the CPU
    bool hasPool{false};
    std::vector<uint32_t> poolHosts; ///< servers a CXL switch joins to the pool (empty: all)
    /// CXL 3.x: the switches the pool's servers sit on, each a list of servers, each switch
    /// linked to the pool's switch (empty: every pool server on the pool's switch).
    std::vector<std::vector<uint32_t>> poolSwitches;
    CxlExpanderYaml pool; ///< the pool's multi-logical-device expander
    int64_t switchLatencyPs{50'000};
    /// Whether server \p host is wired to the pool's switch.
    bool InPool(uint32_t host) const;
    /// The expander whose root port GPU \p gpu ("gpuK") shares, or -1.
    int64_t SharedBy(const std::string& gpu) const;
};

/// topology.node.cxl's link as the model checks it (the version's fastest rate and its
/// flit unless gts and flit say otherwise).
ns3::CxlLinkSpec CxlLinkOf(const CxlNodeYaml& c);

/// The number in a name inside a server: "gpu3" -> 3, "nic0" -> 0, "sw2" -> 2.
uint32_t DeviceNumber(const std::string& name);

/// topology.node: the inside of every server.
struct NodeYaml
{
    std::string preset; ///< the server preset it started from ("" for none)
    /// The preset's NIC rate ("400Gbps"; "" for none): the host links' rate on a network
    /// of such servers unless topology.link.rate says otherwise.
    std::string nicRate;
    bool hasPcie{false};
    PcieNodeYaml pcie;
    bool hasNvlink{false};
    NvlinkNodeYaml nvlink;
    bool hasCxl{false};
    CxlNodeYaml cxl;
    /// GPUs of the server: the PCIe tree's, else NVLink's.
    uint32_t Gpus() const;
    /// Whether NVLink carries a copy between \p srcGpu and \p dstGpu ("gpuK"): the server has
    /// NVLink and it joins them. Otherwise PCIe does.
    bool NvlinkJoins(const std::string& srcGpu, const std::string& dstGpu) const;
    /// The names a workload may give inside a server: "mem", "gpuK", "nicK"; with CXL
    /// "cpu", "cxlK" and "pool".
    std::vector<std::string> Endpoints() const;
    /// The NIC that serves GPU \p gpu: the one whose `serves` names it; else the one under
    /// its PCIe switch in the same position among that switch's NICs as the GPU among its
    /// GPUs (GPU k -> NIC k on dgx-h100); nic0 if no NIC shares its switch.
    uint32_t ServingNic(uint32_t gpu) const;
};

struct TopologyYaml
{
    std::string builder{"star"}; ///< pair | star | dumbbell | leaf-spine | fat-tree | ring | node
    uint32_t hosts{2};           ///< star, dumbbell
    uint32_t leaves{2};          ///< leaf-spine
    uint32_t spines{2}; ///< leaf-spine: spine switches; rail: spines joining the rails (0: none)
    uint32_t hostsPerLeaf{2};
    uint32_t k{4};     ///< fat-tree
    uint32_t nodes{2}; ///< rail: servers
    uint32_t rails{0}; ///< rail: NIC k of every server on rail k (0: every NIC of a server)
    uint32_t serversPerLeaf{0}; ///< rail: a rail leaf's servers (0: one leaf per rail)
    uint32_t railSpines{2};     ///< rail: spines inside a rail of several leaves
    LinkSpec link;
    LinkSpec uplink;     ///< switch-to-switch links (leaf-spine, fat-tree; rail: leaf to spine)
    LinkSpec spineLink;  ///< rail: a rail's top switches to the spines joining the rails
    LinkSpec bottleneck; ///< dumbbell's middle link
    /// One link unlike the rest (topology.links): a slow or long cable.
    struct LinkOverride
    {
        std::string name; ///< its two ends, "s0-s3"; on rail a NIC's end is "h1.nic3"
        std::string rate; ///< as written; "" keeps the builder's
        uint64_t bitsPerSecond{0};
        std::string delay; ///< as written; "" keeps the builder's
        int64_t delayPs{0};
        SourceMark mark;
    };
    std::vector<LinkOverride> overrides;
    /// A switch pinned to a rank of a partitioned run (topology.partition).
    struct PartitionPin
    {
        std::string name; ///< the switch, as the builder names it ("s3")
        uint32_t rank{0};
        SourceMark mark;
    };
    std::vector<PartitionPin> partition;
    NodeYaml node;
    /// Servers the builder makes (h0..h{N-1}).
    uint32_t HostCount() const;
    /// Ports the network has for them: a server each, or on rail a NIC each (server x rails
    /// + rail).
    uint32_t NetworkHosts() const;
    /// rail's rails, resolved (rails, or every NIC of a server); 1 on other builders.
    uint32_t RailsPerServer() const;
    /// rail: leaves in each rail (1 unless servers_per_leaf splits it); 0 on other builders.
    uint32_t LeavesPerRail() const;
};

struct EndpointSpec
{
    std::string host; ///< hN
    uint32_t index{0};
    std::string kind{"vm"};    ///< vm | netns
    std::string device{"rxe"}; ///< rxe | siw | none (netns only: plain IP)
};

struct WorkloadSpec
{
    std::string type; ///< bulk | incast | ... | collective | command (WorkloadKinds)
    SourceMark mark;
    // Flow workloads.
    std::string tag;         ///< what results call its flows; "" means its type
    std::string op{"write"}; ///< write | send | read
    uint8_t sl{0};           ///< service level (InfiniBand: picks the VL)
    uint32_t src{0};
    uint32_t dst{0};
    std::string srcDevice;         ///< dma: "gpu0", "nic0" inside src; "" for the host itself
    std::string dstDevice;         ///< dma: "gpu0", "nic0", "mem" inside dst
    std::string srcMemory{"host"}; ///< flows with topology.node.pcie: what the NICs read...
    std::string dstMemory{"host"}; ///< ...and write: host memory or "gpuK"
    std::vector<uint32_t> hosts;   ///< srcs of incast; hosts of the others
    uint64_t bytes{0};
    std::vector<uint64_t> sizes; ///< collective: a sweep of sizes (bytes its first); empty: bytes
    int64_t startPs{0};
    int64_t stopPs{0}; ///< poisson: arrivals end here (default: the scenario's duration)
    double load{0};
    std::string cdf; ///< websearch | hadoop | a file
    std::string cdfPath;
    // Commands on VM endpoints (on), and memory traffic of a server's CPU (on: hN.cpu).
    uint32_t on{0};
    std::string onDevice; ///< memory: "cpu"
    // Memory (CXL): src, srcDevice = on; dst, dstDevice = the target (mem, cxlK, pool).
    double readRatio{1.0};
    std::string pattern{"random"};   ///< random | stream (DRAM row misses or hits)
    uint32_t outstanding{64};        ///< requests in flight at most
    uint64_t memoryBitsPerSecond{0}; ///< offered; 0: max (as fast as outstanding lets)
    int64_t memoryDurationPs{0};     ///< issue for this long instead of bytes
    std::string run;                 ///< with {hN} expanded
    std::string runAsWritten;
    bool background{false};
    uint32_t masterPort{29500}; ///< launch: rank 0's rendezvous port (MASTER_PORT)
    int64_t afterPs{0};         ///< wall-clock delay after the previous command was started
    int64_t timeoutPs{300'000'000'000'000};
    // Collectives: the ranks are hosts (hosts), or GPUs: host hosts[r], device rankDevices[r].
    std::vector<std::string> rankDevices; ///< "gpuK" per rank; empty: the ranks are hosts
    std::string algorithm{"auto"}; ///< ring | halving-doubling | direct | hierarchical | auto
    uint32_t chunks{8};            ///< hierarchical: pipeline chunks
    /// Stragglers as written: rank name ("h3", "h0.gpu2"): how late (ps, and as written).
    std::map<std::string, std::pair<int64_t, std::string>> stragglers;
    /// The same by rank (its place in the ranks): how late its first sends of every
    /// iteration leave; ranks not listed are not late.
    std::map<uint32_t, int64_t> rankDelayPs;
    /// A collective's rank \p r as results name it: "h3", or "h0.gpu2".
    std::string RankName(size_t r) const
    {
        return "h" + std::to_string(hosts.at(r)) +
               (r < rankDevices.size() ? "." + rankDevices[r] : std::string());
    }
    /// A collective's ranks by server (in order of first mention), each server's by GPU
    /// number: the j-th of every server is on rail j. Empty when the ranks are hosts.
    std::vector<std::vector<uint32_t>> RanksByServer() const;
    uint32_t iterations{1};
    /// A training step: each iteration computes this long (ps; 0: no compute) while its
    /// collective's buckets become ready one after another.
    int64_t computePs{0};
    uint32_t buckets{1}; ///< the collective's bytes in this many (DDP's gradient buckets)
    std::string job;     ///< "" until resolved: jobN
};

/// What results call \p w's flows: its tag, else its type.
inline const std::string&
WorkloadLabel(const WorkloadSpec& w)
{
    return w.tag.empty() ? w.type : w.tag;
}

struct Expectation
{
    std::string metric; ///< a dotted path into summary.json, '*' for every element
    std::string want;   ///< as written: 0, ">0", ">=0.9", "<5", "1..10"
    enum class Op
    {
        Eq,
        Gt,
        Ge,
        Lt,
        Le,
        Range,
    } op{Op::Eq};
    double a{0};
    double b{0};
    SourceMark mark;
    bool Holds(double value) const;
};

/// One fault (faults:): at a time, a link degraded to another rate or given bit errors.
/// Links are named by their two ends as the topology names them (s0-s1), or a host's own
/// link by the host (h3).
struct FaultSpec
{
    std::string at{"0s"};
    int64_t atPs{0};
    std::string link; ///< "" for a straggler (host)
    std::string rate; ///< as written; "" unless the fault is a degraded link
    uint64_t bitsPerSecond{0};
    double ber{-1};         ///< bit errors per bit; < 0 unless the fault is bit errors
    int64_t host{-1};       ///< a straggler: the host whose messages start late; else -1
    std::string delay;      ///< as written; "" unless the fault is a straggler
    int64_t delayPs{0};     ///< how late each message the host starts leaves
    std::string pauseStorm; ///< as written; "" unless the host's NIC storms PFC pauses
    int64_t pauseStormPs{0};
    std::string crash; ///< "vm": the host, a VM endpoint, is killed at `at`; else ""
    std::string down;  ///< as written; "" unless the link goes down (for this long)
    int64_t downPs{0};
    SourceMark mark; ///< the item, for messages about its link
    /// "rate", "ber", "down", "delay" (a straggler), "pause_storm" or "crash".
    std::string Kind() const
    {
        if (host >= 0)
        {
            if (!crash.empty())
            {
                return "crash";
            }
            return pauseStorm.empty() ? "delay" : "pause_storm";
        }
        if (!down.empty())
        {
            return "down";
        }
        return rate.empty() ? "ber" : "rate";
    }
};

struct Scenario
{
    std::string file;
    std::string name;
    std::string description;
    uint64_t seed{1};
    std::string duration{"10ms"};
    int64_t durationPs{10'000'000'000};
    std::string fidelity{"packet"}; ///< collectives: packet | analytical
    FabricSpec fabric;
    TopologyYaml topology;
    std::vector<EndpointSpec> endpoints; ///< in host order
    std::vector<WorkloadSpec> workloads;
    std::vector<FaultSpec> faults;
    std::vector<Expectation> expect;
    /// What is recorded besides FCTs and counters.
    struct Record
    {
        std::vector<uint32_t> pcap;      ///< hosts whose NIC port is captured
        std::vector<uint32_t> pcieTrace; ///< hosts whose PCIe TLPs go to pcie-hN.txt
        std::string queueInterval{"10us"};
        int64_t queueIntervalPs{10'000'000};
        std::string rateInterval{"10us"};
        int64_t rateIntervalPs{10'000'000};
        /// fct.txt's dport column: "real" (the flow's UDP/TCP port) or "hpcc" (200 for
        /// flows of incast workloads, 100 for the others, as HPCC's fct_analysis.py reads).
        std::string fctDport{"real"};
    } record;
    std::string lagThreshold{"1ms"};
    int64_t lagThresholdPs{1'000'000'000};
    /// Emulation: how the simulation thread shares the cores with the VMs:
    /// shared (nice -10) or realtime (SCHED_FIFO).
    std::string scheduling{"shared"};
    std::string onFailure{"continue"}; ///< emulation: continue | stop after a failed command
    /// Where each key was written, by dotted path ("fabric.buffer", "workloads.0.bytes");
    /// an unknown mark for a key given by --set.
    std::map<std::string, SourceMark> marks;

    bool HasVms() const { return !endpoints.empty(); }
    /// The place of \p key, or of the closest enclosing key written in the file; unknown if none.
    SourceMark MarkOf(const std::string& key) const;
    /// The IPv4 address that {hN} expands to (10.0.0.N+1).
    static std::string HostAddress(uint32_t host);
};

/// Reads and checks \p file; \p overrides are "key.path=value" (--set), applied
/// over the file before checking. Throws ScenarioError.
Scenario LoadScenario(const std::string& file, const std::vector<std::string>& overrides = {});
/// The same from text (tests); \p name stands for the file in messages.
Scenario ParseScenario(const std::string& text, const std::string& name,
                       const std::vector<std::string>& overrides = {});

/**
 * \brief A server's inside as `nvidia-smi topo -m` prints it: a matrix over its GPUs and
 * NICs whose cells say how each pair connects: X (itself), NV# (# NVLinks between two
 * GPUs), PIX (one PCIe switch), PHB (through the root complex, the host bridge). PXB and
 * SYS do not occur: the trees have one switch level and one socket. A legend follows.
 */
std::string NodeTopologyMatrix(const NodeYaml& node);

/// Every value actually used, defaults included, as YAML that loads back to the same scenario.
std::string ResolvedYaml(const Scenario& s);

/// One documented key, for `fabemu list` and docs/scenarios.md; made from the key tables
/// the parser reads (scenario-keys.cc), so the three cannot disagree.
struct KeyHelp
{
    std::string key; ///< dotted path, as --set takes it ("fabric.ecn.kmin", "workloads.N.bytes")
    std::string type;
    std::string defaultValue;
    std::string help;
    std::string appliesTo; ///< fabric types, builders or workload types; "" for all
    std::string example;   ///< a value the parser takes
};
/// Every key path of every table.
const std::vector<KeyHelp>& Keys();
/// Workload types with their keys.
const std::vector<KeyHelp>& WorkloadTypes();
/// Fabric types and topology builders (key: the name; type: the keys only it takes).
const std::vector<KeyHelp>& FabricTypeHelp();
const std::vector<KeyHelp>& BuilderHelp();
/// The key table of docs/scenarios.md, as Markdown rows (the docs test compares them).
std::string KeysMarkdown();

/// Byte counts: 1500, 5KB, 1MB (KB = 1024 bytes, as switch buffers are sized; KiB too).
bool ParseBytes(const std::string& text, uint64_t& bytes);
/// Times: 20ms, 1us, 100ns, 2s, 1.5ms; a bare number is an error (no unit).
bool ParseTime(const std::string& text, int64_t& picoseconds);
/// Rates: 100Gbps, 25Gbps, 100Mbps, 1.5Gbps (powers of 1000, as ns-3).
bool ParseRate(const std::string& text, uint64_t& bitsPerSecond);
/// The closest of \p options to \p word (edit distance <= 3), or "".
std::string Closest(const std::string& word, const std::vector<std::string>& options);

} // namespace fabemu

#endif
