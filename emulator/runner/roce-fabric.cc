// RoCEv2 over lossless Ethernet behind the Fabric seam: PFC, queue and DCQCN-rate
// recorders, pcaps; real endpoints on RoceUplinks, on the bare ports of external hosts.
#include "emulator/edge/roce-uplink.h"
#include "emulator/edge/tap-port.h"
#include "emulator/runner/fabric.h"
#include "emulator/runner/scenario-fabric.h"
#include "scenarios/src/results.h"

#include "ns3/roce-fabric-helper.h"
#include "ns3/roce-recorders.h"
#include "ns3/simulator.h"

#include <fmt/format.h>

#include <fstream>
#include <sstream>

namespace fabemu
{

using namespace ns3;

namespace
{

/// HPCC's pfc.txt from PfcLog's rows ("time_ns node port prio pause|resume"): "time_ns node 1
/// port 1|0", node type 1 (a switch: only switches send PFC here), 1 for pause, 0 for resume.
/// The priority is left out (HPCC has one lossless class).
std::string
HpccPfcLines(const std::string& rows)
{
    std::istringstream in(rows);
    std::ostringstream out;
    std::string time;
    std::string node;
    std::string port;
    std::string prio;
    std::string event;
    while (in >> time >> node >> port >> prio >> event)
    {
        out << time << ' ' << node << " 1 " << port << (event == "pause" ? " 1\n" : " 0\n");
    }
    return out.str();
}

class RoceFabric : public Fabric
{
  public:
    /// The switches' MMUs must hold their ports' reserve and headroom (RoceSwitch::MmuProblem).
    void Check(const Scenario& s, const TopologySpec& spec) const override
    {
        RoceFabricHelper fabric;
        try
        {
            fabric.Install(spec);
        }
        catch (const std::invalid_argument& e)
        {
            const std::string what =
                fmt::format("the fabric cannot be built as configured: {}", e.what());
            if (std::string(e.what()).find("Kmax") != std::string::npos)
            {
                throw FabricError(s, {"ns3::SwitchMmu::Kmax", "ns3::SwitchMmu::Kmin"}, "fabric.ecn",
                                  what);
            }
            throw FabricError(s,
                              {"ns3::SwitchMmu::BufferSize", "ns3::SwitchMmu::ReservePerPg",
                               "ns3::RoceSwitch::MaxFrameBytes"},
                              "fabric.buffer", what);
        }
    }

    void Build(const Scenario& s, RunMode mode) override
    {
        m_fabric.SetExternalHosts(ExternalHosts(s, mode));
        if (!m_rankOf.empty())
        {
            m_fabric.SetPartition(m_rankOf);
        }
        const TopologySpec spec = BuildTopology(s);
        m_linkNames = LinkNames(s, spec);
        m_fabric.Install(spec);
    }

    /// RoceRemoteChannel carries a cable's frames (data, ACKs, CNPs, PFC) between ranks.
    bool SetPartition(std::vector<uint32_t> rankOf) override
    {
        m_rankOf = std::move(rankOf);
        return true;
    }

    RdmaFabric& Rdma() override { return m_fabric; }

    void SetLinkRate(uint32_t link, DataRate rate) override { m_fabric.SetLinkRate(link, rate); }

    void SetLinkBitErrorRate(uint32_t link, double ber) override
    {
        m_fabric.SetLinkBitErrorRate(link, ber);
        m_bitErrors = true;
    }

    void SetLinkUp(uint32_t link, bool up) override
    {
        m_fabric.SetLinkUp(link, up);
        m_outages = true;
    }

    void StartPauseStorm(uint32_t host, Time duration) override
    {
        m_fabric.StartPauseStorm(host, duration);
        m_storms = true;
    }

    std::vector<std::unique_ptr<EdgePort>> Uplinks(const Scenario& s,
                                                   const std::vector<RealHost>& hosts,
                                                   const std::vector<EndpointAddress>& directory,
                                                   uint32_t mtu) override
    {
        for (size_t i = 0; i < hosts.size(); ++i)
        {
            // RoCEv2 over IPv6 (GID 0) goes between the endpoints' link-local addresses.
            auto ll = directory[i].LinkLocal(); // Ipv6Address takes a non-const pointer
            m_fabric.AddHostRoute(hosts[i].index, Ipv6Address(ll.data()));
        }
        std::vector<std::unique_ptr<EdgePort>> edges;
        for (const auto& h : hosts)
        {
            auto uplink = std::make_unique<RoceUplink>(m_fabric.GetPort(h.index), RocePriority());
            if (s.fabric.cc == "dcqcn")
            {
                uplink->EnableDcqcn(DataRate(s.topology.link.bitsPerSecond));
                // An uplink's flow is (destination, destination QP): the BTH names no source
                // QP, and rxe numbers QPs alike on every VM, so the row names the
                // destination host too (peer; hosts' addresses count up from host 0's).
                uplink->SetRateObserver(
                    [rows = &m_rateRows, host = h.index,
                     first = m_fabric.GetHostIpv4(0)](uint32_t ip, uint32_t qpn, uint64_t bps) {
                        *rows << Simulator::Now().GetNanoSeconds() << ' ' << host << ' ' << qpn
                              << ' ' << bps << ' ' << ip - first << '\n';
                    });
            }
            edges.push_back(std::make_unique<EdgePort>(h.name, std::move(uplink),
                                                       std::make_unique<TapPort>(h.interface), mtu,
                                                       RocePriority(), directory));
        }
        return edges;
    }

    void AttachRecorders(const Scenario& s, const RecordSetup& setup) override
    {
        m_setup = setup;
        // Recorders run on the simulation thread and are read once it has stopped.
        m_pfcLog = std::make_unique<PfcLog>(m_fabric, m_pfcRows);
        m_queues = std::make_unique<QueueSampler>(m_fabric, m_queueRows, setup.queueInterval,
                                                  setup.SampleContext());
        if (s.fabric.cc == "dcqcn")
        {
            m_rateLog = std::make_unique<RateLog>(m_fabric, m_rateRows); // beside the edges' rows
        }
        for (uint32_t h : setup.dir.empty() ? std::vector<uint32_t>{} : s.record.pcap)
        {
            m_fabric.EnablePcap((setup.dir / fmt::format("h{}.pcap", h)).string(), h);
        }
    }

    void WriteRecords() override
    {
        m_fabric.DisablePcaps();
        if (m_setup.dir.empty())
        {
            return;
        }
        WriteCsv(m_setup.dir / "pfc.csv", "time_ns,node,port,prio,event", m_pfcRows.str());
        std::ofstream(m_setup.dir / "pfc.txt") << HpccPfcLines(m_pfcRows.str());
        WriteCsv(m_setup.dir / "queue.csv", "time_ns,node,port,prio,bytes", m_queueRows.str());
        if (m_rateLog)
        {
            WriteCsv(m_setup.dir / "rate.csv",
                     m_setup.mode == RunMode::Emulation ? "time_ns,host,qpn,rate_bps,peer"
                                                        : "time_ns,host,qpn,rate_bps",
                     m_rateRows.str());
        }
    }

    FabricTotals Totals() const override
    {
        FabricTotals t;
        t.fabricDrops = m_fabric.TotalDrops();
        t.congestionDrops = m_fabric.CongestionDrops();
        t.pfcFrames = m_fabric.TotalPfcFrames();
        t.ecnMarks = m_fabric.TotalEcnMarks();
        t.cnps = m_fabric.TotalCnps();
        t.switchDrops = m_fabric.DropsByReason();
        t.peakQueueBytes = m_queues ? m_queues->Peak() : 0;
        if (m_bitErrors || m_outages)
        {
            const auto recovery = m_fabric.GetRecovery();
            t.own = {{"retransmitted_packets", recovery.retransmitted},
                     {"retransmission_timeouts", recovery.timeouts}};
        }
        if (m_bitErrors)
        {
            t.own["bit_error_drops"] = m_fabric.GetBitErrorDrops();
        }
        if (m_outages)
        {
            t.own["link_down_drops"] = m_fabric.GetLinkDownDrops();
            t.own["reroutes"] = m_fabric.GetReroutes();
        }
        if (m_storms)
        {
            t.own["pfc_watchdog_triggers"] = m_fabric.GetPfcWatchdogTriggers();
        }
        t.deadlock = Deadlock();
        return t;
    }

    nlohmann::json Deadlock() const override
    {
        const auto cycle = m_fabric.FindPfcDeadlock();
        if (cycle.empty())
        {
            return nullptr;
        }
        return DeadlockJson("pfc_deadlock", cycle, m_linkNames, "prio"); // ports: 2 l + e
    }

    uint64_t Progress() const override { return m_fabric.GetBytesReceived(); }

    bool DeadlockMayClear() const override
    {
        // A port's PFC watchdog ignores (or drops) the pauses once it has fired.
        for (const auto& dev : m_fabric.GetDevices())
        {
            TimeValue t;
            dev->GetAttribute("PfcWatchdogTime", t);
            if (t.Get().IsStrictlyPositive())
            {
                return true;
            }
        }
        return false;
    }

    nlohmann::json Live() const override
    {
        return {{"drops", m_fabric.TotalDrops()},
                {"pfc_pause_frames", m_fabric.TotalPfcFrames()},
                {"ecn_marks", m_fabric.TotalEcnMarks()},
                {"cnps", m_fabric.TotalCnps()},
                {"peak_queue_bytes", m_queues ? m_queues->Peak() : 0}};
    }

  private:
    bool m_bitErrors{false};              ///< a fault gave a link bit errors
    bool m_outages{false};                ///< a fault took a link down
    bool m_storms{false};                 ///< a fault made a NIC storm PFC pauses
    std::vector<std::string> m_linkNames; ///< LinkNames of the built topology
    std::vector<uint32_t> m_rankOf;       ///< SetPartition's; empty: one rank
    RoceFabricHelper m_fabric;
    RecordSetup m_setup;
    std::ostringstream m_pfcRows;
    std::ostringstream m_queueRows;
    std::ostringstream m_rateRows; ///< DCQCN: simulated NICs' rows and, emulating, the edges'
    std::unique_ptr<PfcLog> m_pfcLog;
    std::unique_ptr<QueueSampler> m_queues;
    std::unique_ptr<RateLog> m_rateLog;
};

} // namespace

std::unique_ptr<Fabric>
MakeRoceFabric()
{
    return std::make_unique<RoceFabric>();
}

} // namespace fabemu
