/*
 * Bit errors on a link of any fabric: ns-3's RateErrorModel in bits as a device's
 * ReceiveErrorModel, each end of each link drawing from a random stream of its own.
 */
#ifndef FABEMU_LINK_ERRORS_H
#define FABEMU_LINK_ERRORS_H

#include "ns3/error-model.h"
#include "ns3/ptr.h"

#include <cstdint>

namespace ns3
{

/// The first random stream of a link's bit errors (BitErrorModel).
constexpr int64_t kBitErrorStreamBase = int64_t{1} << 40;

/// A receive error model for end \p end (0, 1) of link \p link: a RateErrorModel in bits at
/// \p ber, drawing from stream kBitErrorStreamBase + 2 link + end whatever else the run has
/// drawn before, so that the same scenario and seed hit the same bits in any process.
Ptr<ErrorModel> BitErrorModel(uint32_t link, uint32_t end, double ber);

} // namespace ns3

#endif
