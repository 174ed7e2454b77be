#include "ns3/ib-link.h"

#include "ns3/abort.h"

#include <map>

namespace ns3
{

uint64_t
IbLaneDataRate(const std::string& speed)
{
    // Signalling -> data per lane: SDR 2.5 -> 2, DDR 5 -> 4, QDR 10 -> 8 (8b/10b);
    // FDR 14.0625 -> 13.64, EDR 25.78125 -> 25 (64b/66b); HDR 50, NDR 100, XDR 200 (PAM4+FEC).
    static const std::map<std::string, uint64_t> lane{
        {"SDR", 2'000'000'000},   {"DDR", 4'000'000'000},  {"QDR", 8'000'000'000},
        {"FDR", 13'636'363'636},  {"EDR", 25'000'000'000}, {"HDR", 50'000'000'000},
        {"NDR", 100'000'000'000}, {"XDR", 200'000'000'000}};
    const auto it = lane.find(speed);
    return it == lane.end() ? 0 : it->second;
}

DataRate
IbLinkRate(const std::string& speed, uint32_t width)
{
    const uint64_t lane = IbLaneDataRate(speed);
    NS_ABORT_MSG_IF(lane == 0, "unknown InfiniBand speed '" << speed << "'");
    NS_ABORT_MSG_IF(width != 1 && width != 2 && width != 4 && width != 8 && width != 12,
                    "InfiniBand link width must be 1, 2, 4, 8 or 12, not " << width);
    return DataRate(lane * width);
}

} // namespace ns3
