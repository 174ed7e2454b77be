/*
 * Byte-level view of Ethernet frames as a RoCEv2 fabric sees them: RoCEv2
 * (UDP 4791 over IPv4 or IPv6, with or without an 802.1Q tag), PFC, ARP and
 * other IP traffic. The parser never reads past the frame and names what is
 * wrong with a malformed one; the builder writes frames byte-exact as rxe does.
 */
#ifndef FABEMU_ROCE_FRAME_H
#define FABEMU_ROCE_FRAME_H

#include "ns3/rdma-types.h"

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace ns3
{

constexpr uint16_t kRoceV2UdpPort = 4791;
constexpr uint16_t kEtherTypeIpv4 = 0x0800;
constexpr uint16_t kEtherTypeArp = 0x0806;
constexpr uint16_t kEtherTypeVlan = 0x8100;
constexpr uint16_t kEtherTypeIpv6 = 0x86dd;
constexpr uint16_t kEtherTypeMacControl = 0x8808;
constexpr size_t kEthernetHeaderSize = 14;
constexpr size_t kVlanTagSize = 4;
constexpr size_t kIcrcSize = 4;

/// What a frame is, as far as the fabric cares.
enum class FrameKind
{
    Roce,     ///< RoCEv2: UDP 4791 with a known BTH opcode
    Pfc,      ///< 802.1Qbb priority flow control (MAC control, opcode 0x0101)
    Arp,      ///< ARP
    Ip,       ///< other IPv4/IPv6 (TCP for perftest's handshake, ND, iWARP, ...)
    Malformed ///< see ParsedFrame::error
};

/// Why a frame is malformed; named so drops can be counted by reason.
enum class FrameError
{
    None,
    Runt,                 ///< shorter than an Ethernet header
    UnsupportedEtherType, ///< not IPv4, IPv6, ARP, VLAN or MAC control
    TruncatedVlan,
    TruncatedIp, ///< shorter than its IP header (or IP total length)
    BadIpHeader, ///< wrong version or IHL
    TruncatedUdp,
    TruncatedBth,  ///< UDP 4791 but no room for BTH + headers + ICRC
    UnknownOpcode, ///< BTH opcode no transport defines
    BadIcrc,
    BadMacControl, ///< MAC control frame that is not a well-formed PFC
};

/// Short stable name of a frame error, e.g. "runt", "bad_icrc".
const char* FrameErrorName(FrameError e);

/// What the parser found. Offsets are from the first byte of the frame.
struct ParsedFrame
{
    FrameKind kind{FrameKind::Malformed};
    FrameError error{FrameError::None};
    bool vlan{false};
    uint8_t pcp{0}; ///< 802.1Q priority code point
    uint16_t vid{0};
    uint16_t etherType{0};
    uint8_t ipVersion{0};
    size_t l3Offset{0};
    size_t l4Offset{0}; ///< first byte after the IP header (IPv4 options included)
    uint8_t dscp{0};
    uint8_t ecn{0}; ///< 0 not-ECT, 1 ECT(1), 2 ECT(0), 3 CE
    uint8_t ipProtocol{0};
    std::array<uint8_t, 16> srcIp{}; ///< IPv4 in the first four bytes
    std::array<uint8_t, 16> dstIp{};
    uint16_t srcPort{0};
    uint16_t dstPort{0};
    // RoCEv2 only:
    size_t bthOffset{0};
    uint8_t opcode{0};
    uint32_t destQp{0};
    uint32_t psn{0};
    bool fecn{false};
    bool becn{false};
    size_t payloadOffset{0};
    size_t payloadLength{0}; ///< without pad
    uint32_t icrc{0};
    // PFC only:
    uint16_t pfcClassEnable{0};
    std::array<uint16_t, 8> pfcQuanta{};
};

/**
 * \brief Parses an Ethernet frame (no preamble, no FCS).
 * \param checkIcrc verify the ICRC of RoCEv2 frames (error BadIcrc when wrong)
 */
ParsedFrame ParseEthernetFrame(const uint8_t* frame, size_t len, bool checkIcrc = true);

/**
 * \brief Parses the headers of a frame of \p len bytes of which only the first
 * \p readable are at hand (the switch's fast path: it copies a prefix, never
 * the payload). Lengths are checked against \p len; the ICRC is read and
 * checked only when the whole frame is readable.
 */
ParsedFrame ParseFrameHeaders(const uint8_t* frame, size_t readable, size_t len,
                              bool checkIcrc = false);

/// Bytes of a frame's prefix that hold every header ParseFrameHeaders reads
/// (Ethernet, VLAN, IPv4 with options or IPv6, UDP, BTH).
constexpr size_t kFrameHeaderPrefix = 18 + 60 + 8 + 12;

/// Everything needed to write one RoCEv2 packet.
struct RoceFrameSpec
{
    std::array<uint8_t, 6> dstMac{};
    std::array<uint8_t, 6> srcMac{};
    bool vlan{true};
    uint8_t pcp{3};
    uint16_t vid{0};
    uint32_t srcIpv4{0}; ///< host order
    uint32_t dstIpv4{0};
    uint8_t dscp{26};
    uint8_t ecn{2}; ///< ECT(0)
    uint8_t ttl{64};
    uint16_t ipId{0};
    uint16_t srcPort{49152};
    /// BTH, extension headers and payload length: written by the transport's own
    /// writer (WriteTransportHeaders), the pad count from the payload length.
    TransportPacket transport;
    uint8_t payloadFill{0};
};

/// Bytes of Ethernet, VLAN, IPv4, UDP, BTH and extension headers in a frame of \p spec.
size_t RoceV2HeaderBytes(const RoceFrameSpec& spec);

/// Bytes (no FCS) of an RDMA WRITE frame over IPv4 carrying \p payload bytes: Ethernet,
/// 802.1Q if \p vlan, IPv4, UDP, BTH, the RETH if it is a message's \p first packet,
/// payload, pad and ICRC.
uint32_t RoceV2WriteFrameBytes(uint32_t payload, bool vlan, bool first);

/// Writes those headers (lengths already counting payload, pad and ICRC) at \p out.
void WriteRoceV2Headers(const RoceFrameSpec& spec, uint8_t* out);

/// Writes a RoCEv2-over-IPv4 frame with a valid IP checksum, UDP checksum 0
/// (as rxe sends) and the ICRC.
std::vector<uint8_t> BuildRoceV2Frame(const RoceFrameSpec& spec);

/// Writes the IPv4 header checksum of the header at \p ip (IHL words).
void FixIpv4Checksum(uint8_t* ip);

} // namespace ns3

#endif
