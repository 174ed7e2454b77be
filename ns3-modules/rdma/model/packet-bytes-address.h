/*
 * Where a packet's bytes are: for a prefetch hint, and for keeping a waiting frame as
 * its bytes (FrameQueue).
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

/**
 * \brief A packet's buffer as ns-3 keeps it: the real bytes before its zero area (the
 * headers), the zero area's length (a simulated payload, never allocated), and the real
 * bytes after it (a trailer such as the ICRC).
 *
 * The pointers are into the packet's own buffer: valid while the packet lives and is not
 * changed. Read only.
 */
struct PacketByteRuns
{
    const uint8_t* head = nullptr;
    uint32_t headSize = 0;
    uint32_t zeroSize = 0;
    const uint8_t* tail = nullptr;
    uint32_t tailSize = 0;
};

/// The byte runs of \p p's buffer (reads its fields, copies and writes nothing).
PacketByteRuns GetPacketByteRuns(const Packet& p);

/// Whether packets record metadata (Packet::EnablePrinting or EnableChecking was called).
bool IsPacketMetadataEnabled();

/**
 * \brief Whether \p p is its bytes and nothing else: no packet or byte tags, no Nix
 * vector, and no metadata recorded. Such a packet built again from its bytes
 * (GetPacketByteRuns) is the same packet. Reads its fields, without the calls into ns-3
 * the public accessors make.
 */
bool IsPlainPacket(const Packet& p);

/**
 * \brief Writes a frame's real bytes over \p p's, in place, if \p p has the same shape:
 * \p headSize bytes, a zero area of \p zeroSize, \p tailSize bytes; if it is plain
 * (IsPlainPacket); and if no other packet shares its buffer. Returns false, and changes
 * nothing, otherwise.
 *
 * For a packet nobody else holds (its reference count is the caller's alone), this makes
 * it the frame that Create<Packet>(zeroSize), AddTrailer and AddHeader would build, without
 * the allocations and the calls into ns-3 (FrameQueue reuses the Packets of frames it
 * keeps as bytes so). The packet keeps its uid.
 */
bool OverwritePacketBytes(Packet& p, const uint8_t* head, uint32_t headSize, uint32_t zeroSize,
                          const uint8_t* tail, uint32_t tailSize);

} // namespace ns3

#endif // FABEMU_PACKET_BYTES_ADDRESS_H
