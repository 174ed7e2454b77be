/*
 * Where a real endpoint meets the modelled RoCEv2 fabric. Frames its tap
 * delivers are filtered (EdgeFrameFilter), tagged with 802.1Q so the fabric
 * sees their priority (RoCEv2: the lossless class; anything else: 0), and
 * queued on the endpoint's port in the fabric; frames the fabric delivers to
 * that port are untagged again and written to the tap bit-exact. ARP requests
 * for another endpoint are answered here: a routed fabric does not flood.
 *
 * The tap's reader thread only copies frames and schedules them; every ns-3
 * object is touched on the simulation thread alone.
 */
#ifndef FABEMU_EDGE_PORT_H
#define FABEMU_EDGE_PORT_H

#include "edge-frame-filter.h"
#include "tap-port.h"

#include "roce-net-device.h"

#include <array>
#include <atomic>
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

class EdgePort
{
  public:
    /// \param directory every endpoint's address, for answering ARP
    EdgePort(std::string name,
             ns3::Ptr<ns3::RoceNetDevice> port,
             std::unique_ptr<TapPort> tap,
             uint32_t mtu,
             uint8_t rocePriority,
             std::vector<EndpointAddress> directory);
    ~EdgePort();

    /// Starts reading the tap; call once the simulator is set up.
    void Start();
    void Stop();

    struct Counters
    {
        uint64_t fromTap{0};   ///< frames taken into the fabric
        uint64_t toTap{0};     ///< frames delivered to the endpoint
        uint64_t bytesToTap{0}; ///< their bytes (Ethernet header on, no FCS)
        uint64_t arpReplies{0};
        uint64_t neighbourAdverts{0};
        uint64_t tapWriteFailures{0};
        std::map<std::string, uint64_t> drops; ///< by reason
    };
    /// Read after the simulation has stopped.
    Counters GetCounters() const;
    const std::string& Name() const { return m_name; }

  private:
    void OnTapFrame(const uint8_t* frame, size_t len); ///< reader thread
    void Inject(std::shared_ptr<std::vector<uint8_t>> frame);
    void FromFabric(ns3::Ptr<ns3::RoceNetDevice>, ns3::Ptr<ns3::Packet> frame, const ns3::ParsedFrame& f);
    void AnswerArp(const std::vector<uint8_t>& request);
    /// Answers a neighbour solicitation for another endpoint; true if it was one (answered or not).
    bool HandleNeighbourDiscovery(const std::vector<uint8_t>& frame, const ns3::ParsedFrame& f);

    std::string m_name;
    ns3::Ptr<ns3::RoceNetDevice> m_port;
    std::unique_ptr<TapPort> m_tap;
    uint8_t m_rocePriority;
    std::vector<EndpointAddress> m_directory;
    uint32_t m_context;
    mutable std::mutex m_filterMutex; ///< the filter's counters are read from another thread
    EdgeFrameFilter m_filter;
    Counters m_counters;
};

} // namespace fabemu

#endif
