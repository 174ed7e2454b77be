// IeeeCrc32 (ISA-L) is zlib's crc32, whole or in pieces, at every length a frame may have.
#include "ns3/ieee-crc32.h"

#include <doctest/doctest.h>

#include <cstring>
#include <random>
#include <vector>
#include <zlib.h>

using namespace ns3;

TEST_CASE("IeeeCrc32 of \"123456789\" is the CRC-32 check value 0xCBF43926")
{
    const char* s = "123456789";
    CHECK(IeeeCrc32(0, reinterpret_cast<const uint8_t*>(s), std::strlen(s)) == 0xCBF43926u);
    CHECK(IeeeCrc32(0, nullptr, 0) == 0u);
}

TEST_CASE("IeeeCrc32 equals zlib's crc32 at lengths 0 to 9000, whole and in two pieces")
{
    std::mt19937 rng(7);
    std::vector<uint8_t> data(9001);
    for (auto& b : data)
    {
        b = static_cast<uint8_t>(rng());
    }
    for (size_t len = 0; len <= 9000; len += len < 300 ? 1 : 37)
    {
        CAPTURE(len);
        const uLong z = crc32(crc32(0L, Z_NULL, 0), data.data(), static_cast<uInt>(len));
        REQUIRE(IeeeCrc32(0, data.data(), len) == static_cast<uint32_t>(z));
        // A frame's CRC taken in pieces (headers, then payload), at an odd offset too.
        const size_t cut = rng() % (len + 1);
        CHECK(IeeeCrc32(IeeeCrc32(0, data.data(), cut), data.data() + cut, len - cut) ==
              static_cast<uint32_t>(z));
        const uLong zOdd = crc32(crc32(0L, Z_NULL, 0), data.data() + 1, static_cast<uInt>(len));
        CHECK(IeeeCrc32(0, data.data() + 1, len) == static_cast<uint32_t>(zOdd));
    }
}
