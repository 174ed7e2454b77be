// InfiniBand behind the Fabric seam: credit stalls per port and VL, input-buffer
// depth per VL, pcaps; real endpoints through an IbGateway at each edge (RoCEv2
// frames as IB packets, restored bit-exact on the far side). Lossless by
// construction: its only drops are packets with no route.
#include "emulator/edge/ib-gateway.h"
#include "emulator/edge/tap-port.h"
#include "emulator/runner/fabric.h"
#include "emulator/runner/scenario-fabric.h"
#include "scenarios/src/results.h"

#include "ns3/config.h"
#include "ns3/ib-fabric-helper.h"
#include "ns3/ib-recorders.h"
#include "ns3/simulator.h"
#include "ns3/string.h"
#include "ns3/uinteger.h"

#include <fmt/format.h>

#include <algorithm>
#include <sstream>

namespace fabemu
{

using namespace ns3;

namespace
{

/// Why arbitration table \p table, \p spec ('vl:weight,...'), does not suit \p vls data VLs, or "".
std::string
VlArbProblem(const std::string& table, const std::string& spec, uint32_t vls)
{
    std::stringstream ss(spec);
    for (std::string item; std::getline(ss, item, ',');)
    {
        unsigned vl = 0;
        unsigned weight = 0;
        char extra = 0;
        if (std::sscanf(item.c_str(), "%u:%u%c", &vl, &weight, &extra) != 2 || vl >= vls ||
            weight > 255)
        {
            return fmt::format(
                "{} entry '{}' is not vl:weight with a data VL below {} and weight <= 255", table,
                item, vls);
        }
    }
    return "";
}

/// The most of one VL's input buffer ever in use, over every port: the fabric's peak queue.
uint64_t
PeakQueueBytes(const IbFabricHelper& fabric)
{
    uint64_t peak = 0;
    for (const auto& p : fabric.GetPorts())
    {
        for (uint8_t vl = 0; vl < p->GetNumDataVls(); ++vl)
        {
            peak = std::max<uint64_t>(peak, uint64_t(p->GetPeakBlocks(vl)) * kIbCreditBytes);
        }
    }
    return peak;
}

class InfinibandFabric : public Fabric
{
  public:
    /// LIDs for every host and path, VL arbitration tables a port can parse, then the fabric.
    void Check(const Scenario& s, const TopologySpec& spec) const override
    {
        if (((spec.Hosts().size() + 1) << s.fabric.lmc) > 0xbfff)
        {
            throw ScenarioError(
                s.file, s.MarkOf("fabric.lmc"),
                fmt::format("fabric.lmc: {} hosts with LMC {} need more unicast LIDs "
                            "than there are (49151)",
                            spec.Hosts().size(), +s.fabric.lmc));
        }
        // A port parses its arbitration tables when the fabric starts it, and aborts on a bad one.
        const Ptr<IbPort> port = CreateObject<IbPort>(); // with the scenario's attribute defaults
        UintegerValue vls;
        port->GetAttribute("NumDataVls", vls);
        for (const char* table : {"VlArbHigh", "VlArbLow"})
        {
            StringValue v;
            port->GetAttribute(table, v);
            const std::string why = VlArbProblem(table, v.Get(), static_cast<uint32_t>(vls.Get()));
            if (!why.empty())
            {
                throw FabricError(
                    s,
                    {"ns3::IbPort::VlArbHigh", "ns3::IbPort::VlArbLow", "ns3::IbPort::NumDataVls"},
                    "fabric", why);
            }
        }
        IbFabricHelper fabric;
        fabric.SetLmc(s.fabric.lmc);
        fabric.SetRouting(s.fabric.routing == "updown" ? IbFabricHelper::Routing::UpDown
                                                       : IbFabricHelper::Routing::MinHop);
        fabric.Install(spec);
    }

    void SetModeDefaults(const Scenario&, RunMode mode) const override
    {
        if (mode == RunMode::Emulation)
        {
            // In real time the periodic flow-control packet (every 2 us: IBA's longest gap)
            // would be millions of events a second. It only repairs lost FCPs, which the
            // model never loses; the credit loop runs on the FCPs sent on every change.
            Config::SetDefault("ns3::IbPort::FcpInterval", TimeValue(MilliSeconds(1)));
        }
    }

    void Build(const Scenario& s, RunMode mode) override
    {
        m_fabric.SetExternalHosts(ExternalHosts(s, mode));
        m_fabric.SetLmc(s.fabric.lmc);
        m_fabric.SetRouting(s.fabric.routing == "updown" ? IbFabricHelper::Routing::UpDown
                                                         : IbFabricHelper::Routing::MinHop);
        if (!m_rankOf.empty())
        {
            m_fabric.SetPartition(m_rankOf);
        }
        const TopologySpec spec = BuildTopology(s);
        m_linkNames = LinkNames(s, spec);
        m_fabric.Install(spec);
    }

    /// RemotePortDevices carry a link's packets and FCPs between ranks.
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

    std::vector<std::unique_ptr<EdgePort>> Uplinks(const Scenario&,
                                                   const std::vector<RealHost>& hosts,
                                                   const std::vector<EndpointAddress>& directory,
                                                   uint32_t mtu) override
    {
        auto tunnel = std::make_shared<IbTunnel>();
        std::vector<uint16_t> lids;
        for (const auto& h : hosts)
        {
            lids.push_back(m_fabric.GetLid(h.index));
        }
        std::vector<std::unique_ptr<EdgePort>> edges;
        for (const auto& h : hosts)
        {
            auto gateway =
                std::make_unique<IbGateway>(m_fabric.GetPort(h.index), h.index,
                                            m_fabric.GetLid(h.index), tunnel, directory, lids);
            edges.push_back(std::make_unique<EdgePort>(h.name, std::move(gateway),
                                                       std::make_unique<TapPort>(h.interface), mtu,
                                                       RocePriority(), directory));
        }
        return edges;
    }

    void AttachRecorders(const Scenario& s, const RecordSetup& setup) override
    {
        m_setup = setup;
        for (size_t i = 0; i < m_fabric.GetPorts().size(); ++i)
        {
            m_fabric.GetPorts()[i]->TraceConnectWithoutContext(
                "CreditStall",
                MakeCallback(+[](std::ostringstream* rows, size_t port, uint8_t vl, Time how) {
                    rows->operator<<(Simulator::Now().GetNanoSeconds())
                        << ' ' << port << ' ' << +vl << ' ' << how.GetNanoSeconds() << '\n';
                }).Bind(&m_stallRows, i));
        }
        for (uint32_t h : setup.dir.empty() ? std::vector<uint32_t>{} : s.record.pcap)
        {
            m_fabric.EnablePcap((setup.dir / fmt::format("h{}.pcap", h)).string(), h);
        }
        m_queues = std::make_unique<IbQueueSampler>(m_fabric, m_queueRows, setup.queueInterval,
                                                    setup.SampleContext());
        if (!m_rankOf.empty())
        {
            // Periodic FCPs and BECNs in flight go on after the last flow: when, for CountUntil.
            auto note = +[](std::vector<std::pair<int64_t, uint64_t>>* times) {
                const int64_t now = Simulator::Now().GetTimeStep();
                if (!times->empty() && times->back().first == now)
                {
                    ++times->back().second; // the ports' periodic FCPs go at the same instants
                    return;
                }
                times->emplace_back(now, 1);
            };
            for (const auto& port : m_fabric.GetPorts())
            {
                port->TraceConnectWithoutContext(
                    "FcpTx", Callback<void, uint8_t, uint16_t, uint16_t>(
                                 [this, note](uint8_t, uint16_t, uint16_t) { note(&m_fcpTimes); }));
            }
            for (uint32_t h = 0; h < m_fabric.GetNHosts(); ++h)
            {
                if (const Ptr<IbHca> hca = m_fabric.GetHca(h))
                {
                    hca->TraceConnectWithoutContext(
                        "Becn",
                        Callback<void, uint32_t>([this, note](uint32_t) { note(&m_becnTimes); }));
                }
            }
        }
    }

    void CountUntil(Time end) override { m_countUntil = end; }

    void WriteRecords() override
    {
        m_fabric.DisablePcaps();
        if (m_setup.dir.empty())
        {
            return;
        }
        WriteCsv(m_setup.dir / "credit-stalls.csv", "time_ns,port,vl,stall_ns", m_stallRows.str());
        WriteCsv(m_setup.dir / "queue.csv", "time_ns,node,port,prio,bytes", m_queueRows.str());
    }

    FabricTotals Totals() const override
    {
        FabricTotals t;
        t.fabricDrops = m_fabric.TotalNoRouteDrops();
        if (t.fabricDrops > 0)
        {
            t.switchDrops["no_route"] = t.fabricDrops;
        }
        t.ecnMarks = m_fabric.TotalFecnMarks();              // FECN: IB's ECN
        t.cnps = m_fabric.TotalBecns() - Since(m_becnTimes); // BECNs returned
        t.creditStalls = m_fabric.TotalCreditStalls();
        t.peakQueueBytes = PeakQueueBytes(m_fabric);
        t.own = {{"buffer_overflows", m_fabric.TotalOverflows()},
                 {"fcps", m_fabric.TotalFcps() - Since(m_fcpTimes)}};
        t.deadlock = Deadlock();
        if (m_bitErrors || m_outages)
        {
            const auto recovery = m_fabric.GetRecovery();
            t.own["retransmitted_packets"] = recovery.retransmitted;
            t.own["retransmission_timeouts"] = recovery.timeouts;
        }
        if (m_bitErrors)
        {
            t.own["bit_error_drops"] = m_fabric.GetBitErrorDrops();
        }
        if (m_outages)
        {
            t.own["link_down_drops"] = m_fabric.GetLinkDownDrops();
            t.own["sm_sweeps"] = m_fabric.GetSweeps();
        }
        return t;
    }

    uint64_t Progress() const override { return m_fabric.GetBytesReceived(); }

    nlohmann::json Deadlock() const override
    {
        const auto loop = m_fabric.FindCreditLoop();
        if (loop.empty())
        {
            return nullptr;
        }
        return DeadlockJson("credit_loop", loop, m_linkNames, "vl"); // ports: 2 l + e
    }

    nlohmann::json Live() const override
    {
        return {{"credit_stalls", m_fabric.TotalCreditStalls()},
                {"buffer_overflows", m_fabric.TotalOverflows()},
                {"fecn_marks", m_fabric.TotalFecnMarks()},
                {"peak_queue_bytes", PeakQueueBytes(m_fabric)}};
    }

    std::string PcapNote(const Scenario& s) const override
    {
        if (s.record.pcap.empty())
        {
            return "";
        }
        return fmt::format("InfiniBand pcaps: Debian's tshark has no reader for the IB link "
                           "type and prints blank rows; decode them with: tshark {} -r h{}.pcap",
                           IbPcapWriter::kTsharkOptions, s.record.pcap.front());
    }

    std::string TotalsLine(const nlohmann::json& t) const override
    {
        return fmt::format("credit stalls {}", t["credit_stalls"].get<uint64_t>());
    }

    std::string Notes(const FabricTotals& t) const override
    {
        return fmt::format("InfiniBand: {} credit stalls, {} buffer overflows (must be 0)\n",
                           t.creditStalls, t.own.value("buffer_overflows", uint64_t{0}));
    }

  private:
    /// How many of \p times ((time, count), in the run's order) are at or after m_countUntil.
    uint64_t Since(const std::vector<std::pair<int64_t, uint64_t>>& times) const
    {
        uint64_t n = 0;
        for (auto it = times.rbegin();
             it != times.rend() && it->first >= m_countUntil.GetTimeStep(); ++it)
        {
            n += it->second;
        }
        return n;
    }

    bool m_bitErrors{false}; ///< a fault gave a link bit errors
    bool m_outages{false};   ///< a fault took a link down
    IbFabricHelper m_fabric;
    std::vector<uint32_t> m_rankOf; ///< SetPartition's; empty: one rank
    Time m_countUntil{Time::Max()}; ///< CountUntil's
    /// When FCPs were sent and BECNs arrived, (time steps, how many) (partitioned runs).
    std::vector<std::pair<int64_t, uint64_t>> m_fcpTimes;
    std::vector<std::pair<int64_t, uint64_t>> m_becnTimes;
    RecordSetup m_setup;
    std::vector<std::string> m_linkNames; ///< LinkNames of the built topology
    std::ostringstream m_stallRows;
    std::ostringstream m_queueRows;
    std::unique_ptr<IbQueueSampler> m_queues;
};

} // namespace

std::unique_ptr<Fabric>
MakeInfinibandFabric()
{
    return std::make_unique<InfinibandFabric>();
}

} // namespace fabemu
