/*
 * Packets for the frames an edge takes from its tap, made once and written again.
 */
#ifndef FABEMU_PACKET_RECYCLER_H
#define FABEMU_PACKET_RECYCLER_H

#include "ns3/packet.h"

#include <cstdint>
#include <vector>

namespace fabemu
{

/**
 * \brief Hands out packets holding a frame's bytes, reusing those the fabric is done with.
 *
 * ns-3 allocates a Packet, and with it its metadata record, for every frame. An edge
 * keeps the packets it made in a ring, in the order it made them. The fabric delivers
 * or drops them roughly in that order, and a packet nobody else holds any more (its
 * reference count is the ring's one) is written again in place: its buffer takes the
 * new bytes without a new allocation when the old frame was at least as long. A
 * packet still in the fabric is left to it, and its slot gets a new packet.
 *
 * The packet handed out last is tried first: a frame at a time, the fabric is done
 * with it by the next frame, and it is still in the caches, where the ring's oldest
 * (its bytes, its buffer, its metadata) is not. Under load the ring takes over.
 *
 * A reused packet keeps its uid (ns-3's Packet::GetUid); the emulator's edges do not
 * use uids. Call from the simulation thread only.
 */
class PacketRecycler
{
  public:
    /// \param ring how many packets are kept for reuse
    explicit PacketRecycler(std::size_t ring = 256);

    /// A packet holding \p headLen bytes of \p head, then \p bodyLen of \p body.
    ns3::Ptr<ns3::Packet> Make(const uint8_t* head, uint32_t headLen, const uint8_t* body,
                               uint32_t bodyLen);

    uint64_t Made() const { return m_made; }     ///< new packets
    uint64_t Reused() const { return m_reused; } ///< packets written again

  private:
    /// Whether nobody but the ring holds \p slot's packet.
    static bool Free(const ns3::Ptr<ns3::Packet>& slot);

    std::vector<ns3::Ptr<ns3::Packet>> m_ring;
    std::size_t m_next{0}; ///< the ring's oldest slot
    std::size_t m_last{0}; ///< the slot handed out last
    uint64_t m_made{0};
    uint64_t m_reused{0};
};

} // namespace fabemu

#endif // FABEMU_PACKET_RECYCLER_H
