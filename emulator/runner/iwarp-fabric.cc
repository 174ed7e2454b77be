// iWARP behind the Fabric seam, built as a plugin of its own (fabemu-runner-iwarp, loaded
// by FabricRegistry only for scenarios that name it: it brings ns-3's TCP/IP stack). Simulated, it
// is TCP under every connection over drop-tail or RED/ECN switch queues (IwarpFabricHelper).
// Emulated, the real siw endpoints bring their own TCP: their frames cross the Ethernet switch
// model (the RoCE fabric with PFC off) as plain TCP/IP, marked the way DCTCP wants.
#include "emulator/runner/fabric.h"
#include "emulator/runner/scenario-fabric.h"
#include "scenarios/src/results.h"

#include "ns3/config.h"
#include "ns3/double.h"
#include "ns3/iwarp-fabric-helper.h"
#include "ns3/iwarp-recorders.h"
#include "ns3/uinteger.h"

#include <fmt/format.h>

#include <algorithm>
#include <sstream>

namespace fabemu
{

std::unique_ptr<Fabric> MakeRoceFabric();

using namespace ns3;

namespace
{

/// The shared buffer split evenly among each switch's ports: the busiest switch sets it.
uint32_t
LargestRadix(const TopologySpec& spec)
{
    std::vector<uint32_t> ports(spec.Nodes().size(), 0);
    for (const auto& l : spec.Links())
    {
        ++ports[l.a];
        ++ports[l.b];
    }
    uint32_t radix = 1;
    for (uint32_t n = 0; n < spec.Nodes().size(); ++n)
    {
        if (spec.Nodes()[n].isSwitch)
        {
            radix = std::max(radix, ports[n]);
        }
    }
    return radix;
}

class IwarpFabric : public Fabric
{
  public:
    void SetModeDefaults(const Scenario& s, RunMode mode) const override
    {
        if (mode == RunMode::Emulation)
        {
            // Real siw endpoints cross the Ethernet switch model as plain TCP/IP: no PFC
            // (set by the loader), and ECN as DCTCP wants it, every packet above K marked.
            Config::SetDefault("ns3::SwitchMmu::Kmax", UintegerValue(s.fabric.kmin));
            Config::SetDefault("ns3::SwitchMmu::Pmax", DoubleValue(1.0));
        }
    }

    bool GuestTcpEcn(const Scenario& s) const override
    {
        return s.fabric.ecn; // the switches' marks reach siw through the guest's own TCP
    }

    void Build(const Scenario& s, RunMode mode) override
    {
        if (mode == RunMode::Emulation)
        {
            m_ethernet = MakeRoceFabric();
            m_ethernet->Build(s, mode);
            return;
        }
        const TopologySpec spec = BuildTopology(s);
        IwarpFabricOptions o;
        o.congestionControl = s.fabric.cc == "dctcp"   ? "ns3::TcpDctcp"
                              : s.fabric.cc == "cubic" ? "ns3::TcpCubic"
                                                       : "ns3::TcpNewReno";
        o.red = s.fabric.ecn;
        o.markBytes = s.fabric.kmin;
        o.queueBytes = s.fabric.bufferBytes / LargestRadix(spec);
        o.mtu = IpMtuForPathMtu(s.fabric.mtu);
        m_fabric.Install(spec, o);
    }

    RdmaFabric& Rdma() override { return m_ethernet ? m_ethernet->Rdma() : m_fabric; }

    void SetLinkRate(uint32_t link, DataRate rate) override
    {
        if (m_ethernet)
        {
            m_ethernet->SetLinkRate(link, rate);
            return;
        }
        m_fabric.SetLinkRate(link, rate);
    }

    void SetLinkBitErrorRate(uint32_t link, double ber) override
    {
        if (m_ethernet)
        {
            m_ethernet->SetLinkBitErrorRate(link, ber);
            return;
        }
        m_fabric.SetLinkBitErrorRate(link, ber);
        m_bitErrors = true;
    }

    void SetLinkUp(uint32_t link, bool up) override
    {
        if (m_ethernet)
        {
            m_ethernet->SetLinkUp(link, up);
            return;
        }
        m_fabric.SetLinkUp(link, up);
        m_outages = true;
    }

    std::vector<std::unique_ptr<EdgePort>> Uplinks(const Scenario& s,
                                                   const std::vector<RealHost>& hosts,
                                                   const std::vector<EndpointAddress>& directory,
                                                   uint32_t mtu) override
    {
        return m_ethernet ? m_ethernet->Uplinks(s, hosts, directory, mtu)
                          : Fabric::Uplinks(s, hosts, directory, mtu);
    }

    void AttachRecorders(const Scenario& s, const RecordSetup& setup) override
    {
        if (m_ethernet)
        {
            m_ethernet->AttachRecorders(s, setup);
            return;
        }
        m_setup = setup;
        for (uint32_t h : setup.dir.empty() ? std::vector<uint32_t>{} : s.record.pcap)
        {
            m_fabric.EnablePcap((setup.dir / fmt::format("h{}.pcap", h)).string(), h);
        }
        m_queues = std::make_unique<IwarpQueueSampler>(m_fabric, m_queueRows, setup.queueInterval,
                                                       setup.SampleContext());
    }

    void WriteRecords() override
    {
        if (m_ethernet)
        {
            m_ethernet->WriteRecords();
            return;
        }
        m_fabric.DisablePcaps();
        if (!m_setup.dir.empty())
        {
            WriteCsv(m_setup.dir / "queue.csv", "time_ns,node,port,prio,bytes", m_queueRows.str());
        }
    }

    FabricTotals Totals() const override
    {
        if (m_ethernet)
        {
            return m_ethernet->Totals();
        }
        FabricTotals t;
        t.fabricDrops = m_fabric.SwitchDrops();
        t.congestionDrops = m_fabric.SwitchDrops();
        if (t.fabricDrops > 0)
        {
            t.switchDrops["queue_full"] = t.fabricDrops;
        }
        t.ecnMarks = m_fabric.SwitchEcnMarks();
        t.peakQueueBytes = m_fabric.PeakSwitchQueueBytes();
        t.own = {{"tcp_retransmissions", m_fabric.TotalTcpRetransmissions()},
                 {"ecn_echoes", m_fabric.TotalEcnEchoes()},
                 {"terminates", m_fabric.TotalTerminates()}};
        if (m_bitErrors)
        {
            t.own["bit_error_drops"] = m_fabric.GetBitErrorDrops();
        }
        if (m_outages)
        {
            t.own["link_down_drops"] = m_fabric.GetLinkDownDrops();
        }
        return t;
    }

    /// iWARP's own numbers: no PFC, no CNPs; its TCP answers the switches' marks.
    std::string TotalsLine(const nlohmann::json& t) const override
    {
        if (m_ethernet || !t.contains("tcp_retransmissions"))
        {
            // Real siw endpoints over the Ethernet switch model: their TCP is not ours
            // to count; the switches' numbers are those of any Ethernet fabric.
            return m_ethernet ? m_ethernet->TotalsLine(t) : Fabric::TotalsLine(t);
        }
        return fmt::format("ECN marks {}, ECN echoes {}, TCP retransmissions {}",
                           t["ecn_marks"].get<uint64_t>(), t.value("ecn_echoes", uint64_t{0}),
                           t.value("tcp_retransmissions", uint64_t{0}));
    }

    nlohmann::json Live() const override
    {
        if (m_ethernet)
        {
            return m_ethernet->Live();
        }
        return {{"drops", m_fabric.SwitchDrops()},
                {"ecn_marks", m_fabric.SwitchEcnMarks()},
                {"tcp_retransmissions", m_fabric.TotalTcpRetransmissions()},
                {"peak_queue_bytes", m_fabric.PeakSwitchQueueBytes()}};
    }

  private:
    bool m_bitErrors{false}; ///< a fault gave a link bit errors
    bool m_outages{false};   ///< a fault took a link down
    IwarpFabricHelper m_fabric;
    std::unique_ptr<Fabric> m_ethernet; ///< emulation: the Ethernet switch model
    RecordSetup m_setup;
    std::ostringstream m_queueRows;
    std::unique_ptr<IwarpQueueSampler> m_queues;
};

} // namespace

} // namespace fabemu

/// This plugin's entry (FabricRegistry loads it for scenarios of fabric type iwarp).
extern "C" fabemu::Fabric*
fabemu_make_fabric()
{
    return new fabemu::IwarpFabric();
}
