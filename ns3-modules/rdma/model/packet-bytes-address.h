/*
 * Where a packet's bytes are, for a prefetch hint.
 */
#ifndef FABEMU_PACKET_BYTES_ADDRESS_H
#define FABEMU_PACKET_BYTES_ADDRESS_H

#include "ns3/packet.h"

namespace ns3
{

/**
 * \brief The address of the first byte of \p p (its first header), to prefetch.
 *
 * A model that schedules a packet's arrival knows which bytes the receiver will read
 * first, and a scheduler can load them while the events before it run
 * (BucketScheduler::TouchNext). ns-3 keeps a packet's buffer private, and
 * Buffer::PeekData() would turn a simulated payload's zero area into real bytes; this
 * reads the buffer's pointer and start, nothing else, and writes nothing. Only for
 * hints: the bytes are read through the Packet API.
 */
const void* PacketBytesAddress(const Packet& p);

} // namespace ns3

#endif // FABEMU_PACKET_BYTES_ADDRESS_H
