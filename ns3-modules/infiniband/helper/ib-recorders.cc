#include "ib-recorders.h"

#include "ns3/abort.h"
#include "ns3/simulator.h"

namespace ns3
{

IbPcapWriter::IbPcapWriter(Ptr<IbPort> port, const std::string& path)
    : m_port(port)
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
    const int64_t ns = Simulator::Now().GetNanoSeconds();
    m_file.Write(static_cast<uint32_t>(ns / 1'000'000'000), static_cast<uint32_t>(ns % 1'000'000'000), p);
    ++m_packets;
}

} // namespace ns3
