// CXL behind the NodeFabric seam: every server's CPU gets the expanders topology.node.cxl
// describes (ns3-modules/cxl), the pool's servers share one expander through a switch,
// memory workloads run as flows (a CPU's loads and stores), and their latency against
// achieved bandwidth goes to memory.csv and summary.json's memory.
#include "emulator/runner/node-fabric.h"
#include "emulator/runner/summary.h"
#include "scenarios/src/results.h"

#include "ns3/cxl-helper.h"
#include "ns3/double.h"
#include "ns3/enum.h"
#include "ns3/simulator.h"
#include "ns3/string.h"
#include "ns3/uinteger.h"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>
#include <sstream>

namespace fabemu
{

using namespace ns3;

namespace
{

class CxlNodeFabric : public NodeFabricFlows
{
  public:
    ~CxlNodeFabric() override
    {
        for (const auto& m : m_memory)
        {
            if (m.client)
            {
                m.client->Dispose();
            }
            if (m.dma)
            {
                m.dma->Dispose();
            }
        }
        m_servers.Dispose();
    }

    void Check(const Scenario& s) const override
    {
        CxlHelper::Servers built = Install(s);
        const std::string error = built.error;
        built.Dispose();
        if (!error.empty())
        {
            throw ScenarioError(s.file, s.MarkOf("topology.node.cxl"),
                                "topology.node.cxl: " + error);
        }
    }

    void Build(const Scenario& s) override
    {
        m_cxl = s.topology.node.cxl;
        m_servers = Install(s);
        NS_ABORT_MSG_IF(!m_servers.Ok(), m_servers.error); // Check() refused it before any run
        for (const auto& w : s.workloads)
        {
            if (Takes(s, w))
            {
                m_memory.push_back({w, nullptr, nullptr, 0});
            }
        }
        m_seed = s.seed;
    }

    void AttachRecorders(const Scenario&, const std::filesystem::path&) override {}

    void AttachNics(FlowRunner&) const override {}

    void WriteRecords(const std::filesystem::path& dir) override
    {
        std::ostringstream rows;
        for (const auto& row : Rows())
        {
            rows << fmt::format(
                "{},{},{},{},{},{},{},{},{:.6g},{:.6g},{:.6g},{:.6g},{:.6g},{:.6g},{:.6g},{}\n",
                row["workload"].get<std::string>(), row["cpu"].get<std::string>(),
                row["target"].get<std::string>(), row["read_ratio"].get<double>(),
                row["pattern"].get<std::string>(), row["outstanding"].get<uint32_t>(),
                row["offered_gbs"].get<double>(), row["requests"].get<uint64_t>(),
                row["gbs"].get<double>(), row["p50_ns"].get<double>(), row["p90_ns"].get<double>(),
                row["p99_ns"].get<double>(), row["p999_ns"].get<double>(),
                row["max_ns"].get<double>(), row["idle_ns"].get<double>(),
                row["target_capacity_bytes"].get<uint64_t>());
        }
        WriteCsv(dir / "memory.csv",
                 "workload,cpu,target,read_ratio,pattern,outstanding,offered_gbs,requests,gbs,"
                 "p50_ns,p90_ns,p99_ns,p999_ns,max_ns,idle_ns,target_capacity_bytes",
                 rows.str());
    }

    void AddTotals(nlohmann::json& totals) const override
    {
        uint64_t flits = 0;
        uint64_t replays = 0;
        for (const auto& link : m_servers.AllLinks())
        {
            for (uint32_t end = 0; end < 2; ++end)
            {
                flits += link->GetPort(end)->GetFlitsSent();
                replays += link->GetPort(end)->GetReplays();
            }
        }
        totals["cxl_flits"] = flits;
        totals["cxl_replays"] = replays;
    }

    void AddSummary(nlohmann::json& summary) const override { summary["memory"] = Rows(); }

    std::string TotalsLine(const nlohmann::json& t) const override
    {
        return fmt::format("CXL flits {}, retries {}", t.value("cxl_flits", uint64_t{0}),
                           t.value("cxl_replays", uint64_t{0}));
    }

  protected:
    /// Memory workloads, and the DMA of a GPU that shares an expander's root port.
    bool Takes(const Scenario& s, const WorkloadSpec& w) const override
    {
        return w.type == "memory" ||
               (w.type == "dma" && s.topology.node.cxl.SharedBy(w.srcDevice) >= 0);
    }

    /// The bytes alone at the narrower of the target's link (reads and writes each on
    /// their direction) and its DRAM, at most the offered rate; a duration is its own.
    Time IdealFct(const WorkloadSpec& w) const override
    {
        if (w.memoryDurationPs > 0)
        {
            return PicoSeconds(w.memoryDurationPs);
        }
        const CxlLinkSpec link = CxlLinkOf(m_cxl);
        if (w.type == "dma")
        {
            // Full TLPs of MaxPayload bytes in the link's slots and flits.
            UintegerValue mps;
            CreateObject<CxlDmaEngine>()->GetAttribute("MaxPayload", mps);
            const double payload = static_cast<double>(mps.Get());
            return Seconds(static_cast<double>(w.bytes) * CxlIoSlots(mps.Get()) * 16 / payload /
                           (link.BytesPerSecond() * link.Slots() * 16 / link.FlitBytes()));
        }
        const double bytes = static_cast<double>(w.bytes);
        double seconds = bytes / 64 * Target(w.dst, w.dstDevice)->GetLineTime().GetSeconds();
        if (w.dstDevice != "mem")
        {
            seconds = std::max(
                {seconds, w.readRatio * bytes / link.LineBytesPerSecond(CxlMessageType::S2mDrs),
                 (1 - w.readRatio) * bytes / link.LineBytesPerSecond(CxlMessageType::M2sRwD)});
        }
        if (w.memoryBitsPerSecond > 0)
        {
            seconds = std::max(seconds, bytes * 8 / w.memoryBitsPerSecond);
        }
        return Seconds(seconds);
    }

    uint64_t Launch(size_t i, const FlowRecord& r, const std::string&, const std::string& to,
                    std::string& why) override
    {
        Memory& m = m_memory.at(i);
        const WorkloadSpec& w = m.spec;
        if (w.type == "dma")
        {
            return LaunchDma(i, r.spec.src);
        }
        m.client = CreateObject<CxlMemoryClient>();
        m.client->SetAttribute("ReadRatio", DoubleValue(w.readRatio));
        m.client->SetAttribute("Outstanding", UintegerValue(w.outstanding));
        m.client->SetAttribute("Rate", DataRateValue(DataRate(w.memoryBitsPerSecond)));
        m.client->SetAttribute(
            "Pattern", EnumValue(w.pattern == "stream" ? CXL_ACCESS_STREAM : CXL_ACCESS_RANDOM));
        if (w.memoryDurationPs > 0)
        {
            m.client->SetAttribute("Requests", UintegerValue(UINT64_MAX));
            m.client->SetAttribute("StopTime",
                                   TimeValue(Simulator::Now() + PicoSeconds(w.memoryDurationPs)));
        }
        else
        {
            m.client->SetAttribute("Requests", UintegerValue((w.bytes + 63) / 64));
        }
        m.client->AssignStreams(static_cast<int64_t>(m_seed) * 1000 + 2 * i);
        const uint32_t host = r.spec.src;
        uint32_t port = CxlCpu::kLocal;
        if (to == "pool")
        {
            port = m_servers.poolRootPort.at(host);
        }
        else if (to != "mem")
        {
            port = DeviceNumber(to);
        }
        if (to != "mem" && port == CxlCpu::kLocal)
        {
            why = fmt::format("h{} has no root port to {}", host, to);
            return 0;
        }
        m_servers.cpus.at(host)->Attach(m.client, port);
        m.client->SetDoneCallback(MakeCallback(&CxlNodeFabric::Done, this).Bind(i));
        m.client->Start(Simulator::Now());
        TimeValue hostLatency;
        m.client->GetAttribute("HostLatency", hostLatency);
        m.idleNs = IdleNs(host, to, hostLatency.Get(), w.pattern == "stream");
        return i + 1;
    }

    uint64_t Progress(const FlowRecord&, const std::string&, const std::string&,
                      uint64_t transfer) const override
    {
        const auto& m = m_memory.at(transfer - 1);
        if (m.dma)
        {
            return m.dma->GetDelivered();
        }
        return m.client ? m.client->GetCompleted() * 64 : 0;
    }

    /// A GPU's DMA write to host memory over CXL.io, on the root port it shares with
    /// an expander.
    uint64_t LaunchDma(size_t i, uint32_t host)
    {
        Memory& m = m_memory.at(i);
        const auto k = static_cast<size_t>(m_cxl.SharedBy(m.spec.srcDevice));
        m.dma = CreateObject<CxlDmaEngine>();
        m.dma->SetAttribute("Id", UintegerValue(kDmaIds + i)); // apart from clients' requesters
        m.dma->SetPort(m_servers.devicePorts.at(host).at(k));
        m_servers.cpus.at(host)->TraceConnectWithoutContext(
            "IoRx", MakeCallback(&CxlDmaEngine::Delivered, m.dma));
        m.dma->Write(m.spec.bytes, MakeCallback(&CxlNodeFabric::Done, this).Bind(i));
        return i + 1;
    }

  private:
    struct Memory
    {
        WorkloadSpec spec;
        Ptr<CxlMemoryClient> client; ///< null until launched
        Ptr<CxlDmaEngine> dma;       ///< a dma workload's, once launched
        double idleNs{0};            ///< a lone read's latency on its path, summed from the parts
    };

    static CxlHelper::Servers Install(const Scenario& s)
    {
        const CxlNodeYaml& c = s.topology.node.cxl;
        const CxlLinkSpec spec = CxlLinkOf(c);
        CxlHelper h;
        h.SetLinkAttribute("Version", StringValue(c.version));
        h.SetLinkAttribute("GigaTransfers", DoubleValue(spec.gigaTransfers));
        h.SetLinkAttribute("Lanes", UintegerValue(c.lanes));
        h.SetLinkAttribute("FlitMode", StringValue(CxlFlitModeName(spec.mode)));
        h.SetSwitchAttribute("Latency", TimeValue(PicoSeconds(c.switchLatencyPs)));
        std::vector<uint32_t> pool = c.poolHosts;
        if (c.hasPool && pool.empty()) // every server
        {
            pool.resize(s.topology.HostCount());
            std::iota(pool.begin(), pool.end(), 0);
        }
        std::vector<bool> shared;
        for (const auto& e : c.expanders)
        {
            shared.push_back(!e.shares.empty());
        }
        CxlHelper::Servers servers = h.InstallServers(s.topology.HostCount(), c.expanders.size(),
                                                      c.hasPool, pool, c.poolSwitches, shared);
        const auto apply = [](Ptr<CxlMemoryExpander> e, const CxlExpanderYaml& y) {
            e->SetAttribute("DramRate", DataRateValue(DataRate(y.dramBitsPerSecond)));
            e->SetAttribute("DramLatency", TimeValue(PicoSeconds(y.dramLatencyPs)));
        };
        for (size_t h0 = 0; servers.Ok() && h0 < servers.expanders.size(); ++h0)
        {
            for (size_t k = 0; k < c.expanders.size(); ++k)
            {
                apply(servers.expanders[h0][k], c.expanders[k]);
            }
        }
        if (servers.Ok() && servers.pool)
        {
            apply(servers.pool, c.pool);
        }
        return servers;
    }

    Ptr<CxlMemoryExpander> Target(uint32_t host, const std::string& device) const
    {
        if (device == "mem")
        {
            return m_servers.cpus.at(host)->GetLocalMemory();
        }
        return device == "pool" ? m_servers.pool
                                : m_servers.expanders.at(host).at(DeviceNumber(device));
    }

    double IdleNs(uint32_t host, const std::string& device, Time hostLatency, bool rowHit) const
    {
        std::vector<Ptr<CxlLink>> path;
        if (device == "pool")
        {
            // The host's link to the switch is built as the switch's link to the pool; under
            // switches of their own, the leaf's link to the pool's switch is too.
            path = {m_servers.poolLink, m_servers.poolLink};
            if (!m_servers.fabricLinks.empty())
            {
                path.insert(path.begin() + 1, m_servers.fabricLinks[0]);
            }
        }
        else if (device != "mem")
        {
            const uint32_t k = DeviceNumber(device);
            path = {m_servers.links.at(host).at(k)};
            if (m_servers.expanderLinks.at(host).at(k))
            {
                path.push_back(m_servers.expanderLinks[host][k]); // through the port's switch
            }
        }
        return CxlHelper::IdleReadLatency(hostLatency, path, PicoSeconds(m_cxl.switchLatencyPs),
                                          Target(host, device), rowHit)
                   .GetSeconds() *
               1e9;
    }

    /// The capacity topology.node.cxl gives a target (0 for the CPU's own DRAM).
    uint64_t Capacity(const std::string& device) const
    {
        if (device == "pool")
        {
            return m_cxl.pool.capacity;
        }
        return device == "mem" ? 0 : m_cxl.expanders.at(DeviceNumber(device)).capacity;
    }

    void Done(size_t i)
    {
        const Memory& m = m_memory[i];
        Completed(i, Simulator::Now(),
                  m.dma ? m.dma->GetDelivered() : m.client->GetCompleted() * 64);
    }

    /// One row per memory workload (those that ran), as memory.csv and summary.json give it.
    nlohmann::json Rows() const
    {
        nlohmann::json rows = nlohmann::json::array();
        for (const auto& m : m_memory)
        {
            if (m.spec.type != "memory")
            {
                continue; // a GPU's DMA is a flow, not a memory row
            }
            // One row per workload, so that memory.N is workload N's; one that never
            // started (its flow pending) has no request and zeros.
            const auto q = [&m](double p) {
                return m.client ? m.client->GetLatencyQuantile(p).GetSeconds() * 1e9 : 0.0;
            };
            const WorkloadSpec& w = m.spec;
            rows.push_back({{"workload", WorkloadLabel(w)},
                            {"cpu", fmt::format("h{}.cpu", w.on)},
                            {"target", fmt::format("h{}.{}", w.dst, w.dstDevice)},
                            {"read_ratio", w.readRatio},
                            {"pattern", w.pattern},
                            {"outstanding", w.outstanding},
                            {"offered_gbs", w.memoryBitsPerSecond / 8e9},
                            {"target_capacity_bytes", Capacity(w.dstDevice)},
                            {"requests", m.client ? m.client->GetCompleted() : 0},
                            {"gbs", m.client ? m.client->GetAchievedBytesPerSecond() / 1e9 : 0.0},
                            {"p50_ns", q(0.5)},
                            {"p90_ns", q(0.9)},
                            {"p99_ns", q(0.99)},
                            {"p999_ns", q(0.999)},
                            {"max_ns", q(1.0)},
                            {"idle_ns", m.idleNs}});
        }
        return rows;
    }

    CxlNodeYaml m_cxl;
    CxlHelper::Servers m_servers;
    std::vector<Memory> m_memory; ///< the memory workloads, in the order StartFlows takes them
    uint32_t m_seed{1};
    /// DMA engines' requester IDs start here, above any client's.
    static constexpr uint32_t kDmaIds = 1u << 20;
};

} // namespace

std::unique_ptr<NodeFabric>
MakeCxlNodeFabric()
{
    return std::make_unique<CxlNodeFabric>();
}

} // namespace fabemu
