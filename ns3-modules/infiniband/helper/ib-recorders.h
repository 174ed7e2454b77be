/*
 * Recorders for the InfiniBand model: pcap files of a port's data packets, LRH
 * first, which Wireshark decodes as InfiniBand (LRH, BTH, RETH, AETH, ...).
 */
#ifndef FABEMU_IB_RECORDERS_H
#define FABEMU_IB_RECORDERS_H

#include "ib-port.h"

#include "ns3/pcap-file.h"
#include "ns3/simple-ref-count.h"

#include <string>

namespace ns3
{

class IbPcapWriter : public SimpleRefCount<IbPcapWriter>
{
  public:
    /// LINKTYPE_USER0: Wireshark has no reader for LINKTYPE_INFINIBAND (247), so the
    /// packets go out as user link type 0, which tshark decodes as InfiniBand with
    /// -o 'uat:user_dlts:"User 0 (DLT=147)","infiniband","0","","0",""'
    static constexpr uint32_t kLinkType = 147;

    IbPcapWriter(Ptr<IbPort> port, const std::string& path);
    ~IbPcapWriter();
    uint64_t Packets() const { return m_packets; }

  private:
    void Write(Ptr<const Packet> p);

    Ptr<IbPort> m_port;
    PcapFile m_file;
    uint64_t m_packets{0};
};

} // namespace ns3

#endif
