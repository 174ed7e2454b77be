#include "containers/agent/agent-protocol.h"

#include <array>

namespace fabemu
{

namespace
{
constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
}

std::string
Base64Encode(const std::string& bytes)
{
    std::string out;
    out.reserve((bytes.size() + 2) / 3 * 4);
    size_t i = 0;
    for (; i + 2 < bytes.size(); i += 3)
    {
        const uint32_t v = static_cast<uint8_t>(bytes[i]) << 16 |
                           static_cast<uint8_t>(bytes[i + 1]) << 8 |
                           static_cast<uint8_t>(bytes[i + 2]);
        out += kAlphabet[v >> 18];
        out += kAlphabet[(v >> 12) & 63];
        out += kAlphabet[(v >> 6) & 63];
        out += kAlphabet[v & 63];
    }
    const size_t rest = bytes.size() - i;
    if (rest > 0)
    {
        uint32_t v = static_cast<uint8_t>(bytes[i]) << 16;
        if (rest == 2)
        {
            v |= static_cast<uint8_t>(bytes[i + 1]) << 8;
        }
        out += kAlphabet[v >> 18];
        out += kAlphabet[(v >> 12) & 63];
        out += rest == 2 ? kAlphabet[(v >> 6) & 63] : '=';
        out += '=';
    }
    return out;
}

bool
Base64Decode(const std::string& text, std::string& bytes)
{
    std::array<int, 256> value;
    value.fill(-1);
    for (int i = 0; i < 64; ++i)
    {
        value[static_cast<uint8_t>(kAlphabet[i])] = i;
    }
    bytes.clear();
    uint32_t acc = 0;
    int bits = 0;
    for (char c : text)
    {
        if (c == '=')
        {
            break;
        }
        const int v = value[static_cast<uint8_t>(c)];
        if (v < 0)
        {
            return false;
        }
        acc = acc << 6 | static_cast<uint32_t>(v);
        bits += 6;
        if (bits >= 8)
        {
            bits -= 8;
            bytes += static_cast<char>((acc >> bits) & 0xff);
        }
    }
    return true;
}

} // namespace fabemu
