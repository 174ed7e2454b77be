/*
 * One CXL.mem message as the link layer carries it: its class, a tag the
 * requester matches responses by, the logical device a switch stamps on it
 * (MLD pooling), whether it falls in an open DRAM row (streaming), when its
 * requester issued the access, and on a CXL 3.x fabric of switches the 12-bit port IDs
 * of the edge ports it came in by and goes out of (port-based routing).
 */
#ifndef FABEMU_CXL_MESSAGE_H
#define FABEMU_CXL_MESSAGE_H

#include "ns3/cxl-spec.h"
#include "ns3/nstime.h"

namespace ns3
{

struct CxlMessage
{
    CxlMessageType type{CxlMessageType::M2sReq};
    uint64_t tag{0};
    uint32_t requester{0}; ///< the client of its CPU that asked (CxlCpu)
    uint32_t logicalDevice{0};
    bool rowHit{false};
    uint32_t payload{0}; ///< CXL.io: the TLP's payload bytes
    uint16_t spid{0};    ///< port-based routing: the source edge port's ID
    uint16_t dpid{0};    ///< port-based routing: the destination edge port's ID
    Time issued;
};

} // namespace ns3

#endif
