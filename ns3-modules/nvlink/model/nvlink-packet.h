/*
 * An NVLink packet as the model sees it: a plain value (no ns3::Packet, no
 * allocation) carrying up to NvlinkLink::MaxPayload bytes of one transfer
 * between two GPUs. Its header size is not public (docs/nvlink.md): the link
 * charges each packet NvlinkLink::HeaderBytes, calibrated to NCCL's usable
 * per-link bandwidth.
 */
#ifndef FABEMU_NVLINK_PACKET_H
#define FABEMU_NVLINK_PACKET_H

#include <cstdint>

namespace ns3
{

struct NvlinkPacket
{
    uint32_t src{0};      ///< the sending GPU
    uint32_t dst{0};      ///< the receiving GPU
    uint64_t transfer{0}; ///< the transfer it belongs to (the sender's id)
    uint32_t payload{0};  ///< data bytes
    uint64_t bytes{0};    ///< the whole transfer's bytes (packets may arrive out of order)
    uint64_t seq{0};      ///< link-level sequence number (per direction, unwrapped)
};

} // namespace ns3

#endif
