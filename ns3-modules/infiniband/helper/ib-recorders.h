/*
 * Recorders for the InfiniBand model: pcap files of a port's data packets, LRH
 * first, which Wireshark decodes as InfiniBand (LRH, BTH, RETH, AETH, ...); and
 * the input-buffer depth of every switch port and VL, sampled.
 */
#ifndef FABEMU_IB_RECORDERS_H
#define FABEMU_IB_RECORDERS_H

#include "ns3/grid-sampler.h"
#include "ns3/ib-fabric-helper.h"
#include "ns3/ib-port.h"
#include "ns3/pcap-file.h"
#include "ns3/simple-ref-count.h"

#include <ostream>
#include <string>
#include <vector>

namespace ns3
{

class IbPcapWriter : public SimpleRefCount<IbPcapWriter>
{
  public:
    /// LINKTYPE_USER0: Wireshark has no reader for LINKTYPE_INFINIBAND (247), so the
    /// packets go out as user link type 0, which tshark decodes as InfiniBand with
    /// -o 'uat:user_dlts:"User 0 (DLT=147)","infiniband","0","","0",""'
    static constexpr uint32_t kLinkType = 147;
    /// The tshark options that decode these files (plain `tshark -r` prints blank rows).
    static constexpr const char* kTsharkOptions =
        "-o 'uat:user_dlts:\"User 0 (DLT=147)\",\"infiniband\",\"0\",\"\",\"0\",\"\"'";

    IbPcapWriter(Ptr<IbPort> port, const std::string& path);
    ~IbPcapWriter();
    uint64_t Packets() const { return m_packets; }

  private:
    void Write(Ptr<const Packet> p);

    Ptr<IbPort> m_port;
    PcapFile m_file;
    uint64_t m_packets{0};
};

/// Writes "time_ns node port vl bytes" every interval for each switch input buffer in
/// use (and once more when it empties); node is the switch's number after the hosts
/// (as in the spec), port its port number. While every buffer is empty it does not
/// sample until one fills, then resumes on the same grid (GridSampler).
class IbQueueSampler
{
  public:
    /// The samples run in \p context (GridSampler's: by default, the caller's).
    IbQueueSampler(const IbFabricHelper& fabric, std::ostream& out, Time interval,
                   uint32_t context = Simulator::NO_CONTEXT);
    /// The largest sample seen, bytes.
    uint64_t Peak() const { return m_peak; }
    /// Samples taken so far.
    uint64_t Samples() const { return m_grid.Samples(); }
    /// Whether the buffers' depth is being watched (only while it sleeps).
    bool Watching() const { return m_grid.Watching(); }

  private:
    /// One sample; whether any input buffer holds blocks.
    bool Sample();
    /// A switch input buffer's depth changed (connected while asleep).
    void OnDepth(uint8_t vl, uint32_t blocks);
    struct Watched
    {
        Ptr<IbPort> port;
        uint32_t node;
        uint32_t index;
    };
    std::vector<Watched> m_ports;
    std::vector<bool> m_wasBusy; ///< per port and VL
    std::ostream& m_out;
    uint64_t m_peak{0};
    GridSampler m_grid;
};

} // namespace ns3

#endif
