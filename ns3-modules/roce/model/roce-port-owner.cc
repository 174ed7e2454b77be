#include "ns3/roce-port-owner.h"

namespace ns3
{

RocePortOwner::~RocePortOwner() = default;

void
RocePortOwner::BeforeTransmit(uint32_t /*port*/, Ptr<Packet> /*frame*/, uint8_t /*prio*/)
{
}

void
RocePortOwner::FrameDequeued(uint32_t /*port*/, Ptr<const Packet> /*frame*/, uint8_t /*prio*/,
                             uint16_t /*from*/)
{
}

void
RocePortOwner::WatchdogDropped(uint32_t /*port*/, Ptr<const Packet> /*frame*/, uint8_t /*prio*/,
                               uint16_t /*from*/)
{
}

} // namespace ns3
