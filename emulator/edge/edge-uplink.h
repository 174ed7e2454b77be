/*
 * The fabric side of an edge port: what takes a real endpoint's Ethernet frames
 * into one fabric and hands back the frames that fabric delivers to it. One per
 * fabric: RoceUplink (802.1Q, PFC, DCQCN on the endpoint's behalf) and IbGateway
 * (frames as InfiniBand packets). Each sits on the bare port that the fabric's
 * helper gives an external host (SetExternalHosts), as ns-3's TapBridge sits on
 * a ghost node's device.
 */
#ifndef FABEMU_EDGE_UPLINK_H
#define FABEMU_EDGE_UPLINK_H

#include "ns3/roce-frame.h"

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace fabemu
{

/// What an edge port and its uplink counted; read after the simulation has stopped.
struct EdgeCounters
{
    uint64_t framesRead{0}; ///< frames read from the tap (before the filter)
    /// of those, read with no receive stamp from the kernel: each entered the fabric at
    /// the moment it was read, not when it arrived
    uint64_t framesUnstamped{0};
    uint64_t fromTap{0};    ///< frames taken into the fabric
    uint64_t toTap{0};      ///< frames delivered to the endpoint
    uint64_t bytesToTap{0}; ///< their bytes (Ethernet header on, no FCS)
    uint64_t arpReplies{0};
    uint64_t neighbourAdverts{0};
    uint64_t tapWriteFailures{0};
    uint64_t tapWriteCalls{0}; ///< system calls that wrote frames to the endpoint (batched)
    uint64_t cnpsSent{0};      ///< DCQCN: as the endpoint's notification point
    uint64_t cnpsConsumed{0};  ///< DCQCN: CNPs for this endpoint's flows, acted on here
    uint64_t framesPaced{0};   ///< DCQCN: frames held back by a flow's rate
    uint64_t framesMadeEct{0}; ///< DCQCN: RoCEv2 frames sent Not-ECT, given ECT(0)
    uint64_t lowestRateBps{0}; ///< DCQCN: the lowest rate any flow was cut to
    uint64_t framesHeld{0};    ///< toward the endpoint: frames its tap could not take at once
    uint64_t peakHeldBytes{0};
    uint64_t pausesToFabric{0};            ///< PFC pauses sent while holding frames
    uint64_t heldAtStop{0};                ///< frames still held when the run stopped
    uint64_t heldBytesNow{0};              ///< bytes held toward the endpoint at this moment
    std::map<std::string, uint64_t> drops; ///< by reason
};

class EdgeUplink
{
  public:
    virtual ~EdgeUplink() = default;
    /// Takes an endpoint's frame (untagged Ethernet, \p len bytes, parsed as \p f) into
    /// the fabric at priority \p prio. Runs on the simulation thread. The frame is the
    /// tap reader's buffer: the uplink may change it in place, and copies what it keeps.
    virtual void Send(uint8_t* frame, size_t len, const ns3::ParsedFrame& f, uint8_t prio) = 0;
    /// Where frames for the endpoint go (untagged Ethernet, bit-exact as sent), handed over.
    virtual void SetDeliver(std::function<void(std::vector<uint8_t>)> deliver) = 0;
    /// The ns-3 node the uplink's events run under.
    virtual uint32_t Context() const = 0;
    /// The endpoint is not reading (true) or reads again (false): a fabric that can
    /// make its sender wait does (RoCEv2 with PFC pauses the lossless priority).
    virtual void HoldFabric(bool /* hold */) {}
    /// Cancels the uplink's pending events (the run is over): pause refreshes, paced
    /// frames' releases. Its models' own timers end with the simulation.
    virtual void Stop() {}
    /// Adds the uplink's counts and its drops by reason to \p c.
    virtual void AddCounters(EdgeCounters& c) const = 0;
};

} // namespace fabemu

#endif
