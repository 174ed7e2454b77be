/*
 * The fabric side of an edge port, when it is not the RoCEv2 model's own NIC
 * device: something that takes the endpoint's Ethernet frames into a fabric
 * and hands back the frames that fabric delivers to the endpoint.
 */
#ifndef FABEMU_EDGE_UPLINK_H
#define FABEMU_EDGE_UPLINK_H

#include "roce-frame.h"

#include "ns3/packet.h"

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace fabemu
{

class EdgeUplink
{
  public:
    virtual ~EdgeUplink() = default;
    /// Takes an endpoint's frame (untagged Ethernet, parsed as \p f) into the fabric
    /// at priority \p prio. Runs on the simulation thread.
    virtual void Send(const std::vector<uint8_t>& frame, const ns3::ParsedFrame& f,
                      uint8_t prio) = 0;
    /// Where frames for the endpoint go (untagged Ethernet, bit-exact as sent).
    virtual void SetDeliver(std::function<void(const std::vector<uint8_t>&)> deliver) = 0;
    /// The ns-3 node the uplink's events run under.
    virtual uint32_t Context() const = 0;
    /// Frames it could not carry, by reason.
    virtual std::map<std::string, uint64_t> Drops() const = 0;
};

} // namespace fabemu

#endif
