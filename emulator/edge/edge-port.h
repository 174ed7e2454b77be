/*
 * Where a real endpoint meets a modelled fabric: its tap on one side, the
 * fabric's EdgeUplink on the other (RoceUplink, IbGateway). Frames the tap
 * delivers are filtered (EdgeFrameFilter); ARP and neighbour discovery are
 * answered here (NeighbourResponder: a routed fabric does not flood); the rest go
 * to the uplink at the priority EdgePriority gives them (RoCEv2 the lossless
 * class, other IP what its DSCP names, the rest 0). Frames the uplink delivers
 * are written to the tap bit-exact.
 *
 * Lossless toward the endpoint, as its NIC would be: a frame the tap cannot take
 * (its ring is full: the VM is not reading) is held here, in order, and written
 * again when the VM reads; above kHoldXoff (256 KB) held the uplink is asked to
 * hold the fabric back (RoCEv2 with PFC pauses the lossless priority), at or
 * below kHoldXon (128 KB) to let it go.
 *
 * On the emulator's real-time simulator (FabemuRealtimeSimulatorImpl) the
 * simulation thread reads the tap itself; on any other, a reader thread does,
 * and only copies frames and schedules them. Either way every ns-3 object is
 * touched on the simulation thread alone.
 */
#ifndef FABEMU_EDGE_PORT_H
#define FABEMU_EDGE_PORT_H

#include "emulator/edge/edge-frame-filter.h"
#include "emulator/edge/edge-uplink.h"
#include "emulator/edge/neighbour-responder.h"
#include "emulator/edge/realtime-simulator.h"
#include "emulator/edge/tap-port.h"

#include <deque>
#include <memory>
#include <mutex>
#include <vector>

namespace fabemu
{

/// The 802.1Q priority an endpoint's frame gets at its edge, as a RoCE NIC with
/// DSCP trust would give it: RoCEv2 the fabric's RoCE (lossless) priority
/// whatever rxe wrote, other IPv4/IPv6 the priority its DSCP names (DSCP / 8:
/// DSCP 24 is priority 3), anything else 0.
uint8_t EdgePriority(const ns3::ParsedFrame& f, uint8_t rocePriority);

class EdgePort
{
  public:
    /// \param uplink the fabric's side, on the external host's bare port
    /// \param mtu the endpoint's IP MTU (the filter drops larger frames)
    /// \param rocePriority the priority RoCEv2 frames travel on
    /// \param directory every endpoint's addresses, for answering ARP and ND
    EdgePort(std::string name, std::unique_ptr<EdgeUplink> uplink, std::unique_ptr<TapPort> tap,
             uint32_t mtu, uint8_t rocePriority, std::vector<EndpointAddress> directory);
    ~EdgePort();

    /// Starts reading the tap once the simulation runs; call after setting it up,
    /// before or after Simulator::Run.
    void Start();
    void Stop();

    /// Frames held toward the endpoint: pause the fabric above kHoldXoff bytes,
    /// resume at or below kHoldXon, refuse (drop, counted) beyond kHoldLimit.
    static constexpr uint64_t kHoldXoff = 256 << 10;
    static constexpr uint64_t kHoldXon = 128 << 10;
    static constexpr uint64_t kHoldLimit = 16 << 20;
    /// Read system calls per wake-up when the simulation thread reads the tap.
    static constexpr unsigned kReadBatchesPerTurn = 4;

    using Counters = EdgeCounters;
    /// Read after the simulation has stopped.
    Counters GetCounters() const;
    const std::string& Name() const { return m_name; }

  private:
    void StartReading();
    /// Whichever thread reads the tap; \p arrived: the frame's receive stamp.
    void OnTapFrame(uint8_t* frame, size_t len, TapPort::Clock::time_point arrived);
    /// A copy for the simulation thread, when another thread reads the tap.
    void Inject(std::shared_ptr<std::vector<uint8_t>> frame);
    /// Takes an endpoint's frame, parsed as \p f, into the fabric, on the simulation
    /// thread. Read by the simulation thread, the frame is the reader's buffer, which
    /// the RoCEv2 uplink copies once, into its packet.
    void Take(uint8_t* frame, size_t len, const ns3::ParsedFrame& f);
    void WriteToEndpoint(std::vector<uint8_t> frame);
    void FlushQueued(); ///< writes the frames a burst of events queued, holds what the tap refuses
    /// Writes what the tap has queued and counts it; what it refuses goes to \p refused.
    void FlushTap(std::vector<std::vector<uint8_t>>& refused);
    void Hold(std::vector<uint8_t> frame);
    void DrainHeld(); ///< writes held frames until the tap is full again
    void UpdateHold();

    std::string m_name;
    std::unique_ptr<EdgeUplink> m_uplink;
    std::unique_ptr<TapPort> m_tap;
    uint8_t m_rocePriority;
    NeighbourResponder m_neighbours;
    uint32_t m_context;
    mutable std::mutex m_filterMutex; ///< the filter's counters are read from another thread
    EdgeFrameFilter m_filter;
    Counters m_counters;
    std::deque<std::vector<uint8_t>> m_held; ///< toward the endpoint, in order
    uint64_t m_heldBytes{0};
    ns3::EventId m_retry;
    bool m_holding{false}; ///< the uplink was asked to hold the fabric back
    ns3::Ptr<ns3::FabemuRealtimeSimulatorImpl>
        m_watching; ///< reads the tap, if that simulator runs
    uint64_t m_idleHook{0};
};

} // namespace fabemu

#endif
