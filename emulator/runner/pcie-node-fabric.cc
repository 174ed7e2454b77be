// PCIe behind the NodeFabric seam: every server gets the tree topology.node.pcie
// describes (ns3-modules/pcie), its nic0 becomes the RDMA transport's host interface,
// dma workloads run on the tree's transfer API as flows, and each link's counters go
// to pcie.csv.
#include "emulator/runner/node-fabric.h"
#include "emulator/runner/summary.h"
#include "scenarios/src/results.h"

#include "ns3/boolean.h"
#include "ns3/nstime.h"
#include "ns3/pcie-collective-transport.h"
#include "ns3/pcie-helper.h"
#include "ns3/pcie-nic-interface.h"
#include "ns3/pcie-spec.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <functional>
#include <memory>
#include <sstream>

namespace fabemu
{

using namespace ns3;

namespace
{

PcieTreeSpec::LinkSpec
LinkOf(const PcieLinkYaml& l)
{
    return {l.generation, l.lanes};
}

/// topology.node.pcie as the helper's description: gpuK then nicK under each switch, then
/// those on root ports.
PcieTreeSpec
TreeSpec(const PcieNodeYaml& p)
{
    PcieTreeSpec spec;
    for (size_t k = 0; k < p.switches.size(); ++k)
    {
        PcieTreeSpec::Switch sw;
        sw.name = "sw" + std::to_string(k);
        sw.upstream = LinkOf(p.switches[k]);
        spec.switches.push_back(sw);
    }
    const auto place = [&spec](const std::vector<PcieDeviceYaml>& devices, const char* prefix,
                               PcieDeviceKind kind) {
        for (size_t k = 0; k < devices.size(); ++k)
        {
            PcieTreeSpec::Device d;
            d.name = prefix + std::to_string(k);
            d.kind = kind;
            d.link = LinkOf(devices[k].link);
            if (devices[k].under == "root")
            {
                spec.rootDevices.push_back(d);
            }
            else
            {
                spec.switches[DeviceNumber(devices[k].under)].devices.push_back(d);
            }
        }
    };
    place(p.gpus, "gpu", PcieDeviceKind::Gpu);
    place(p.nics, "nic", PcieDeviceKind::Nic);
    return spec;
}

PcieHelper
Helper(const PcieNodeYaml& p)
{
    PcieHelper h;
    h.SetLinkAttribute("Generation", UintegerValue(p.generation));
    h.SetLinkAttribute("Width", UintegerValue(p.lanes));
    h.SetPortAttribute("MaxPayloadSize", UintegerValue(p.mps));
    h.SetDmaAttribute("MaxReadRequestSize", UintegerValue(p.mrrs));
    h.SetSwitchAttribute("AcsRedirect", BooleanValue(p.acs));
    h.SetSwitchAttribute("Latency", TimeValue(PicoSeconds(p.switchLatencyPs)));
    h.SetRootComplexAttribute("IntelP2p", BooleanValue(p.intelP2p));
    return h;
}

/// Payload bytes/s of a link moving \p mps-byte TLPs with a 3DW header.
double
FramingRate(uint32_t generation, uint32_t lanes, uint32_t mps)
{
    const auto g = static_cast<uint8_t>(generation);
    return PcieLinkBytesPerSecond(g, static_cast<uint8_t>(lanes)) * mps /
           PcieTlpWireBytes(g, 12, mps, false);
}

class PcieNodeFabric : public NodeFabricFlows
{
  public:
    ~PcieNodeFabric() override
    {
        for (auto& tree : m_trees)
        {
            tree->Dispose(); // the tree's elements point at each other
        }
    }

    void Check(const Scenario& s) const override
    {
        PcieHelper::Tree t =
            Helper(s.topology.node.pcie).InstallTree(TreeSpec(s.topology.node.pcie));
        if (!t.Ok())
        {
            throw ScenarioError(s.file, s.MarkOf("topology.node.pcie"),
                                "topology.node.pcie: " + t.error);
        }
        t.tree->Dispose();
    }

    void Build(const Scenario& s) override
    {
        m_pcie = s.topology.node.pcie;
        m_hasNvlink = s.topology.node.hasNvlink;
        m_nvlinkJoins = [node = s.topology.node](const std::string& a, const std::string& b) {
            return node.NvlinkJoins(a, b);
        };
        m_railsPerServer = s.topology.RailsPerServer();
        const PcieHelper h = Helper(m_pcie);
        const PcieTreeSpec spec = TreeSpec(m_pcie);
        for (uint32_t host = 0; host < s.topology.HostCount(); ++host)
        {
            PcieHelper::Tree t = h.InstallTree(spec);
            NS_ABORT_MSG_IF(!t.Ok(), t.error); // Check() refused it before any run
            m_trees.push_back(t.tree);
        }
    }

    void AttachRecorders(const Scenario& s, const std::filesystem::path& dir) override
    {
        const auto links = Links();
        for (uint32_t host : s.record.pcieTrace)
        {
            auto& out = m_traces.emplace_back(
                std::make_unique<std::ofstream>(dir / fmt::format("pcie-h{}.txt", host)));
            *out << "# time_ns link direction tlp seq tag requester address bytes [replay]: "
                    "every TLP sent on h"
                 << host << "'s PCIe links\n";
            for (const auto& [name, parent] : links)
            {
                Ptr<PcieLink> link = m_trees[host]->GetLink(name);
                for (uint32_t end = 0; end < 2; ++end)
                {
                    const std::string label =
                        fmt::format("{}-{} {}", parent, name, end == 0 ? "down" : "up");
                    link->GetPort(end)->TraceConnectWithoutContext(
                        "TlpTx", MakeBoundCallback(&PcieNodeFabric::TraceTlp, out.get(), label));
                }
            }
        }
    }

    /// GPUs of a server without NVLink, or some of whose pairs NVLink does not join:
    /// collectives over its PCIe tree (for those pairs, on a server with NVLink).
    Ptr<ns3::CollectiveTransport> CollectiveTransport(
        uint32_t host, const std::vector<std::string>& gpus,
        const std::vector<std::string>& names) const override
    {
        bool joined = m_hasNvlink;
        for (size_t a = 0; a < gpus.size() && joined; ++a)
        {
            for (size_t b = 0; b < gpus.size() && joined; ++b)
            {
                joined = a == b || m_nvlinkJoins(gpus[a], gpus[b]);
            }
        }
        if (joined)
        {
            return nullptr; // NVLink joins every pair
        }
        std::vector<PcieCollectiveTransport::Rank> ranks;
        for (const auto& g : gpus)
        {
            ranks.push_back({g, Device(g)->under});
        }
        Ptr<PcieCollectiveTransport> t = CreateObject<PcieCollectiveTransport>();
        t->Setup(m_trees.at(host), ranks, m_pcie.acs, m_pcie.mps, names);
        return t;
    }

    void AttachNics(FlowRunner& runner) const override
    {
        if (m_pcie.nics.empty())
        {
            return;
        }
        // A server's network ports: one (nic0), or on a rail cluster one per rail (nicK).
        for (uint32_t host = 0; host < m_trees.size() * m_railsPerServer; ++host)
        {
            runner.SetHostInterface(host, NicInterface(host));
        }
    }

    Ptr<RdmaHostInterface> NicInterface(uint32_t host) const override
    {
        if (m_pcie.nics.empty() || host >= m_trees.size() * m_railsPerServer)
        {
            return nullptr;
        }
        Ptr<PcieNicInterface> nic = CreateObject<PcieNicInterface>();
        nic->Setup(m_trees[host / m_railsPerServer],
                   "nic" + std::to_string(host % m_railsPerServer));
        return nic;
    }

    void WriteRecords(const std::filesystem::path& dir) override
    {
        for (auto& trace : m_traces)
        {
            trace->close();
        }
        std::ostringstream rows;
        const auto links = Links();
        for (uint32_t host = 0; host < m_trees.size(); ++host)
        {
            for (const auto& [name, parent] : links)
            {
                Ptr<PcieLink> link = m_trees[host]->GetLink(name);
                for (uint32_t end = 0; end < 2; ++end)
                {
                    Ptr<PciePort> port = link->GetPort(end);
                    rows << fmt::format("h{},{}-{},{},{},{},{},{},{:.0f},{},{},{:.9g}\n", host,
                                        parent, name, end == 0 ? "down" : "up",
                                        unsigned(link->GetGeneration()), unsigned(link->GetWidth()),
                                        port->GetTlpsSent(), port->GetDllpsSent(),
                                        port->GetWireBytes(), port->GetPayloadBytesSent(),
                                        port->GetTlpsReplayed(), Sec(Starved(port)));
                }
            }
        }
        WriteCsv(dir / "pcie.csv",
                 "host,link,direction,generation,lanes,tlps,dllps,wire_bytes,payload_bytes,"
                 "replays,credit_starved_s",
                 rows.str());
    }

    void AddTotals(nlohmann::json& totals) const override
    {
        uint64_t replays = 0;
        Time starved;
        const auto links = Links();
        for (const auto& tree : m_trees)
        {
            for (const auto& link : links)
            {
                for (uint32_t end = 0; end < 2; ++end)
                {
                    Ptr<PciePort> port = tree->GetLink(link.first)->GetPort(end);
                    replays += port->GetTlpsReplayed();
                    starved += Starved(port);
                }
            }
        }
        totals["pcie_replays"] = replays;
        totals["credit_starved_s"] = Sec(starved);
    }

    std::string TotalsLine(const nlohmann::json& t) const override
    {
        return fmt::format("PCIe replays {}, credit-starved {:.3g} s",
                           t["pcie_replays"].get<uint64_t>(), t["credit_starved_s"].get<double>());
    }

  protected:
    /// dma workloads, and copies between GPUs of one server that NVLink does not join.
    bool Takes(const Scenario& s, const WorkloadSpec& w) const override
    {
        // (A GPU that shares a CXL expander's root port DMAs over CXL.io: the CXL fabric's.)
        return (w.type == "dma" &&
                !(s.topology.node.hasCxl && s.topology.node.cxl.SharedBy(w.srcDevice) >= 0)) ||
               (w.type == "copy" && w.src == w.dst &&
                !s.topology.node.NvlinkJoins(w.srcDevice, w.dstDevice));
    }

    uint64_t Launch(size_t i, const FlowRecord& r, const std::string& from, const std::string& to,
                    std::string& why) override
    {
        Ptr<PcieTree> tree = m_trees[r.spec.src];
        const auto done = MakeCallback(&PcieNodeFabric::Done, this).Bind(i);
        const uint64_t id = r.spec.op == RdmaWorkRequest::Op::Read
                                ? tree->Read(from, to, 0, r.spec.bytes, done)
                                : tree->Write(from, to, 0, r.spec.bytes, done);
        if (id == 0)
        {
            why = tree->CheckTransfer(from, to, 0, r.spec.bytes);
        }
        return id;
    }

    uint64_t Progress(const FlowRecord& r, const std::string& from, const std::string&,
                      uint64_t transfer) const override
    {
        return m_trees[r.spec.src]->GetDelivered(from, transfer);
    }

  private:
    /// Every link of a tree by the name of what hangs below it, with what is above it.
    std::vector<std::pair<std::string, std::string>> Links() const
    {
        std::vector<std::pair<std::string, std::string>> links;
        for (size_t k = 0; k < m_pcie.switches.size(); ++k)
        {
            links.emplace_back("sw" + std::to_string(k), "rc");
        }
        for (const auto& [devices, prefix] :
             {std::pair{&m_pcie.gpus, "gpu"}, std::pair{&m_pcie.nics, "nic"}})
        {
            for (size_t k = 0; k < devices->size(); ++k)
            {
                const std::string& under = (*devices)[k].under;
                links.emplace_back(prefix + std::to_string(k), under == "root" ? "rc" : under);
            }
        }
        return links;
    }

    static void TraceTlp(std::ofstream* out, std::string label, const PcieTlp& tlp, bool replay)
    {
        static const char* const kinds[] = {"MWr", "MRd", "CplD"};
        const uint32_t bytes = tlp.kind == PcieTlp::Kind::MemRead ? tlp.length : tlp.payload;
        *out << fmt::format("{:.3f} {} {} {} {} 0x{:04x} 0x{:x} {}{}\n",
                            Simulator::Now().GetPicoSeconds() / 1e3, label, kinds[int(tlp.kind)],
                            tlp.seq, tlp.tag, tlp.requester, tlp.address, bytes,
                            replay ? " replay" : "");
    }

    static Time Starved(Ptr<PciePort> port)
    {
        Time t;
        for (int c = 0; c < kPcieFcClasses; ++c)
        {
            t += port->GetCreditStarvedTime(PcieFcClass(c));
        }
        return t;
    }

    /// The device's place: "swK", "root", or "" for host memory.
    const PcieDeviceYaml* Device(const std::string& name) const
    {
        const auto* devices = name.rfind("gpu", 0) == 0   ? &m_pcie.gpus
                              : name.rfind("nic", 0) == 0 ? &m_pcie.nics
                                                          : nullptr;
        return devices ? &devices->at(DeviceNumber(name)) : nullptr;
    }

    /// The payload rate of the link above a device or a switch.
    double Rate(const PcieLinkYaml& l) const
    {
        return FramingRate(l.generation ? l.generation : m_pcie.generation,
                           l.lanes ? l.lanes : m_pcie.lanes, m_pcie.mps);
    }

    void Done(size_t i, const PcieTransfer& t) { Completed(i, t.completed); }

    /// The bytes alone at the framing limit of the narrowest link on the path (no latency).
    Time IdealFct(const WorkloadSpec& w) const override
    {
        std::vector<double> rates;
        std::vector<std::string> switches;
        for (const std::string& name : {w.srcDevice, w.dstDevice})
        {
            const PcieDeviceYaml* d = Device(name);
            if (d)
            {
                rates.push_back(Rate(d->link));
            }
            switches.push_back(d ? d->under : "root");
        }
        const bool underOne = switches[0] == switches[1] && switches[0] != "root" && !m_pcie.acs;
        for (const std::string& sw : switches)
        {
            if (!underOne && sw != "root")
            {
                rates.push_back(Rate(m_pcie.switches[DeviceNumber(sw)]));
            }
        }
        const double slowest = *std::min_element(rates.begin(), rates.end());
        return Seconds(w.bytes / slowest);
    }

    PcieNodeYaml m_pcie;
    bool m_hasNvlink{false}; ///< the servers' GPUs are on NVLink too: it joins them
    /// Whether NVLink joins two GPUs ("gpuK") of a server.
    std::function<bool(const std::string&, const std::string&)> m_nvlinkJoins;
    std::vector<Ptr<PcieTree>> m_trees;
    std::vector<std::unique_ptr<std::ofstream>> m_traces; ///< record.pcie_trace's files
    uint32_t m_railsPerServer{1};
};

} // namespace

std::unique_ptr<NodeFabric>
MakePcieNodeFabric()
{
    return std::make_unique<PcieNodeFabric>();
}

} // namespace fabemu
