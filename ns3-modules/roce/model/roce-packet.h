/*
 * RoCEv2 frames as ns-3 packets. A packet holds the real frame (no preamble,
 * no FCS): models read its headers through a copied prefix and never copy the
 * payload; a switch marking ECN rewrites the real IP header and its checksum.
 */
#ifndef FABEMU_ROCE_PACKET_H
#define FABEMU_ROCE_PACKET_H

#include "ns3/byte-header.h"
#include "ns3/byte-trailer.h"
#include "ns3/packet.h"
#include "ns3/roce-frame.h"

#include <array>

namespace ns3
{

/// Parses the headers of the frame in \p p (see ParseFrameHeaders).
ParsedFrame PeekFrame(Ptr<const Packet> p);

/**
 * \brief Marks Congestion Experienced in the frame's IP header.
 * \return false when the frame is not ECN-capable (not-ECT), and left as it is
 *
 * The IPv4 checksum is fixed; the ICRC stays valid because it masks the ECN bits.
 */
bool MarkCongestionExperienced(Ptr<Packet> p, const ParsedFrame& f);

/**
 * \brief A RoCEv2 packet as a simulated host sends it: real headers, a zero
 * payload that is never allocated, pad, and the ICRC.
 * \param computeIcrc false leaves the ICRC zero (cheaper for large simulations)
 */
Ptr<Packet> MakeRoceV2Packet(const RoceFrameSpec& spec, bool computeIcrc = true);

} // namespace ns3

#endif
