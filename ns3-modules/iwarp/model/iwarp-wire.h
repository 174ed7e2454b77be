/*
 * The iWARP wire formats (RFC 5040 RDMAP, RFC 5041 DDP, RFC 5044 MPA, RFC 6581
 * MPA revision 2), as bytes: what the Soft-iWARP driver puts on a TCP stream
 * and Wireshark decodes as iwarp_mpa / iwarp_ddp_rdmap.
 *
 * An FPDU is | ULPDU length (2) | ULPDU | pad to 4 | CRC32c (4) |, with a
 * 4-byte marker (16 reserved bits, 16-bit FPDUPTR back to the FPDU's start)
 * at every 512th octet of the stream when markers are negotiated. The ULPDU is
 * a DDP segment: tagged (STag, tagged offset) or untagged (queue number, MSN,
 * message offset), its second byte the RDMAP control byte with the opcode.
 */
#ifndef FABEMU_IWARP_WIRE_H
#define FABEMU_IWARP_WIRE_H

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ns3
{

/// CRC32c (Castagnoli, iSCSI's CRC, RFC 3720): the standard value (preset and final inversion).
uint32_t Crc32c(const uint8_t* data, size_t len);
/// Continues a running CRC32c register (start from 0xffffffff; invert at the end), by ISA-L.
uint32_t Crc32cUpdate(uint32_t reg, const uint8_t* data, size_t len);

enum class RdmapOpcode : uint8_t
{
    Write = 0,
    ReadRequest = 1,
    ReadResponse = 2,
    Send = 3,
    SendInvalidate = 4,
    SendSe = 5,
    SendSeInvalidate = 6,
    Terminate = 7,
};

const char* RdmapOpcodeName(uint8_t opcode);

/// Untagged queue numbers (RFC 5040 5.1).
constexpr uint32_t kQnSend = 0;
constexpr uint32_t kQnReadRequest = 1;
constexpr uint32_t kQnTerminate = 2;

constexpr uint32_t kMpaMarkerSpacing = 512;
constexpr uint32_t kMpaMarkerBytes = 4;
constexpr uint32_t kMpaCrcBytes = 4;
constexpr uint32_t kMpaLengthBytes = 2;
constexpr uint32_t kDdpTaggedHeaderBytes = 14;
constexpr uint32_t kDdpUntaggedHeaderBytes = 18;
constexpr uint32_t kRdmaReadRequestBytes = 28;
constexpr uint32_t kTerminateHeaderBytes = 4;

/// The error a Terminate message reports (RFC 5040 7.2, RFC 5041 7, RFC 5044 8).
struct TerminateCause
{
    enum Layer : uint8_t
    {
        Rdmap = 0,
        Ddp = 1,
        Llp = 2, ///< MPA
    };
    uint8_t layer{Rdmap};
    uint8_t etype{0};
    uint8_t ecode{0};

    bool operator==(const TerminateCause& o) const
    {
        return layer == o.layer && etype == o.etype && ecode == o.ecode;
    }
    std::string ToString() const;
};

namespace terminate
{
// RDMAP error types and codes (RFC 5040 table 7.2)
constexpr uint8_t kRdmapRemoteProtection = 1;
constexpr uint8_t kRdmapRemoteOperation = 2;
constexpr uint8_t kRdmapInvalidStag = 0x00;
constexpr uint8_t kRdmapBaseBounds = 0x01;
constexpr uint8_t kRdmapVersion = 0x05;
constexpr uint8_t kRdmapOpcode = 0x06;
// DDP error types and codes (RFC 5041 7.2)
constexpr uint8_t kDdpTagged = 1;
constexpr uint8_t kDdpUntagged = 2;
constexpr uint8_t kDdpTaggedInvalidStag = 0x00;
constexpr uint8_t kDdpTaggedBaseBounds = 0x01;
constexpr uint8_t kDdpTaggedVersion = 0x04;
constexpr uint8_t kDdpUntaggedInvalidQn = 0x01;
constexpr uint8_t kDdpUntaggedInvalidMsn = 0x03;
constexpr uint8_t kDdpUntaggedInvalidMo = 0x04;
constexpr uint8_t kDdpUntaggedTooLong = 0x05;
constexpr uint8_t kDdpUntaggedVersion = 0x06;
// MPA error codes (RFC 5044 8), error type 0
constexpr uint8_t kMpaCrc = 0x02;
constexpr uint8_t kMpaFpduStart =
    0x03; ///< marker and ULPDU length disagree, or a length that cannot be
constexpr uint8_t kMpaRequestReply = 0x04;
} // namespace terminate

/// One DDP segment with its RDMAP header: the ULPDU of one FPDU.
struct DdpSegment
{
    uint8_t opcode{0}; ///< RDMAP opcode (RdmapOpcode), 4 bits
    bool tagged{false};
    bool last{true};
    uint8_t ddpVersion{1};
    uint8_t rdmapVersion{1};
    // Tagged buffer model
    uint32_t stag{0};
    uint64_t to{0};
    // Untagged buffer model
    uint32_t rsvdUlp{0}; ///< Send with Invalidate: the STag to invalidate
    uint32_t qn{0};
    uint32_t msn{0};
    uint32_t mo{0};
    // RDMA Read Request
    uint32_t sinkStag{0};
    uint64_t sinkTo{0};
    uint32_t readSize{0};
    uint32_t srcStag{0};
    uint64_t srcTo{0};
    // Terminate
    TerminateCause cause;

    std::vector<uint8_t> payload;

    /// DDP and RDMAP header bytes (the MPA length field not included).
    uint32_t HeaderBytes() const;
    void Serialize(std::vector<uint8_t>& out) const;

    /// Whether \p opcode is an RDMAP opcode this model knows (0..7).
    static bool KnownOpcode(uint8_t opcode) { return opcode <= 7; }
    /// Header bytes an opcode's segments carry; 0 for an unknown opcode.
    static uint32_t HeaderBytesFor(uint8_t opcode);
    /// Parses a ULPDU. On a protocol violation returns nothing and sets \p error to
    /// the Terminate cause RFC 5040/5041 prescribe for it.
    static std::optional<DdpSegment> Parse(const uint8_t* data, size_t len, TerminateCause& error);
};

/// An MPA Request or Reply frame (RFC 5044 7.1; revision 2 per RFC 6581).
struct MpaRequestReply
{
    bool reply{false};
    bool markers{false}; ///< M: the sender wants markers on what it receives
    bool crc{true};      ///< C: the sender wants CRCs
    bool reject{false};  ///< R: (reply) the connection is refused
    uint8_t revision{2};
    bool enhanced{true}; ///< revision 2: IRD/ORD lead the private data
    uint16_t ird{1};
    uint16_t ord{1};
    std::vector<uint8_t> privateData; ///< after IRD/ORD when enhanced

    std::vector<uint8_t> Serialize() const;
    /// Bytes the frame takes, once its first 20 are known; 0 if they are not a frame.
    static size_t FrameBytes(const uint8_t* data, size_t len);
    /// Parses a whole frame; nothing if the key, revision or length is wrong.
    static std::optional<MpaRequestReply> Parse(const uint8_t* data, size_t len,
                                                std::string& error);
};

/// Frames ULPDUs into FPDUs on one direction of a stream.
class MpaFramer
{
  public:
    MpaFramer(bool markers, bool crc) : m_markers(markers), m_crc(crc) {}
    /// Appends the FPDU carrying \p ulpdu to \p out; the stream advances past it.
    void Frame(const std::vector<uint8_t>& ulpdu, std::vector<uint8_t>& out);
    /// Largest ULPDU whose FPDU fits \p mss octets wherever it starts in the stream.
    uint32_t MaxUlpdu(uint32_t mss) const;
    /// Octets of the FPDU stream framed so far.
    uint64_t StreamBytes() const { return m_pos; }
    bool Markers() const { return m_markers; }
    bool Crc() const { return m_crc; }

  private:
    void Put(std::vector<uint8_t>& out, uint8_t byte, uint64_t fpduStart);

    bool m_markers;
    bool m_crc;
    uint64_t m_pos{0};
};

/// Takes the FPDU stream as TCP delivers it and gives back whole, checked ULPDUs.
class MpaDeframer
{
  public:
    MpaDeframer(bool markers, bool crc, uint32_t maxUlpdu)
        : m_markers(markers),
          m_crc(crc),
          m_maxUlpdu(maxUlpdu)
    {
    }
    void Push(const uint8_t* data, size_t len);
    /// The next whole ULPDU, if there is one; on a framing error (bad CRC, a length
    /// that cannot be, a marker pointing elsewhere) nothing, with \p error set.
    std::optional<std::vector<uint8_t>> Next(std::optional<TerminateCause>& error);
    size_t Buffered() const { return m_buf.size() - m_head; }
    uint64_t CrcErrors() const { return m_crcErrors; }

  private:
    /// Reads \p n logical octets (markers skipped and checked) from raw offset \p raw.
    /// Returns false if not enough are buffered; \p bad is set on a wrong marker.
    bool Read(size_t& raw, uint64_t fpduStart, size_t n, uint8_t* dst, bool& bad) const;

    bool m_markers;
    bool m_crc;
    uint32_t m_maxUlpdu;
    std::vector<uint8_t> m_buf;
    size_t m_head{0};  ///< first unconsumed octet of m_buf
    uint64_t m_pos{0}; ///< stream position of m_buf[m_head]
    uint64_t m_crcErrors{0};
};

} // namespace ns3

#endif
