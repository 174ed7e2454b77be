#include "ns3/roce-icrc.h"

#include "ns3/ieee-crc32.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <zlib.h>

namespace ns3
{

namespace
{
constexpr size_t kIpv4MinHeader = 20;
constexpr size_t kIpv6Header = 40;
constexpr size_t kUdpHeader = 8;
constexpr size_t kBthSize = 12;
constexpr size_t kBthEcnByte = 4; // FECN, BECN and six reserved bits
} // namespace

namespace
{

/// CRC over the masked LRH and masked IP/UDP/BTH; returns it and the bytes consumed.
std::optional<std::pair<uint32_t, size_t>>
IcrcOverMaskedHeaders(const uint8_t* l3, size_t len)
{
    if (len < 1)
    {
        return std::nullopt;
    }
    const uint8_t version = l3[0] >> 4;
    size_t ipLen = 0;
    if (version == 4)
    {
        ipLen = static_cast<size_t>(l3[0] & 0x0f) * 4;
        if (ipLen < kIpv4MinHeader)
        {
            return std::nullopt;
        }
    }
    else if (version == 6)
    {
        ipLen = kIpv6Header;
    }
    else
    {
        return std::nullopt;
    }
    const size_t maskedLen = ipLen + kUdpHeader + kBthSize;
    if (len < maskedLen)
    {
        return std::nullopt;
    }

    // IPv4 with options is at most 60 bytes; the masked copy fits 80.
    std::array<uint8_t, 60 + kUdpHeader + kBthSize> hdr{};
    std::memcpy(hdr.data(), l3, maskedLen);
    if (version == 4)
    {
        hdr[1] = 0xff;  // TOS (DSCP + ECN)
        hdr[8] = 0xff;  // TTL
        hdr[10] = 0xff; // header checksum
        hdr[11] = 0xff;
    }
    else
    {
        hdr[0] |= 0x0f; // traffic class, high nibble
        hdr[1] = 0xff;  // traffic class low nibble + flow label
        hdr[2] = 0xff;
        hdr[3] = 0xff;
        hdr[7] = 0xff; // hop limit
    }
    hdr[ipLen + 6] = 0xff; // UDP checksum
    hdr[ipLen + 7] = 0xff;
    hdr[ipLen + kUdpHeader + kBthEcnByte] = 0xff;

    static constexpr std::array<uint8_t, 8> kMaskedLrh{0xff, 0xff, 0xff, 0xff,
                                                       0xff, 0xff, 0xff, 0xff};
    const uint32_t crc =
        IeeeCrc32(IeeeCrc32(0, kMaskedLrh.data(), kMaskedLrh.size()), hdr.data(), maskedLen);
    return std::make_pair(crc, maskedLen);
}

} // namespace

std::optional<uint32_t>
ComputeRoceIcrc(const uint8_t* l3, size_t len)
{
    const auto start = IcrcOverMaskedHeaders(l3, len);
    if (!start)
    {
        return std::nullopt;
    }
    const auto [crc, maskedLen] = *start;
    return IeeeCrc32(crc, l3 + maskedLen, len - maskedLen);
}

std::optional<uint32_t>
ComputeRoceIcrcWithZeros(const uint8_t* l3, size_t headerLen, size_t zeros)
{
    const auto start = IcrcOverMaskedHeaders(l3, headerLen);
    if (!start)
    {
        return std::nullopt;
    }
    auto [crc, maskedLen] = *start;
    crc = IeeeCrc32(crc, l3 + maskedLen, headerLen - maskedLen);
    if (zeros == 0)
    {
        return crc;
    }
    // zlib appends a CRC computed apart: crc(A || Z) = combine(crc(A), crc(Z), |Z|). The
    // CRC of |Z| zeros and the combining operator for |Z| are made once per length, and
    // payloads come in a few lengths: a frame costs its headers and one combine, not a
    // pass over its kilobyte of zeros.
    struct Zeros
    {
        size_t length = 0; // 0: empty
        uLong crc = 0;
        uLong combine = 0;
    };
    thread_local std::array<Zeros, 8> cache;
    thread_local size_t next = 0; // lengths are multiples of 4: searched whole, replaced in turn
    auto hit = std::find_if(cache.begin(), cache.end(),
                            [zeros](const Zeros& c) { return c.length == zeros; });
    if (hit == cache.end())
    {
        hit = cache.begin() + next;
        next = (next + 1) % cache.size();
        Zeros& z = *hit;
        static const std::array<uint8_t, 4096> kZeros{};
        uint32_t zerosCrc = 0;
        for (size_t left = zeros; left > 0;)
        {
            const size_t n = std::min(left, kZeros.size());
            zerosCrc = IeeeCrc32(zerosCrc, kZeros.data(), n);
            left -= n;
        }
        z = {zeros, zerosCrc, crc32_combine_gen(static_cast<z_off_t>(zeros))};
    }
    return static_cast<uint32_t>(crc32_combine_op(crc, hit->crc, hit->combine));
}

uint32_t
ReadIcrc(const uint8_t* p)
{
    return static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 |
           static_cast<uint32_t>(p[2]) << 16 | static_cast<uint32_t>(p[3]) << 24;
}

void
WriteIcrc(uint8_t* p, uint32_t icrc)
{
    p[0] = icrc & 0xff;
    p[1] = (icrc >> 8) & 0xff;
    p[2] = (icrc >> 16) & 0xff;
    p[3] = (icrc >> 24) & 0xff;
}

} // namespace ns3
