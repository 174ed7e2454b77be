/*
 * CXL's link arithmetic: versions, rates, flit formats and how CXL.mem
 * messages fill the 16-byte slots of a flit (docs/cxl.md, "Flits").
 *
 * - 68-byte flits (CXL 1.1 and 2.0, and 3.x at 32 GT/s and below): four
 *   16-byte slots, a 2-byte protocol ID and a 2-byte CRC, over PCIe 5.0's
 *   128b/130b encoding.
 * - 256-byte flits (CXL 3.x at 64 GT/s, PCIe 6.0's PAM4 flit mode): 16 bytes
 *   of header, CRC and FEC leave 15 slots; the latency-optimised form spends
 *   20 bytes and leaves 14 whole slots (its 12-byte remainder is not used
 *   here, an approximation).
 * - CCIX as a parameter set: PCIe 4.0 with its 25 GT/s extended speed mode,
 *   carried here in 68-byte flits (docs/cxl.md says what that approximates).
 */
#ifndef FABEMU_CXL_SPEC_H
#define FABEMU_CXL_SPEC_H

#include <cstdint>
#include <string>

namespace ns3
{

/// The four CXL.mem message classes of a Type-3 device.
enum class CxlMessageType : uint8_t
{
    M2sReq, ///< host to memory: a read (MemRd) without data
    M2sRwD, ///< host to memory: a write with its 64-byte line
    S2mNdr, ///< memory to host: no data response (a write's completion)
    S2mDrs, ///< memory to host: data response with the 64-byte line
    Io,     ///< CXL.io: a PCIe memory-write TLP (a device's DMA), in flits of its own
};

/// Slots a CXL.io memory-write TLP of \p payload bytes fills: its wire bytes as the PCIe
/// model frames a 4DW-header TLP at 32 GT/s (PcieTlpWireBytes), in 16-byte slots.
uint32_t CxlIoSlots(uint32_t payload);

/// "M2S Req", "M2S RwD", "S2M NDR", "S2M DRS" or "CXL.io".
std::string CxlMessageName(CxlMessageType t);
/// Headers of \p t that one 16-byte slot holds: 128 bits over the message's header
/// (M2S Req and RwD 87 bits, S2M NDR 30, S2M DRS 40, CXL 2.0's field widths).
uint32_t CxlHeadersPerSlot(CxlMessageType t);
/// Data slots the message carries after its header: 4 (a 64-byte line) or 0.
uint32_t CxlDataSlots(CxlMessageType t);

/// A flit format.
enum class CxlFlitMode : uint8_t
{
    Flit68,      ///< 68 bytes: 4 slots
    Flit256,     ///< 256 bytes, standard: 15 slots
    Flit256LOpt, ///< 256 bytes, latency-optimised: 14 slots
};

/// The link layer of one CXL (or CCIX) version at one rate and flit format.
struct CxlLinkSpec
{
    std::string version;     ///< "1.1", "2.0", "3.0", "3.1" or "ccix"
    double gigaTransfers{0}; ///< per lane
    uint32_t lanes{0};
    CxlFlitMode mode{CxlFlitMode::Flit68};

    /// "" when the version, rate, width and flit format go together, else the problem
    /// (a 256-byte flit below 64 GT/s, 64 GT/s before CXL 3.0, ...).
    std::string Check() const;
    /// Wire bytes of one flit (68 or 256).
    uint32_t FlitBytes() const;
    /// 16-byte slots of one flit that carry messages.
    uint32_t Slots() const;
    /// Bytes per second on the wire after line encoding (128b/130b below 64 GT/s).
    double BytesPerSecond() const;
    /// Seconds to send one flit.
    double FlitSeconds() const { return FlitBytes() / BytesPerSecond(); }
    /// Payload bytes per second of back-to-back 64-byte lines of \p t (DRS or RwD): the
    /// flit arithmetic, slots x 16 / flit bytes, less the header slots.
    double LineBytesPerSecond(CxlMessageType t) const;
};

/// The fastest rate of \p version (32 GT/s for 1.1 and 2.0, 64 for 3.x, 25 for ccix; 0 if
/// unknown), and the flit format it uses there.
double CxlMaxGigaTransfers(const std::string& version);
CxlFlitMode CxlDefaultFlitMode(double gigaTransfers);
/// "68", "256" or "256-lopt" (and back; false if \p name is none of them).
std::string CxlFlitModeName(CxlFlitMode m);
bool CxlParseFlitMode(const std::string& name, CxlFlitMode* m);

} // namespace ns3

#endif
