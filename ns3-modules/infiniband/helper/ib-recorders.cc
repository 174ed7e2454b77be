#include "ns3/ib-recorders.h"

#include "ns3/abort.h"
#include "ns3/simulator.h"

#include <algorithm>
#include <vector>

namespace ns3
{

IbPcapWriter::IbPcapWriter(Ptr<IbPort> port, const std::string& path) : m_port(port)
{
    m_file.Open(path, std::ios::out | std::ios::binary);
    NS_ABORT_MSG_IF(m_file.Fail(), "cannot write pcap file " << path);
    m_file.Init(kLinkType, 65535, PcapFile::ZONE_DEFAULT, false, true);
    port->TraceConnectWithoutContext("Sniffer", MakeCallback(&IbPcapWriter::Write, this));
}

IbPcapWriter::~IbPcapWriter()
{
    m_port->TraceDisconnectWithoutContext("Sniffer", MakeCallback(&IbPcapWriter::Write, this));
    m_file.Close();
}

void
IbPcapWriter::Write(Ptr<const Packet> p)
{
    // The model carries the CRCs as bytes of the right size; the capture gets their values,
    // this hop's VCRC included.
    std::vector<uint8_t> bytes(p->GetSize());
    p->CopyData(bytes.data(), bytes.size());
    IbFillCrcs(bytes.data(), bytes.size());
    const int64_t ns = Simulator::Now().GetNanoSeconds();
    m_file.Write(static_cast<uint32_t>(ns / 1'000'000'000),
                 static_cast<uint32_t>(ns % 1'000'000'000), bytes.data(),
                 static_cast<uint32_t>(bytes.size()));
    ++m_packets;
}

IbQueueSampler::IbQueueSampler(const IbFabricHelper& fabric, std::ostream& out, Time interval,
                               uint32_t context)
    : m_out(out),
      m_grid(
          interval, [this] { return Sample(); }, context)
{
    const auto& switches = fabric.GetSwitches();
    for (uint32_t s = 0; s < switches.size(); ++s)
    {
        for (uint32_t p = 0; p < switches[s]->GetNPorts(); ++p)
        {
            m_ports.push_back(Watched{switches[s]->GetPort(p), fabric.GetNHosts() + s, p});
        }
    }
    // A buffer filling is what a sample would see: it wakes a sleeping sampler. The
    // trace is connected only while it sleeps: a busy fabric's packets call nothing.
    m_grid.SetWatch([this](bool on) {
        const auto wake = MakeCallback(&IbQueueSampler::OnDepth, this);
        for (const auto& w : m_ports)
        {
            if (on)
            {
                w.port->TraceConnectWithoutContext("BufferDepth", wake);
            }
            else
            {
                w.port->TraceDisconnectWithoutContext("BufferDepth", wake);
            }
        }
    });
    m_wasBusy.assign(m_ports.size() * IbPort::kMaxDataVls, false);
    m_grid.Start();
}

void
IbQueueSampler::OnDepth(uint8_t, uint32_t blocks)
{
    if (blocks > 0)
    {
        m_grid.Wake();
    }
}

bool
IbQueueSampler::Sample()
{
    bool anyBusy = false;
    const int64_t now = Simulator::Now().GetNanoSeconds();
    for (size_t i = 0; i < m_ports.size(); ++i)
    {
        const auto& w = m_ports[i];
        for (uint8_t vl = 0; vl < w.port->GetNumDataVls(); ++vl)
        {
            const uint64_t bytes = uint64_t(w.port->GetUsedBlocks(vl)) * kIbCreditBytes;
            std::vector<bool>::reference busy = m_wasBusy[i * IbPort::kMaxDataVls + vl];
            if (bytes > 0 || busy)
            {
                m_out << now << ' ' << w.node << ' ' << w.index << ' ' << +vl << ' ' << bytes
                      << '\n';
            }
            busy = bytes > 0;
            anyBusy = anyBusy || busy;
            m_peak = std::max(m_peak, bytes);
        }
    }
    return anyBusy;
}

} // namespace ns3
