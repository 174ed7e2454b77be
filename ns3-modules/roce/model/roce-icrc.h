/*
 * The RoCEv2 Invariant CRC (IBA annex A17.3.3), computed as Linux rxe does
 * (drivers/infiniband/sw/rxe/rxe_icrc.c): CRC-32 over 8 bytes of 0xFF standing
 * for the masked LRH, then the IP and UDP headers and the BTH with the
 * variant fields masked to all ones, then the rest of the transport headers,
 * the payload and its pad. Stored little-endian after the pad.
 */
#ifndef FABEMU_ROCE_ICRC_H
#define FABEMU_ROCE_ICRC_H

#include <cstddef>
#include <cstdint>
#include <optional>

namespace ns3
{

/**
 * \brief ICRC of a RoCEv2 packet.
 * \param l3 the first byte of the IPv4 or IPv6 header
 * \param len bytes from \p l3 to the end of the pad, the ICRC itself excluded
 * \return the ICRC, or nullopt when \p l3 does not hold IPv4/IPv6 + UDP + BTH
 *
 * Masked (set to all ones) before the CRC: IPv4 TOS, TTL and header checksum;
 * IPv6 traffic class, flow label and hop limit; the UDP checksum; and the
 * BTH byte that carries FECN and BECN. So switches may mark ECN and routers
 * decrement TTL without invalidating the ICRC.
 */
std::optional<uint32_t> ComputeRoceIcrc(const uint8_t* l3, size_t len);

/// The ICRC of \p headerLen bytes of headers at \p l3 followed by \p zeros zero
/// bytes (payload and pad): simulated hosts send zero payloads they never allocate.
std::optional<uint32_t> ComputeRoceIcrcWithZeros(const uint8_t* l3, size_t headerLen, size_t zeros);

/// Reads the 4-byte little-endian ICRC stored at \p p.
uint32_t ReadIcrc(const uint8_t* p);

/// Writes \p icrc little-endian at \p p, as rxe does.
void WriteIcrc(uint8_t* p, uint32_t icrc);

} // namespace ns3

#endif
