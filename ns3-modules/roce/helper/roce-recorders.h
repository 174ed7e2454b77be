/*
 * Recorders that attach to a RoCEv2 fabric's trace sources from outside:
 * the PFC log, pcap on chosen ports, queue-depth samples. Models never
 * write files; these do.
 */
#ifndef FABEMU_ROCE_RECORDERS_H
#define FABEMU_ROCE_RECORDERS_H

#include "ns3/grid-sampler.h"
#include "ns3/pcap-file.h"
#include "ns3/roce-fabric-helper.h"

#include <fstream>
#include <memory>
#include <string>
#include <vector>

namespace ns3
{

/// PFC events as "time_ns node port priority pause|resume", one per line.
class PfcLog
{
  public:
    PfcLog(const RoceFabricHelper& fabric, std::ostream& out);
    uint64_t Events() const { return m_events; }

  private:
    void OnPfc(uint32_t node, uint32_t port, uint8_t prio, bool pause);
    std::ostream& m_out;
    uint64_t m_events{0};
};

/// Congestion-control rate changes as "time_ns host qpn rate_bps", one per line.
class RateLog
{
  public:
    RateLog(const RoceFabricHelper& fabric, std::ostream& out);
    uint64_t Changes() const { return m_changes; }

  private:
    void OnRate(uint32_t host, uint32_t qpn, uint64_t bps);
    std::ostream& m_out;
    uint64_t m_changes{0};
};

/// Writes every frame a port sends or receives (PFC included) to a pcap file
/// with nanosecond timestamps (Ethernet link type: Wireshark decodes RoCEv2 as
/// RRoCE with the BTH). The file is complete once the writer is destroyed.
class PcapWriter : public SimpleRefCount<PcapWriter>
{
  public:
    PcapWriter(Ptr<RoceNetDevice> port, const std::string& path);
    ~PcapWriter();
    uint64_t Frames() const { return m_frames; }

  private:
    void Write(Ptr<const Packet> frame);
    Ptr<RoceNetDevice> m_port;
    PcapFile m_file;
    uint64_t m_frames{0};
};

/// Samples every switch egress queue each interval, writing
/// "time_ns node port priority bytes" for queues that hold bytes (and once
/// more when one has drained to zero).
///
/// While every queue is empty it does not sample (such samples write nothing)
/// until a frame reaches a switch, then resumes on the same grid of instants
/// (GridSampler): the rows are those of sampling throughout.
class QueueSampler
{
  public:
    /// The samples run in \p context (GridSampler's: by default, the caller's).
    QueueSampler(const RoceFabricHelper& fabric, std::ostream& out, Time interval,
                 uint32_t context = Simulator::NO_CONTEXT);
    /// The largest sample seen, bytes.
    uint64_t Peak() const { return m_peak; }
    /// Samples taken so far.
    uint64_t Samples() const { return m_grid.Samples(); }
    /// Whether the switches' frames are being watched (only while it sleeps).
    bool Watching() const { return m_grid.Watching(); }

  private:
    /// One sample; whether any queue holds bytes.
    bool Sample();
    /// A frame reached a switch port (connected while asleep).
    void OnFrame(Ptr<const Packet> frame);
    const RoceFabricHelper& m_fabric;
    std::ostream& m_out;
    std::vector<bool> m_wasBusy; ///< by queue, in Sample's order: held bytes last time
    uint64_t m_peak{0};
    GridSampler m_grid;
};

} // namespace ns3

#endif
