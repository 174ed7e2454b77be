// Fuzz target: raw Ethernet frames as an endpoint's tap delivers them, through the edge
// as EdgePort does it: EdgeFrameFilter (the RoCEv2/PFC/ARP/IP parse, ICRC checked, drops
// by reason), then for an admitted frame the parse again and the NeighbourResponder's ARP
// and neighbour-discovery answers; beside it the RoCEv2 switch's prefix parse
// (ParseFrameHeaders on the first kFrameHeaderPrefix bytes), which must agree with the
// whole-frame parse. Nothing on this path throws: any exception is a finding.
#include "emulator/edge/edge-frame-filter.h"
#include "emulator/edge/neighbour-responder.h"
#include "fuzz/capture-hosts.h"
#include "fuzz/fuzz-check.h"

#include "ns3/roce-frame.h"
#include "ns3/roce-icrc.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

using namespace ns3;

namespace
{

/// Every field but the ICRC, which the prefix parse does not read.
bool
SameHeaders(const ParsedFrame& a, const ParsedFrame& b)
{
    return a.kind == b.kind && a.error == b.error && a.vlan == b.vlan && a.pcp == b.pcp &&
           a.vid == b.vid && a.etherType == b.etherType && a.ipVersion == b.ipVersion &&
           a.l3Offset == b.l3Offset && a.l4Offset == b.l4Offset && a.dscp == b.dscp &&
           a.ecn == b.ecn && a.ipProtocol == b.ipProtocol && a.srcIp == b.srcIp &&
           a.dstIp == b.dstIp && a.srcPort == b.srcPort && a.dstPort == b.dstPort &&
           a.bthOffset == b.bthOffset && a.opcode == b.opcode && a.destQp == b.destQp &&
           a.psn == b.psn && a.fecn == b.fecn && a.becn == b.becn &&
           a.payloadOffset == b.payloadOffset && a.payloadLength == b.payloadLength &&
           a.pfcClassEnable == b.pfcClassEnable && a.pfcQuanta == b.pfcQuanta;
}

/// Offsets of a frame the parser accepted lie inside it.
void
CheckOffsets(const ParsedFrame& f, size_t len)
{
    if (f.kind == FrameKind::Ip || f.kind == FrameKind::Roce)
    {
        FUZZ_CHECK(f.l3Offset < f.l4Offset && f.l4Offset <= len, "IP offsets outside the frame");
    }
    if (f.kind == FrameKind::Roce)
    {
        FUZZ_CHECK(f.bthOffset + 12 <= f.payloadOffset &&
                       f.payloadOffset + f.payloadLength + kIcrcSize <= len,
                   "RoCEv2 offsets outside the frame");
    }
}

/// Where a RoCEv2 frame's IP datagram ends (its ICRC is the last 4 bytes before).
size_t
L3End(const uint8_t* frame, const ParsedFrame& f)
{
    const uint8_t* ip = frame + f.l3Offset;
    return f.ipVersion == 4 ? f.l3Offset + (size_t(ip[2]) << 8 | ip[3])
                            : f.l3Offset + 40 + (size_t(ip[4]) << 8 | ip[5]);
}

/// What EdgePort::Take does with an admitted frame, parsed by the filter, up to the uplink.
void
Take(const std::vector<uint8_t>& frame, const ParsedFrame& f)
{
    static const fabemu::NeighbourResponder neighbours(CaptureHosts());
    if (f.vlan)
    {
        return; // tagged_from_endpoint
    }
    const auto out = neighbours.Handle(frame.data(), frame.size(), f);
    if (out.verdict == fabemu::NeighbourResponder::Verdict::Keep)
    {
        FUZZ_CHECK(!out.reason.empty(), "a frame kept at the edge without a reason");
    }
    if (out.verdict != fabemu::NeighbourResponder::Verdict::Answer)
    {
        return;
    }
    // The answer goes back to the endpoint: it must be what it claims to be.
    const ParsedFrame r = ParseEthernetFrame(out.reply.data(), out.reply.size(), false);
    if (out.arp)
    {
        FUZZ_CHECK(out.reply.size() == 42 && r.kind == FrameKind::Arp, "a malformed ARP reply");
    }
    else
    {
        FUZZ_CHECK(out.reply.size() == 86 && r.kind == FrameKind::Ip && r.ipVersion == 6 &&
                       r.ipProtocol == 58,
                   "a malformed neighbour advertisement");
    }
}

void
Classify(fabemu::EdgeFrameFilter& filter, const std::vector<uint8_t>& frame)
{
    const auto v = filter.Classify(frame.data(), frame.size());
    const bool admissible = v.frame.kind == FrameKind::Roce || v.frame.kind == FrameKind::Arp ||
                            v.frame.kind == FrameKind::Ip;
    FUZZ_CHECK(v.admit == (admissible && v.reason.empty()), "the filter's verdict and its parse");
    FUZZ_CHECK(v.admit || !v.reason.empty(), "a drop without a reason");
    if (v.admit)
    {
        CheckOffsets(v.frame, frame.size());
        Take(frame, v.frame);
    }
}

} // namespace

extern "C" int
LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    static fabemu::EdgeFrameFilter filter(4200); // the largest IP MTU an edge has (IpMtuForPathMtu)
    const std::vector<uint8_t> frame(data, data + size);
    Classify(filter, frame);

    // The switch reads a prefix only; it must see the headers the whole frame has.
    const ParsedFrame whole = ParseEthernetFrame(data, size, false);
    CheckOffsets(whole, size);
    const ParsedFrame prefix =
        ParseFrameHeaders(data, std::min(size, kFrameHeaderPrefix), size, false);
    FUZZ_CHECK(SameHeaders(whole, prefix), "the prefix parse disagrees with the whole frame's");

    // A RoCEv2 frame whose only fault is its ICRC: with the right one it is admitted.
    if (whole.kind == FrameKind::Roce)
    {
        const size_t end = L3End(data, whole);
        const auto icrc = ComputeRoceIcrc(data + whole.l3Offset, end - kIcrcSize - whole.l3Offset);
        FUZZ_CHECK(icrc.has_value(), "no ICRC for a frame that parsed as RoCEv2");
        std::vector<uint8_t> fixed = frame;
        WriteIcrc(fixed.data() + end - kIcrcSize, *icrc);
        const ParsedFrame again = ParseEthernetFrame(fixed.data(), fixed.size(), true);
        FUZZ_CHECK(again.kind == FrameKind::Roce, "a RoCEv2 frame with its own ICRC refused");
        if (fixed != frame)
        {
            Classify(filter, fixed);
        }
    }
    return 0;
}
