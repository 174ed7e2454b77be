#include "ns3/host-address.h"

#include <cstdio>

namespace ns3
{

uint32_t
HostIpv4(uint32_t host)
{
    return 0x0a000001 + host;
}

std::string
HostIpv4Text(uint32_t host)
{
    const uint32_t ip = HostIpv4(host);
    return std::to_string(ip >> 24) + "." + std::to_string((ip >> 16) & 0xff) + "." +
           std::to_string((ip >> 8) & 0xff) + "." + std::to_string(ip & 0xff);
}

std::array<uint8_t, 6>
HostMac(uint32_t host)
{
    const uint32_t n = host + 1;
    return {0x52, 0x54, 0x00, 0x00, static_cast<uint8_t>(n >> 8), static_cast<uint8_t>(n)};
}

std::string
HostMacText(uint32_t host)
{
    const auto m = HostMac(host);
    char text[18];
    std::snprintf(text, sizeof(text), "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4],
                  m[5]);
    return text;
}

} // namespace ns3
