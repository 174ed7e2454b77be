/*
 * A RoCEv2 data-centre switch: ports are RoceNetDevices; frames are routed on
 * their real IP destination (host routes, ECMP over the 5-tuple), admitted by
 * the shared-buffer SwitchMmu, ECN-marked by RED, and queued on the egress
 * port's priority queue. The switch sends PFC on ingress ports as the MMU asks,
 * refreshing a pause before it would expire.
 *
 * EcnMarkingPoint says when RED looks at the egress queue: at Dequeue (the
 * default), on the queue the frame leaves behind as it starts on the wire, as
 * HPCC's simulator and DCQCN's evaluations mark, so a mark is as fresh as the
 * queue it reports; or at Enqueue, on the queue the frame joins, as switches
 * that mark on admission do, which delays every mark by the frame's own
 * queueing time.
 *
 * The priority of a frame is its 802.1Q PCP when tagged, else DSCP >> 3
 * (so DSCP 26, RoCE's usual marking, maps to priority 3).
 * MAC addresses and TTL are left as they are: the fabric carries frames
 * between endpoints that believe they share one L2 segment.
 */
#ifndef FABEMU_ROCE_SWITCH_H
#define FABEMU_ROCE_SWITCH_H

#include "ns3/ipv4-address.h"
#include "ns3/ipv6-address.h"
#include "ns3/nstime.h"
#include "ns3/object.h"
#include "ns3/random-variable-stream.h"
#include "ns3/roce-net-device.h"
#include "ns3/roce-port-owner.h"
#include "ns3/switch-mmu.h"
#include "ns3/traced-callback.h"

#include <boost/container/flat_map.hpp>

#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace ns3
{

/// Why a switch dropped a frame.
enum class SwitchDropReason : uint8_t
{
    BufferFull,       ///< lossy priority over its threshold or the shared pool full
    HeadroomOverflow, ///< lossless priority beyond its headroom: headroom too small
    NoRoute,          ///< no route to the destination IP
    NotIp,            ///< ARP or other non-IP frame (real endpoints: the edge answers ARP)
    Malformed,
    PfcWatchdog, ///< thrown away by a port's PFC watchdog (PfcWatchdogAction Drop)
};

const char* SwitchDropReasonName(SwitchDropReason r);

class RoceSwitch : public Object, public RocePortOwner
{
  public:
    /// When a frame's ECN mark is decided.
    enum EcnMarkingPoint
    {
        Enqueue, ///< on the egress queue as the frame joins it
        Dequeue, ///< on the egress queue as the frame leaves it
    };

    static TypeId GetTypeId();
    RoceSwitch();

    /// The most ports a switch has (a waiting frame keeps its in-port in 16 bits).
    static constexpr uint32_t kMaxPorts = 65536;

    /// Adds a port; returns its index. Call before ConfigureMmu.
    uint32_t AddPort(Ptr<RoceNetDevice> device);
    /// Sizes the MMU: per-port headroom from each port's rate and cable delay.
    void ConfigureMmu();
    /// Uses random stream \p stream for ECN marking; returns the streams used (1).
    int64_t AssignStreams(int64_t stream);
    /// Why ConfigureMmu would fail with these ports (e.g. a buffer too small), or "".
    std::string MmuProblem() const;
    /// Frames to \p dst leave through \p port (several ports: ECMP).
    void AddRoute(Ipv4Address dst, uint32_t port);
    void AddRoute(Ipv6Address dst, uint32_t port);
    /// The ports of the route to \p dst, in the order added (empty: no route).
    std::vector<uint32_t> GetRoute(Ipv4Address dst) const;
    /// Forgets every route (before a routing change adds the new ones).
    void ClearRoutes();
    /// The index of port \p device here; aborts when it is not one of this switch's.
    uint32_t GetPortIndex(Ptr<const RoceNetDevice> device) const;
    /// LinkDetectionTime: how long after a link here goes down or comes back the routes
    /// change.
    Time GetLinkDetectionTime() const { return m_linkDetection; }

    Ptr<SwitchMmu> GetMmu() const { return m_mmu; }
    Ptr<RoceNetDevice> GetPort(uint32_t i) const { return m_ports.at(i).device; }
    uint32_t GetNPorts() const { return static_cast<uint32_t>(m_ports.size()); }
    uint64_t GetDrops() const { return m_drops; }
    /// The devices of the egress ports where frames that came in by \p in on \p prio
    /// wait (what \p in's ingress buffer waits for); none when \p in is not a port here.
    std::vector<Ptr<RoceNetDevice>> GetEgressHolding(Ptr<const RoceNetDevice> in,
                                                     uint8_t prio) const;
    /// Drops by reason (index: SwitchDropReason).
    uint64_t GetDrops(SwitchDropReason reason) const
    {
        return m_dropsByReason[static_cast<size_t>(reason)];
    }
    uint64_t GetEcnMarks() const { return m_ecnMarks; }
    uint64_t GetPausesSent() const { return m_pausesSent; }
    /// The port ECMP picks for a frame (exposed for tests of hash spreading).
    uint32_t SelectPort(const std::vector<uint32_t>& ports, const ParsedFrame& f) const;

  protected:
    void DoDispose() override;

  private:
    /// FNV-1a of \p f's 5-tuple from basis \p h.
    static uint32_t Hash5Tuple(uint32_t h, const ParsedFrame& f);
    std::vector<uint64_t> Headroom() const;
    /// A port. What its queues hold is the device's: each frame is enqueued with the port
    /// it came in by (RoceNetDevice::Enqueue's from), which its buffer is charged to.
    struct Port
    {
        Ptr<RoceNetDevice> device;
        std::array<bool, SwitchMmu::kPriorities> pausing{}; ///< XOFF in force upstream
        std::array<EventId, SwitchMmu::kPriorities> refresh;
    };

    // RocePortOwner: each port calls these with its index here.
    void FrameReceived(uint32_t inPort, Ptr<Packet> frame, const ParsedFrame& f) override;
    void BeforeTransmit(uint32_t outPort, Ptr<Packet> frame, uint8_t prio) override;
    void FrameDequeued(uint32_t outPort, Ptr<const Packet> frame, uint8_t prio,
                       uint16_t inPort) override;
    void WatchdogDropped(uint32_t outPort, Ptr<const Packet> frame, uint8_t prio,
                         uint16_t inPort) override;
    /// RED on egress queue (\p port, \p prio) holding \p queueBytes: marks \p frame CE.
    void MaybeMark(Ptr<Packet> frame, const ParsedFrame& f, uint32_t port, uint8_t prio,
                   uint64_t queueBytes);
    void Drop(Ptr<const Packet> frame, uint32_t port, SwitchDropReason reason);
    void CheckPause(uint32_t inPort, uint8_t prio);
    void SendPause(uint32_t inPort, uint8_t prio);
    const std::vector<uint32_t>* Lookup(const ParsedFrame& f) const;

    Ptr<SwitchMmu> m_mmu;
    Time m_linkDetection;
    std::vector<Port> m_ports;
    std::unordered_map<const RoceNetDevice*, uint32_t> m_portOf;
    /// The distinct ECMP port sets (a fat tree's switch has a few: each down port, all up
    /// ports), and each IPv4 destination's set by index: a few bytes per route where a
    /// vector per destination took ~80 (issue 22: memory).
    std::vector<std::vector<uint32_t>> m_portSets;
    std::map<std::vector<uint32_t>, uint32_t> m_portSetIndex;
    /// IPv4 routes: the hosts' addresses are consecutive (HostIpv4), so a table indexed by
    /// the address less the first one routed holds each destination's set in one byte,
    /// found without a search (a switch has few sets; kDenseNone: no route). A set
    /// numbered kDenseInMap or more, an address below the first one, or one more than
    /// kDenseSpan above it, is kept in the map instead. One byte a route keeps a large
    /// fabric's tables in the caches: at k=32, 8 KiB a switch, where 4 bytes took 32.
    static constexpr uint32_t kNoRoute = UINT32_MAX;
    static constexpr uint32_t kDenseSpan = 1u << 20;
    static constexpr uint8_t kDenseNone = 0xff;
    static constexpr uint8_t kDenseInMap = 0xfe;
    uint32_t m_routes4Base{0};
    std::vector<uint8_t> m_routes4Dense;
    boost::container::flat_map<uint32_t, uint32_t> m_routes4;
    /// The set index of \p dst's route, or kNoRoute.
    uint32_t RouteSet4(uint32_t dst) const;
    std::unordered_map<std::string, std::vector<uint32_t>> m_routes6;
    Ptr<UniformRandomVariable> m_uniform;
    uint32_t m_ecmpSeed{0};
    mutable std::optional<uint32_t> m_ecmpNodeId; ///< SelectPort's seed: the node's id
    uint16_t m_pauseQuanta{0xffff};
    Time m_watchdogRecovery; ///< given to every port (RoceNetDevice::PfcWatchdogRecovery)
    RoceNetDevice::WatchdogAction m_watchdogAction{RoceNetDevice::Forward}; ///< the same
    uint32_t m_maxFrameBytes{9018};
    EcnMarkingPoint m_markingPoint{Dequeue};

    uint64_t m_drops{0};
    std::array<uint64_t, 6> m_dropsByReason{};
    uint64_t m_ecnMarks{0};
    uint64_t m_pausesSent{0};

    TracedCallback<Ptr<const Packet>, uint32_t, SwitchDropReason> m_dropTrace;
    TracedCallback<Ptr<const Packet>, uint32_t, uint8_t> m_ecnTrace;
    TracedCallback<uint32_t, uint8_t, bool> m_pfcTrace;
};

} // namespace ns3

#endif
