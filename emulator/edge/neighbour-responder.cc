#include "emulator/edge/neighbour-responder.h"

#include <cstring>

namespace fabemu
{

using namespace ns3;

std::array<uint8_t, 16>
EndpointAddress::LinkLocal() const
{
    return {
        0xfe,   0x80,   0,    0,    0,      0,      0,     0, static_cast<uint8_t>(mac[0] ^ 0x02),
        mac[1], mac[2], 0xff, 0xfe, mac[3], mac[4], mac[5]};
}

namespace
{

constexpr uint8_t kIcmpv6 = 58;
constexpr uint8_t kNeighbourSolicitation = 135;
constexpr uint8_t kNeighbourAdvertisement = 136;

/// The ICMPv6 checksum (RFC 4443 2.3) over the pseudo-header and \p msg.
uint16_t
Icmpv6Checksum(const uint8_t* src, const uint8_t* dst, const uint8_t* msg, size_t len)
{
    uint32_t sum = 0;
    auto add = [&sum](const uint8_t* p, size_t n) {
        for (size_t i = 0; i + 1 < n; i += 2)
        {
            sum += static_cast<uint32_t>(p[i] << 8 | p[i + 1]);
        }
        if (n % 2)
        {
            sum += static_cast<uint32_t>(p[n - 1] << 8);
        }
    };
    add(src, 16);
    add(dst, 16);
    sum += static_cast<uint32_t>(len);
    sum += kIcmpv6; // next header
    add(msg, len);
    while (sum >> 16)
    {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    return static_cast<uint16_t>(~sum);
}

NeighbourResponder::Outcome
Keep(std::string reason)
{
    NeighbourResponder::Outcome o;
    o.verdict = NeighbourResponder::Verdict::Keep;
    o.reason = std::move(reason);
    return o;
}

} // namespace

NeighbourResponder::NeighbourResponder(std::vector<EndpointAddress> directory)
    : m_directory(std::move(directory))
{
}

NeighbourResponder::Outcome
NeighbourResponder::Handle(const uint8_t* frame, size_t len, const ParsedFrame& f) const
{
    // Every frame comes here; only ARP and neighbour discovery, rare, are copied.
    if (f.kind == FrameKind::Arp)
    {
        return AnswerArp(std::vector<uint8_t>(frame, frame + len));
    }
    if (f.ipVersion != 6 || f.ipProtocol != kIcmpv6 || len < f.l4Offset + 24)
    {
        return {};
    }
    const uint8_t type = frame[f.l4Offset];
    if (type < 133 || type > 137)
    {
        return {}; // echo and the rest are routed like any IPv6
    }
    return AnswerSolicitation(std::vector<uint8_t>(frame, frame + len), f);
}

NeighbourResponder::Outcome
NeighbourResponder::AnswerArp(const std::vector<uint8_t>& req) const
{
    // Ethernet(14) + ARP(28): htype 1, ptype 0x0800, hlen 6, plen 4, op 1 = request.
    if (req.size() < 42 || req[14] != 0 || req[15] != 1 || req[16] != 0x08 || req[17] != 0 ||
        req[20] != 0 || req[21] != 1)
    {
        return Keep("arp_not_a_request");
    }
    const uint32_t target =
        static_cast<uint32_t>(req[38]) << 24 | req[39] << 16 | req[40] << 8 | req[41];
    for (const auto& e : m_directory)
    {
        if (e.ipv4 != target)
        {
            continue;
        }
        Outcome o;
        o.verdict = Verdict::Answer;
        o.arp = true;
        std::vector<uint8_t>& reply = o.reply;
        reply.assign(42, 0);
        std::memcpy(reply.data(), req.data() + 6, 6);   // to the asker
        std::memcpy(reply.data() + 6, e.mac.data(), 6); // from the target
        reply[12] = 0x08;
        reply[13] = 0x06;
        std::memcpy(reply.data() + 14, req.data() + 14, 6); // htype, ptype, hlen, plen
        reply[21] = 2;                                      // reply
        std::memcpy(reply.data() + 22, e.mac.data(), 6);    // sender: the target
        std::memcpy(reply.data() + 28, req.data() + 38, 4);
        std::memcpy(reply.data() + 32, req.data() + 22, 10); // target: the asker's MAC and IP
        return o;
    }
    return Keep("arp_unknown_target");
}

NeighbourResponder::Outcome
NeighbourResponder::AnswerSolicitation(const std::vector<uint8_t>& req, const ParsedFrame& f) const
{
    const uint8_t* ip = req.data() + f.l3Offset;
    static const std::array<uint8_t, 16> kUnspecified{};
    if (req[f.l4Offset] != kNeighbourSolicitation ||
        std::memcmp(ip + 8, kUnspecified.data(), 16) == 0)
    {
        // Router discovery, an advertisement, a redirect, or duplicate address detection
        // (from ::), which must go unanswered or the endpoint would give up its own address.
        return Keep("neighbour_discovery_kept_at_edge");
    }
    const uint8_t* target = req.data() + f.l4Offset + 8;
    for (const auto& e : m_directory)
    {
        const auto ll = e.LinkLocal();
        if (std::memcmp(ll.data(), target, 16) != 0 ||
            std::memcmp(e.mac.data(), req.data() + 6, 6) == 0)
        {
            continue; // not this one, or the asker itself
        }
        Outcome o;
        o.verdict = Verdict::Answer;
        std::vector<uint8_t>& na = o.reply;
        na.assign(14 + 40 + 32, 0);
        std::memcpy(na.data(), req.data() + 6, 6); // to the asker
        std::memcpy(na.data() + 6, e.mac.data(), 6);
        na[12] = 0x86;
        na[13] = 0xdd;
        uint8_t* v6 = na.data() + 14;
        v6[0] = 0x60;
        v6[5] = 32; // payload: NA 24 + target link-layer option 8
        v6[6] = kIcmpv6;
        v6[7] = 255; // hop limit 255, as RFC 4861 requires
        std::memcpy(v6 + 8, ll.data(), 16);
        std::memcpy(v6 + 24, ip + 8, 16); // to the solicitation's source
        uint8_t* icmp = v6 + 40;
        icmp[0] = kNeighbourAdvertisement;
        icmp[4] = 0x60; // solicited, override
        std::memcpy(icmp + 8, ll.data(), 16);
        icmp[24] = 2; // option: target link-layer address
        icmp[25] = 1; // 8 bytes
        std::memcpy(icmp + 26, e.mac.data(), 6);
        const uint16_t sum = Icmpv6Checksum(v6 + 8, v6 + 24, icmp, 32);
        icmp[2] = sum >> 8;
        icmp[3] = sum & 0xff;
        return o;
    }
    return Keep("neighbour_unknown_target");
}

} // namespace fabemu
