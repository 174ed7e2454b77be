/*
 * Builds an iWARP fabric from a TopologySpec: ns-3 nodes with the Internet
 * stack, point-to-point links, switches that are IPv4 routers with ns-3
 * traffic-control queues on their ports (drop-tail, or RED marking ECN for
 * DCTCP), no PFC. Every connection is a TCP connection (NewReno, Cubic or
 * DCTCP) carrying one IwarpQp at each end.
 *
 * Routes are static, from the spec's equal-cost next hops: among equal next
 * hops a switch picks by destination host, so destinations spread over the
 * uplinks and every flow keeps one path (TCP dislikes reordering).
 */
#ifndef FABEMU_IWARP_FABRIC_HELPER_H
#define FABEMU_IWARP_FABRIC_HELPER_H

#include "ns3/ipv4-address.h"
#include "ns3/iwarp-qp.h"
#include "ns3/link-outages.h"
#include "ns3/net-device-container.h"
#include "ns3/node-container.h"
#include "ns3/pcap-file-wrapper.h"
#include "ns3/queue-disc.h"
#include "ns3/rdma-fabric.h"
#include "ns3/topology-spec.h"

#include <set>
#include <string>
#include <vector>

namespace ns3
{

struct IwarpFabricOptions
{
    /// TCP congestion control: a TypeId name (ns3::TcpNewReno, ns3::TcpCubic, ns3::TcpDctcp).
    std::string congestionControl{"ns3::TcpNewReno"};
    /// Switch ports: RED marking ECN (instantaneous queue, DCTCP style) instead of drop-tail.
    bool red{false};
    /// Switch port queue limit, bytes (drop-tail beyond it, and RED's hard limit).
    uint64_t queueBytes{1024 * 1024};
    /// RED: mark above this many queued bytes (DCTCP's K).
    uint64_t markBytes{100 * 1024};
    /// IP MTU of every link; TCP's MSS is this less 52 bytes of IPv4 and TCP headers
    /// with the timestamp option.
    uint32_t mtu{1500};
    /// TCP send and receive buffers per socket, bytes.
    uint32_t socketBuffer{4 * 1024 * 1024};
    /// TCP's least retransmission timeout (ns-3's default, 1 s, is the WAN's; data-centre
    /// stacks run far lower) and the SYN retransmission timeout.
    Time minRto{MilliSeconds(10)};
    Time connTimeout{MilliSeconds(20)};
    /// Delayed ACKs (every second segment, or after 200 ms). Off: every segment is
    /// acknowledged at once, as Linux does in quick-ack mode, so that a WRITE's
    /// completion (all of it acknowledged) does not wait for the delayed-ACK timer.
    bool delayedAck{false};
};

class IwarpFabricHelper : public RdmaFabric
{
  public:
    void Install(const TopologySpec& spec, const IwarpFabricOptions& options = {});

    // RdmaFabric
    uint32_t GetNHosts() const override { return static_cast<uint32_t>(m_hostNodes.size()); }
    uint32_t GetHostIpv4(uint32_t host) const override { return m_hostAddress.at(host).Get(); }
    Connection Connect(uint32_t a, uint32_t b) override;
    void Disconnect(const Connection& c) override;
    /// Three round trips of propagation (TCP handshake, MPA request/reply, data and its
    /// acknowledgement) plus the bytes with all their framing at the slowest link.
    Time IdealFct(uint32_t a, uint32_t b, uint64_t bytes) const override;
    bool Reaches(uint32_t a, uint32_t b) const override { return m_spec.Reaches(a, b); }

    /// TCP payload octets per segment.
    uint32_t GetMss() const { return m_options.mtu - 52; }
    Ptr<Node> GetHostNode(uint32_t host) const { return m_nodes.Get(m_hostNodes.at(host)); }
    const std::vector<Ptr<IwarpQp>>& GetQps() const { return m_qps; }
    /// Writes the frames of \p host's link, both directions, to \p path (PPP link type;
    /// Wireshark decodes them as IP, TCP, MPA and DDP/RDMAP); the file is complete at
    /// DisablePcaps or when the simulation is destroyed.
    void EnablePcap(const std::string& path, uint32_t host);
    /// Completes and closes the pcap files EnablePcap opened.
    void DisablePcaps();

    /// A switch port's queue: ns-3 node id, device index on that node, its queue disc.
    struct SwitchPort
    {
        uint32_t node;
        uint32_t port;
        Ptr<QueueDisc> queue;
    };
    const std::vector<SwitchPort>& GetSwitchPorts() const { return m_switchPorts; }
    /// Both devices of link \p link (TopologySpec::Links' order) send at \p rate from now
    /// on (a degraded link).
    void SetLinkRate(uint32_t link, DataRate rate);
    /// Both devices of link \p link drop a packet that a bit error hits, at \p ber per bit
    /// (a RateErrorModel on receive; TCP recovers).
    void SetLinkBitErrorRate(uint32_t link, double ber);
    /// Packets the links dropped for bit errors.
    uint64_t GetBitErrorDrops() const;
    /**
     * \brief Link \p link goes down (\p up false) or comes back (a fault).
     *
     * While it is down both devices lose what arrives. The routes are static (as
     * Install made them) and stay: TCP's retransmission timer, backing off, carries each
     * connection over the outage, and it goes on after the first timeout once the link
     * is back.
     */
    void SetLinkUp(uint32_t link, bool up);
    /// Packets lost on links while they were down (not in GetBitErrorDrops).
    uint64_t GetLinkDownDrops() const { return m_outages.GetDrops(); }

    uint64_t TotalTcpRetransmissions() const;
    uint64_t TotalEcnEchoes() const;
    uint64_t TotalTerminates() const;
    /// Packets the switch queues dropped, and marked CE.
    uint64_t SwitchDrops() const;
    uint64_t SwitchEcnMarks() const;
    /// The largest queue any switch port reached, bytes.
    uint64_t PeakSwitchQueueBytes() const;

  private:
    void ConfigureSocket(Ptr<Socket> s) const;
    void QueueBytes(uint32_t before, uint32_t now);

    IwarpFabricOptions m_options;
    TopologySpec m_spec;
    NodeContainer m_nodes;
    std::vector<uint32_t> m_hostNodes;         ///< node index of each host
    std::vector<Ipv4Address> m_hostAddress;    ///< each host's address
    std::vector<Ptr<NetDevice>> m_hostDevices; ///< each host's device
    std::vector<SwitchPort> m_switchPorts;
    std::vector<Ptr<NetDevice>> m_linkDevices; ///< each link's two ends, in link order
    /// Counts each link's PhyRxDrop (bit errors and outages), once for its two devices.
    void CountDrops(uint32_t link);
    std::vector<uint64_t> m_linkDrops; ///< by link: what its two devices dropped on arrival
    std::vector<bool> m_dropsCounted;  ///< by link: its PhyRxDrop traces connected
    LinkOutages m_outages{[this](uint32_t link) { return m_linkDrops.at(link); }};
    std::vector<uint16_t> m_nextPort; ///< per host, the next listening port
    std::vector<Ptr<IwarpQp>> m_qps;  ///< alive until the helper goes
    std::vector<std::pair<Ptr<NetDevice>, Ptr<PcapFileWrapper>>> m_pcaps;
    uint64_t m_peakQueue{0};
};

} // namespace ns3

#endif
