#include "ns3/roce-recorders.h"

#include "ns3/simulator.h"
#include "ns3/trace-helper.h"

namespace ns3
{

PfcLog::PfcLog(const RoceFabricHelper& fabric, std::ostream& out) : m_out(out)
{
    for (const auto& sw : fabric.GetSwitches())
    {
        const uint32_t node = sw->GetPort(0)->GetNode()->GetId();
        sw->TraceConnectWithoutContext("Pfc", MakeCallback(&PfcLog::OnPfc, this).Bind(node));
    }
}

void
PfcLog::OnPfc(uint32_t node, uint32_t port, uint8_t prio, bool pause)
{
    ++m_events;
    m_out << Simulator::Now().GetNanoSeconds() << ' ' << node << ' ' << port << ' ' << +prio
          << (pause ? " pause\n" : " resume\n");
}

RateLog::RateLog(const RoceFabricHelper& fabric, std::ostream& out) : m_out(out)
{
    for (uint32_t h = 0; h < fabric.GetNHosts(); ++h)
    {
        if (const auto nic = fabric.GetNic(h)) // not an external host's bare port
        {
            nic->TraceConnectWithoutContext("QpRate", MakeCallback(&RateLog::OnRate, this).Bind(h));
        }
    }
}

void
RateLog::OnRate(uint32_t host, uint32_t qpn, uint64_t bps)
{
    ++m_changes;
    m_out << Simulator::Now().GetNanoSeconds() << ' ' << host << ' ' << qpn << ' ' << bps << '\n';
}

PcapWriter::PcapWriter(Ptr<RoceNetDevice> port, const std::string& path) : m_port(port)
{
    m_file.Open(path, std::ios::out | std::ios::binary);
    NS_ABORT_MSG_IF(m_file.Fail(), "cannot write pcap file " << path);
    m_file.Init(PcapHelper::DLT_EN10MB, 65535, PcapFile::ZONE_DEFAULT, false, true);
    port->TraceConnectWithoutContext("Sniffer", MakeCallback(&PcapWriter::Write, this));
}

PcapWriter::~PcapWriter()
{
    m_port->TraceDisconnectWithoutContext("Sniffer", MakeCallback(&PcapWriter::Write, this));
    m_file.Close();
}

void
PcapWriter::Write(Ptr<const Packet> frame)
{
    const int64_t ns = Simulator::Now().GetNanoSeconds();
    m_file.Write(static_cast<uint32_t>(ns / 1'000'000'000),
                 static_cast<uint32_t>(ns % 1'000'000'000), frame);
    ++m_frames;
}

QueueSampler::QueueSampler(const RoceFabricHelper& fabric, std::ostream& out, Time interval,
                           uint32_t context)
    : m_fabric(fabric),
      m_out(out),
      m_grid(
          interval, [this] { return Sample(); }, context)
{
    // A frame reaching a switch is what wakes a sleeping sampler. The trace is
    // connected only while it sleeps: a busy fabric's frames call nothing.
    m_grid.SetWatch([this](bool on) {
        const auto wake = MakeCallback(&QueueSampler::OnFrame, this);
        for (const auto& sw : m_fabric.GetSwitches())
        {
            for (uint32_t port = 0; port < sw->GetNPorts(); ++port)
            {
                Ptr<RoceNetDevice> dev = sw->GetPort(port);
                if (on)
                {
                    dev->TraceConnectWithoutContext("MacRx", wake);
                }
                else
                {
                    dev->TraceDisconnectWithoutContext("MacRx", wake);
                }
            }
        }
    });
    m_grid.Start();
}

void
QueueSampler::OnFrame(Ptr<const Packet>)
{
    m_grid.Wake();
}

bool
QueueSampler::Sample()
{
    bool anyBusy = false;
    const int64_t now = Simulator::Now().GetNanoSeconds();
    size_t queue = 0; // every switch's every port's every priority, in this order
    for (const auto& sw : m_fabric.GetSwitches())
    {
        const uint32_t node = sw->GetPort(0)->GetNode()->GetId();
        for (uint32_t port = 0; port < sw->GetNPorts(); ++port)
        {
            for (uint8_t prio = 0; prio < SwitchMmu::kPriorities; ++prio, ++queue)
            {
                const uint64_t bytes = sw->GetMmu()->GetEgressBytes(port, prio);
                if (queue == m_wasBusy.size())
                {
                    m_wasBusy.push_back(false);
                }
                std::vector<bool>::reference busy = m_wasBusy[queue];
                if (bytes > 0 || busy)
                {
                    m_out << now << ' ' << node << ' ' << port << ' ' << +prio << ' ' << bytes
                          << '\n';
                }
                busy = bytes > 0;
                anyBusy = anyBusy || busy;
                m_peak = std::max(m_peak, bytes);
            }
        }
    }
    return anyBusy;
}

} // namespace ns3
