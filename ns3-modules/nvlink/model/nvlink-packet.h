/*
 * An NVLink packet as the model sees it: a plain value (no ns3::Packet, no
 * allocation) carrying up to NvlinkLink::MaxPayload bytes of one transfer
 * between two GPUs. Its header size is not public (docs/nvlink.md): the link
 * charges each packet NvlinkLink::HeaderBytes, calibrated to NCCL's usable
 * per-link bandwidth. NVLS packets (in-switch reduction and multicast) say what
 * the NVSwitch does with them.
 */
#ifndef FABEMU_NVLINK_PACKET_H
#define FABEMU_NVLINK_PACKET_H

#include <cstdint>

namespace ns3
{

/// What an NVSwitch does with a packet.
enum class NvlinkKind : uint8_t
{
    Unicast,   ///< forward to dst
    Reduce,    ///< NVLS: one of fanout contributions, summed in the switch, the sum to dst
    Multicast, ///< NVLS: copied to every GPU of the switch's group `transfer`
};

/// The src of a packet an NVSwitch made by summing contributions (NVLS).
constexpr uint32_t kNvlinkSwitchSource = 0xFFFFFFFFu;

struct NvlinkPacket
{
    uint32_t src{0};      ///< the sending GPU
    uint32_t dst{0};      ///< the receiving GPU
    uint64_t transfer{0}; ///< the transfer it belongs to (the sender's id)
    uint32_t payload{0};  ///< data bytes
    uint64_t bytes{0};    ///< the whole transfer's bytes (packets may arrive out of order)
    uint64_t seq{0};      ///< link-level sequence number (per direction, unwrapped)
    NvlinkKind kind{NvlinkKind::Unicast};
    uint64_t offset{0}; ///< NVLS: the payload's first byte within the transfer
    uint32_t fanout{0}; ///< Reduce: how many contributions make the sum
    uint32_t extra{0};  ///< wire bytes beyond payload and header (NVLS engine overhead)
};

} // namespace ns3

#endif
