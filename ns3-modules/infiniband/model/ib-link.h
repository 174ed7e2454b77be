/*
 * InfiniBand link speeds and widths: the data rate after line encoding
 * (8b/10b up to QDR, 64b/66b for FDR/EDR, PAM4 with FEC from HDR), which is
 * what a packet's bits travel at, not the signalling rate.
 */
#ifndef FABEMU_IB_LINK_H
#define FABEMU_IB_LINK_H

#include "ns3/data-rate.h"

#include <string>

namespace ns3
{

/// Data rate of one lane of \p speed (SDR, DDR, QDR, FDR, EDR, HDR, NDR, XDR), in bit/s; 0 if
/// unknown.
uint64_t IbLaneDataRate(const std::string& speed);
/// \p speed x \p width (1, 2, 4, 8 or 12 lanes); aborts on an unknown speed or width.
DataRate IbLinkRate(const std::string& speed, uint32_t width);

} // namespace ns3

#endif
