/*
 * Where a real endpoint meets the modelled RoCEv2 fabric. Frames its tap
 * delivers are filtered (EdgeFrameFilter), tagged with 802.1Q so the fabric
 * sees their priority (EdgePriority: RoCEv2 the lossless class, other IP what
 * its DSCP names, the rest 0), and
 * queued on the endpoint's port in the fabric; frames the fabric delivers to
 * that port are untagged again and written to the tap bit-exact. ARP requests
 * for another endpoint are answered here: a routed fabric does not flood.
 *
 * Lossless both ways, as the endpoint's NIC would be. Toward the fabric the
 * endpoint's frames wait in the port's queue while the switch pauses it (virtio
 * ignores PFC). Toward the endpoint a frame the tap cannot take (its ring is
 * full: the VM is not reading) is held here, in order, and written again when
 * the VM reads; above kHoldXoff (256 KB) held the port pauses the fabric's lossless
 * priority (PFC, when the fabric has it on), at or below kHoldXon (128 KB) it resumes it.
 *
 * On the emulator's real-time simulator (FabemuRealtimeSimulatorImpl) the
 * simulation thread reads the tap itself; on any other, a reader thread does,
 * and only copies frames and schedules them. Either way every ns-3 object is
 * touched on the simulation thread alone.
 */
#ifndef FABEMU_EDGE_PORT_H
#define FABEMU_EDGE_PORT_H

#include "edge-frame-filter.h"
#include "edge-uplink.h"
#include "tap-port.h"

#include "realtime-simulator.h"

#include "dcqcn-rate-control.h"
#include "roce-net-device.h"

#include <array>
#include <atomic>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

namespace fabemu
{

struct EndpointAddress
{
    uint32_t ipv4{0}; ///< host order
    std::array<uint8_t, 6> mac{};
    /// fe80::/64 with the MAC's modified EUI-64, as the endpoint's kernel forms it
    /// (rxe's GID 0 and RoCEv2 over IPv6 use it).
    std::array<uint8_t, 16> LinkLocal() const;
};

/// The 802.1Q priority an endpoint's frame gets at its edge, as a RoCE NIC with
/// DSCP trust would give it: RoCEv2 the fabric's RoCE (lossless) priority
/// whatever rxe wrote, other IPv4/IPv6 the priority its DSCP names (DSCP / 8:
/// DSCP 24 is priority 3), anything else 0.
uint8_t EdgePriority(const ns3::ParsedFrame& f, uint8_t rocePriority);

class EdgePort
{
  public:
    /// \param directory every endpoint's address, for answering ARP
    EdgePort(std::string name, ns3::Ptr<ns3::RoceNetDevice> port, std::unique_ptr<TapPort> tap,
             uint32_t mtu, uint8_t rocePriority, std::vector<EndpointAddress> directory);
    /// The same over another fabric's uplink (the InfiniBand gateway); no DCQCN there.
    EdgePort(std::string name, std::unique_ptr<EdgeUplink> uplink, std::unique_ptr<TapPort> tap,
             uint32_t mtu, uint8_t rocePriority, std::vector<EndpointAddress> directory);
    ~EdgePort();

    /// Starts reading the tap once the simulation runs; call after setting it up,
    /// before or after Simulator::Run.
    void Start();
    /**
     * \brief Runs DCQCN on the endpoint's behalf (rxe has none): as notification
     * point, a CE-marked RoCEv2 frame to the endpoint makes this edge send a CNP
     * to its sender (at most one per flow per ns3::RoceNic::CnpInterval); as
     * reaction point, the endpoint's RoCEv2 frames leave at the rate of their
     * flow's DcqcnRateControl, which CNPs for that flow (consumed here) cut.
     * A flow is (destination IPv4, destination QP): the CNP carries the QP the
     * marked frame was sent to, so both ends of a flow are edges of this
     * emulator. IPv4 only. \p lineRate is where every flow starts.
     */
    void EnableDcqcn(ns3::DataRate lineRate);
    /// Called on the simulation thread with (destination IPv4 in host order, destination
    /// QP, bit/s) whenever the DCQCN rate of one of this endpoint's flows changes, first
    /// with its starting rate. Set before the simulation runs.
    using RateObserver = std::function<void(uint32_t, uint32_t, uint64_t)>;
    void SetRateObserver(RateObserver observer);
    void Stop();

    /// Frames held toward the endpoint: pause the fabric above kHoldXoff bytes,
    /// resume at or below kHoldXon, refuse (drop, counted) beyond kHoldLimit.
    static constexpr uint64_t kHoldXoff = 256 << 10;
    static constexpr uint64_t kHoldXon = 128 << 10;
    static constexpr uint64_t kHoldLimit = 16 << 20;

    struct Counters
    {
        uint64_t framesRead{0}; ///< frames read from the tap (before the filter)
        uint64_t fromTap{0};    ///< frames taken into the fabric
        uint64_t toTap{0};      ///< frames delivered to the endpoint
        uint64_t bytesToTap{0}; ///< their bytes (Ethernet header on, no FCS)
        uint64_t arpReplies{0};
        uint64_t neighbourAdverts{0};
        uint64_t tapWriteFailures{0};
        uint64_t cnpsSent{0};      ///< DCQCN: as the endpoint's notification point
        uint64_t cnpsConsumed{0};  ///< DCQCN: CNPs for this endpoint's flows, acted on here
        uint64_t framesPaced{0};   ///< DCQCN: frames held back by a flow's rate
        uint64_t lowestRateBps{0}; ///< DCQCN: the lowest rate any flow was cut to
        uint64_t framesHeld{0};    ///< toward the endpoint: frames its tap could not take at once
        uint64_t peakHeldBytes{0};
        uint64_t pausesToFabric{0};            ///< PFC pauses this edge sent while holding frames
        uint64_t heldAtStop{0};                ///< frames still held when the run stopped
        uint64_t heldBytesNow{0};              ///< bytes held toward the endpoint at this moment
        std::map<std::string, uint64_t> drops; ///< by reason
    };
    /// Read after the simulation has stopped.
    Counters GetCounters() const;
    const std::string& Name() const { return m_name; }

  private:
    void StartReading();
    void OnTapFrame(const uint8_t* frame, size_t len); ///< whichever thread reads the tap
    void Inject(std::shared_ptr<std::vector<uint8_t>> frame);
    void FromFabric(ns3::Ptr<ns3::RoceNetDevice>, ns3::Ptr<ns3::Packet> frame,
                    const ns3::ParsedFrame& f);
    void WriteToEndpoint(std::vector<uint8_t> frame);
    void FlushQueued(); ///< writes the frames a burst of events queued, holds what the tap refuses
    void Hold(std::vector<uint8_t> frame);
    void DrainHeld(); ///< writes held frames until the tap is full again
    void UpdatePause();
    void RefreshPause();
    void AnswerArp(const std::vector<uint8_t>& request);
    struct Flow
    {
        ns3::Ptr<ns3::DcqcnRateControl> cc;
        std::deque<ns3::Ptr<ns3::Packet>> queue;
        uint64_t queuedBytes{0};
        ns3::Time nextSend;
        ns3::EventId release;
        ns3::Time lastCnp{ns3::Time::Min()};
    };
    using FlowKey = std::pair<uint32_t, uint32_t>; ///< IPv4 (host order), destination QP
    void Pace(Flow& flow);
    void OnFlowRate(uint32_t dstIpv4, uint32_t destQp, uint64_t before, uint64_t now);
    void SendCnp(const ns3::ParsedFrame& f, const std::vector<uint8_t>& frame);
    /// Answers a neighbour solicitation for another endpoint; true if it was one (answered or not).
    bool HandleNeighbourDiscovery(const std::vector<uint8_t>& frame, const ns3::ParsedFrame& f);

    std::string m_name;
    ns3::Ptr<ns3::RoceNetDevice> m_port;  ///< the RoCEv2 model's NIC device, or
    std::unique_ptr<EdgeUplink> m_uplink; ///< another fabric's way in
    std::unique_ptr<TapPort> m_tap;
    uint8_t m_rocePriority;
    std::vector<EndpointAddress> m_directory;
    uint32_t m_context;
    mutable std::mutex m_filterMutex; ///< the filter's counters are read from another thread
    EdgeFrameFilter m_filter;
    Counters m_counters;
    bool m_dcqcn{false};
    ns3::DataRate m_lineRate;
    ns3::Time m_cnpInterval;         ///< read once, in EnableDcqcn
    std::map<FlowKey, Flow> m_flows; ///< reaction point: this endpoint's flows
    RateObserver m_rateObserver;
    std::map<FlowKey, ns3::Time> m_np;       ///< notification point: last CNP per incoming flow
    std::deque<std::vector<uint8_t>> m_held; ///< toward the endpoint, in order
    uint64_t m_heldBytes{0};
    ns3::EventId m_retry;
    bool m_portPfc{false}; ///< the RoCEv2 port honours and may send PFC
    bool m_pausing{false};
    ns3::EventId m_pauseRefresh;
    ns3::Ptr<ns3::FabemuRealtimeSimulatorImpl>
        m_watching; ///< reads the tap, if that simulator runs
    uint64_t m_idleHook{0};
};

} // namespace fabemu

#endif
