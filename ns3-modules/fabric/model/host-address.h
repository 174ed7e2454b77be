// The addresses of host hN, one rule for every fabric, simulated or real: what the
// fabric helpers give their hosts, what {hN} expands to, what endpoint VMs and
// namespaces are configured with, and what the edges answer ARP with.
#ifndef FABEMU_HOST_ADDRESS_H
#define FABEMU_HOST_ADDRESS_H

#include <array>
#include <cstdint>
#include <string>

namespace ns3
{

/// hN's IPv4 address, host order: 10.0.0.(N+1), counting on past .255 (h255 is 10.0.1.0).
uint32_t HostIpv4(uint32_t host);

/// HostIpv4 as text, "10.0.0.1" for h0.
std::string HostIpv4Text(uint32_t host);

/// The MAC of real endpoint hN: 52:54:00:00:XX:YY with XXYY = N+1 (QEMU's prefix).
std::array<uint8_t, 6> HostMac(uint32_t host);

/// HostMac as text, "52:54:00:00:00:01" for h0.
std::string HostMacText(uint32_t host);

} // namespace ns3

#endif
