/*
 * InfiniBand link-layer formats (IBA vol. 1 ch. 7 and 8): the Local Route Header
 * in front of every packet, the optional Global Route Header after it, the
 * 6-byte flow-control packet (FCP) that carries credits, and the CRC-16 that
 * ends both (VCRC, LPCRC).
 */
#ifndef FABEMU_IB_HEADERS_H
#define FABEMU_IB_HEADERS_H

#include <array>
#include <cstddef>
#include <cstdint>

namespace ns3
{

/// Bytes of framing around the transport headers: LRH 8 in front, ICRC 4 and VCRC 2 behind.
constexpr uint32_t kIbLrhBytes = 8;
constexpr uint32_t kIbIcrcBytes = 4;
constexpr uint32_t kIbVcrcBytes = 2;
constexpr uint32_t kIbFcpBytes = 6;
constexpr uint32_t kIbGrhBytes = 40;
/// LRH link next header: what follows the LRH.
constexpr uint8_t kIbLnhLocal = 2;  ///< BTH
constexpr uint8_t kIbLnhGlobal = 3; ///< GRH, then BTH
/// A credit: 64 bytes of receive buffer.
constexpr uint32_t kIbCreditBytes = 64;
/// Flow-control counters are 12 bits.
constexpr uint32_t kIbCounterMask = 0xfff;

struct LrhHeader
{
    uint8_t vl{0};   ///< 4 bits
    uint8_t lver{0}; ///< 4 bits, link version 0
    uint8_t sl{0};   ///< 4 bits, service level
    uint8_t lnh{2};  ///< 2 bits: 2 = IBA local (BTH next), 3 = IBA global (GRH next)
    uint16_t dlid{0};
    uint16_t pktLen{0}; ///< 11 bits, in 4-byte words, LRH through ICRC (not VCRC)
    uint16_t slid{0};

    void Write(uint8_t* out) const;
    static LrhHeader Read(const uint8_t* in);
};

/// The Global Route Header (IBA 8.3): IPv6's layout, next header 0x1B (BTH).
struct GrhHeader
{
    uint8_t tClass{0};
    uint32_t flowLabel{0}; ///< 20 bits
    uint16_t payLen{0};    ///< bytes after the GRH up to and including the ICRC
    uint8_t nxtHdr{0x1b};
    uint8_t hopLmt{0xff};
    std::array<uint8_t, 16> sgid{};
    std::array<uint8_t, 16> dgid{};

    void Write(uint8_t* out) const;
    static GrhHeader Read(const uint8_t* in);
};

/// The port GID of a LID in this model's subnet: the default subnet prefix fe80::/64
/// and a GUID made from the LID.
std::array<uint8_t, 16> IbGidOfLid(uint16_t lid);

/// A flow-control packet: the sender's FCTBS and its receive side's FCCL for one VL.
struct FcpHeader
{
    uint8_t op{0}; ///< 0 normal, 1 initialization
    uint16_t fctbs{0};
    uint8_t vl{0};
    uint16_t fccl{0};

    /// Writes 6 bytes, the LPCRC included.
    void Write(uint8_t* out) const;
    /// False when the LPCRC does not match.
    static bool Read(const uint8_t* in, FcpHeader& h);
};

/// IBA's CRC-16 (polynomial 0x100B) over \p len bytes: the VCRC and the LPCRC.
uint16_t IbCrc16(const uint8_t* data, size_t len);

/**
 * \brief The invariant CRC of a whole packet (IBA 7.8.1): CRC-32 over LRH to the end
 * of the payload and pad, with the fields that change hop by hop taken as ones: the
 * LRH's VL, the GRH's TClass, FlowLabel and HopLmt, the BTH's resv8a byte (FECN,
 * BECN). Sent least significant octet first, as RoCEv2's (which is the same CRC with
 * the whole LRH taken as ones).
 * \param packet LRH first; \param len bytes up to the ICRC (not included).
 */
uint32_t IbIcrc(const uint8_t* packet, size_t len);

/// Fills in the ICRC and the VCRC (over LRH to ICRC, this hop's VL included) of a
/// packet of \p len bytes, LRH first, ICRC and VCRC last.
void IbFillCrcs(uint8_t* packet, size_t len);

} // namespace ns3

#endif
