// The lossless invariant every RoCE simulation test with PFC on checks.
#ifndef FABEMU_TESTS_LOSSLESS_H
#define FABEMU_TESTS_LOSSLESS_H

#include "ns3/roce-channel.h"
#include "ns3/roce-fabric-helper.h"

#include <doctest/doctest.h>

#include <vector>

/**
 * With PFC on: no frame dropped, none sent twice (no retransmission, no
 * timeout), and every byte sent is delivered or still in flight, where in
 * flight is bounded by what switch buffers, port queues and cables can hold.
 */
inline void
CheckLossless(const ns3::RoceFabricHelper& fabric,
              const std::vector<ns3::Ptr<ns3::RdmaQueuePair>>& requesters,
              const std::vector<ns3::Ptr<ns3::RdmaQueuePair>>& responders)
{
    using namespace ns3;
    CHECK(fabric.TotalDrops() == 0);
    uint64_t sent = 0;
    uint64_t delivered = 0;
    for (const auto& qp : requesters)
    {
        CHECK(qp->GetRetransmittedPackets() == 0);
        CHECK(qp->GetTimeouts() == 0);
        sent += qp->GetBytesSent();
    }
    for (const auto& qp : responders)
    {
        delivered += qp->GetBytesReceived();
    }
    uint64_t inFlightBound = 0;
    for (const auto& sw : fabric.GetSwitches())
    {
        inFlightBound += sw->GetMmu()->GetTotalUsed();
    }
    for (const auto& dev : fabric.GetDevices())
    {
        for (uint8_t p = 0; p < RoceNetDevice::kPriorities; ++p)
        {
            inFlightBound += dev->GetQueueBytes(p);
        }
        // What the cable from this port holds, plus the frame being sent.
        Ptr<RoceChannel> cable = DynamicCast<RoceChannel>(dev->GetChannel());
        inFlightBound += static_cast<uint64_t>(dev->GetDataRate().GetBitRate() / 8.0 *
                                               cable->GetDelay().GetSeconds()) +
                         RoceNetDevice::WireBytes(9000);
    }
    CHECK(delivered <= sent);
    CHECK(sent - delivered <= inFlightBound);
}

#endif
