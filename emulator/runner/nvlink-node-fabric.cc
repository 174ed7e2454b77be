// NVLink behind the NodeFabric seam: every server's GPUs joined as topology.node.nvlink
// says (NVSwitches with a link split, or a direct mesh; ns3-modules/nvlink), copies
// between GPUs that NVLink joins run on it as flows, and each link's counters go to
// nvlink.csv.
#include "emulator/runner/node-fabric.h"
#include "emulator/runner/summary.h"
#include "scenarios/src/results.h"

#include "ns3/nvlink-collective-transport.h"
#include "ns3/nvlink-helper.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

#include <fmt/format.h>

#include <sstream>

namespace fabemu
{

using namespace ns3;

namespace
{

NvlinkHelper::Node
Install(const NvlinkNodeYaml& v)
{
    NvlinkHelper h;
    h.SetLinkAttribute("Generation", UintegerValue(v.generation));
    h.SetSwitchAttribute("Generation", UintegerValue(v.switchGeneration));
    if (!v.split.empty())
    {
        return h.InstallSwitched(v.gpus, v.split);
    }
    std::vector<NvlinkHelper::Edge> edges;
    for (const auto& e : v.mesh)
    {
        edges.push_back({e.a, e.b, e.links});
    }
    return h.InstallMesh(v.gpus, edges);
}

class NvlinkNodeFabric : public NodeFabricFlows
{
  public:
    ~NvlinkNodeFabric() override
    {
        for (auto& node : m_nodes)
        {
            node->Dispose(); // its GPUs, switches and ports point at each other
        }
    }

    void Check(const Scenario& s) const override
    {
        NvlinkHelper::Node n = Install(s.topology.node.nvlink);
        if (!n.Ok())
        {
            throw ScenarioError(s.file, s.MarkOf("topology.node.nvlink"),
                                "topology.node.nvlink: " + n.error);
        }
        n.node->Dispose();
    }

    void Build(const Scenario& s) override
    {
        m_nvlink = s.topology.node.nvlink;
        for (uint32_t host = 0; host < s.topology.HostCount(); ++host)
        {
            NvlinkHelper::Node n = Install(m_nvlink);
            NS_ABORT_MSG_IF(!n.Ok(), n.error); // Check() refused it before any run
            m_nodes.push_back(n.node);
        }
    }

    void AttachRecorders(const Scenario&, const std::filesystem::path&) override {}

    void AttachNics(FlowRunner&) const override {} // NICs sit on PCIe, not on NVLink

    Ptr<ns3::CollectiveTransport> CollectiveTransport(
        uint32_t host, const std::vector<std::string>& gpus,
        const std::vector<std::string>& names) const override
    {
        std::vector<uint32_t> ids;
        for (const auto& g : gpus)
        {
            ids.push_back(DeviceNumber(g));
        }
        Ptr<NvlinkCollectiveTransport> t = CreateObject<NvlinkCollectiveTransport>();
        t->Setup(m_nodes.at(host), ids, names);
        return t;
    }

    void WriteRecords(const std::filesystem::path& dir) override
    {
        std::ostringstream rows;
        for (uint32_t host = 0; host < m_nodes.size(); ++host)
        {
            const auto& links = m_nodes[host]->GetLinks();
            for (size_t l = 0; l < links.size(); ++l)
            {
                for (uint32_t end = 0; end < 2; ++end)
                {
                    Ptr<NvlinkPort> port = links[l]->GetPort(end);
                    rows << fmt::format("h{},{},{},{},{},{},{:.0f},{},{},{:.9g}\n", host,
                                        m_nodes[host]->GetLinkName(l), end == 0 ? "out" : "in",
                                        links[l]->GetGeneration(), links[l]->GetLinks(),
                                        port->GetPacketsSent(), port->GetWireBytes(),
                                        port->GetPayloadBytesSent(), port->GetPacketsReplayed(),
                                        Sec(port->GetCreditStarvedTime()));
                }
            }
        }
        WriteCsv(dir / "nvlink.csv",
                 "host,link,direction,generation,links,packets,wire_bytes,payload_bytes,replays,"
                 "credit_starved_s",
                 rows.str());
    }

    void AddTotals(nlohmann::json& totals) const override
    {
        uint64_t replays = 0;
        for (const auto& node : m_nodes)
        {
            replays += node->GetReplays();
        }
        totals["nvlink_replays"] = replays;
    }

    std::string TotalsLine(const nlohmann::json& t) const override
    {
        return fmt::format("NVLink replays {}", t["nvlink_replays"].get<uint64_t>());
    }

  protected:
    /// Copies between GPUs of one server that NVLink joins.
    bool Takes(const Scenario& s, const WorkloadSpec& w) const override
    {
        return w.type == "copy" && w.src == w.dst &&
               s.topology.node.NvlinkJoins(w.srcDevice, w.dstDevice);
    }

    /// The bytes at the usable rate of every NVLink between the two GPUs, without latency.
    Time IdealFct(const WorkloadSpec& w) const override
    {
        const uint32_t links =
            m_nvlink.LinksBetween(DeviceNumber(w.srcDevice), DeviceNumber(w.dstDevice));
        const double rate = NvlinkLinkBytesPerSecond(m_nvlink.generation) *
                            NvlinkNcclEfficiency(m_nvlink.generation) * links;
        return Seconds(w.bytes / rate);
    }

    uint64_t Launch(size_t i, const FlowRecord& r, const std::string& from, const std::string& to,
                    std::string& why) override
    {
        Ptr<NvlinkNode> node = m_nodes[r.spec.src];
        why = node->CheckTransfer(DeviceNumber(from), DeviceNumber(to));
        return node->Send(DeviceNumber(from), DeviceNumber(to), r.spec.bytes,
                          MakeCallback(&NvlinkNodeFabric::Done, this).Bind(i));
    }

    uint64_t Progress(const FlowRecord& r, const std::string& from, const std::string& to,
                      uint64_t transfer) const override
    {
        return m_nodes[r.spec.src]->GetDelivered(DeviceNumber(from), DeviceNumber(to), transfer);
    }

  private:
    void Done(size_t i, const NvlinkTransfer& t) { Completed(i, t.completed); }

    NvlinkNodeYaml m_nvlink;
    std::vector<Ptr<NvlinkNode>> m_nodes;
};

} // namespace

std::unique_ptr<NodeFabric>
MakeNvlinkNodeFabric()
{
    return std::make_unique<NvlinkNodeFabric>();
}

} // namespace fabemu
