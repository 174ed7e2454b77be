#include "ns3/pcie-routing-table.h"

namespace ns3
{

void
PcieRoutingTable::AddAddressRange(int port, uint64_t base, uint64_t size)
{
    m_addresses.push_back({base, base + size, port});
}

void
PcieRoutingTable::AddRequesterRange(int port, uint16_t first, uint16_t last)
{
    m_requesters.push_back({first, uint64_t(last) + 1, port});
}

int
PcieRoutingTable::Find(const std::vector<Range>& ranges, uint64_t key)
{
    // A handful of ranges per switch: a linear scan beats a map here.
    for (const Range& r : ranges)
    {
        if (key >= r.first && key < r.end)
        {
            return r.port;
        }
    }
    return kNone;
}

int
PcieRoutingTable::RouteAddress(uint64_t address) const
{
    return Find(m_addresses, address);
}

int
PcieRoutingTable::Route(const PcieTlp& tlp) const
{
    const int port = tlp.kind == PcieTlp::Kind::Completion ? Find(m_requesters, tlp.requester)
                                                           : Find(m_addresses, tlp.address);
    return port == kNone ? m_default : port;
}

} // namespace ns3
