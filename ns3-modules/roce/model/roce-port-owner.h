/*
 * What a RoCEv2 port hands its frames to: the switch or the NIC it belongs to.
 */
#ifndef FABEMU_ROCE_PORT_OWNER_H
#define FABEMU_ROCE_PORT_OWNER_H

#include "ns3/packet.h"
#include "ns3/ptr.h"
#include "ns3/roce-frame.h"

#include <cstdint>

namespace ns3
{

/**
 * \brief The owner of RoceNetDevice ports (ns3::RoceSwitch, ns3::RoceNic), called by
 * each port with the index the owner gave it (RoceNetDevice::SetOwner).
 *
 * A switch port's frame reaches its owner three times: at its arrival, as it leaves its
 * queue for the wire, and once it has left. A port calls its owner directly, with the
 * owner's own index for it, where a RoceNetDevice::FrameCallback goes through ns-3's
 * Callback and std::function and leaves the owner to find the port from the device (a
 * hash-map lookup). An owner is the model's own wiring; the callbacks stay for whoever
 * else listens to a port (the emulator's uplink, tests), and a port with an owner
 * calls the owner instead of them.
 *
 * The port keeps a plain pointer: the owner outlives its ports' traffic, and a port
 * forgets it when it is disposed (as it forgets its callbacks).
 */
class RocePortOwner
{
  public:
    virtual ~RocePortOwner();

    /// A frame that is not PFC has arrived on \p port (PFC is the port's own).
    virtual void FrameReceived(uint32_t port, Ptr<Packet> frame, const ParsedFrame& f) = 0;

    /// A data frame of \p prio has just been taken from \p port's queue, before it goes
    /// on the wire: its bytes may be changed in place (an ECN mark), never its size.
    /// Nothing by default.
    virtual void BeforeTransmit(uint32_t port, Ptr<Packet> frame, uint8_t prio);

    /// A queued data frame of \p prio has left \p port's queue: sent, or dropped by the
    /// PFC watchdog. \p from is what the owner enqueued it with (RoceNetDevice::Enqueue).
    /// Nothing by default.
    virtual void FrameDequeued(uint32_t port, Ptr<const Packet> frame, uint8_t prio, uint16_t from);

    /// The PFC watchdog's Drop action has thrown \p frame away (enqueued with \p from);
    /// FrameDequeued follows. Nothing by default.
    virtual void WatchdogDropped(uint32_t port, Ptr<const Packet> frame, uint8_t prio,
                                 uint16_t from);
};

} // namespace ns3

#endif // FABEMU_ROCE_PORT_OWNER_H
