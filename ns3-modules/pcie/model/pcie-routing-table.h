/*
 * Where a switch or a root complex sends a TLP: requests by address (each
 * port owns address ranges, the BARs and bridge windows of what sits below
 * it), completions by requester ID (each port owns ranges of IDs, the buses
 * below it). A TLP no range claims goes to the default port (a switch's
 * upstream port; none at a root complex).
 */
#ifndef FABEMU_PCIE_ROUTING_TABLE_H
#define FABEMU_PCIE_ROUTING_TABLE_H

#include "ns3/pcie-tlp.h"

#include <cstdint>
#include <vector>

namespace ns3
{

class PcieRoutingTable
{
  public:
    static constexpr int kNone = -1;

    /// Requests for [base, base + size) go to \p port.
    void AddAddressRange(int port, uint64_t base, uint64_t size);
    /// Completions for requester IDs first..last go to \p port.
    void AddRequesterRange(int port, uint16_t first, uint16_t last);
    /// Where unclaimed TLPs go (kNone: nowhere, they are unroutable).
    void SetDefaultPort(int port) { m_default = port; }

    /// The port \p tlp goes to, or kNone.
    int Route(const PcieTlp& tlp) const;
    /// The port owning \p address, or kNone (the default port is not consulted).
    int RouteAddress(uint64_t address) const;

  private:
    struct Range
    {
        uint64_t first;
        uint64_t end; ///< one past the last
        int port;
    };
    static int Find(const std::vector<Range>& ranges, uint64_t key);

    std::vector<Range> m_addresses;
    std::vector<Range> m_requesters;
    int m_default{kNone};
};

} // namespace ns3

#endif
