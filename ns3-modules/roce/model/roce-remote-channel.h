/*
 * A RoceChannel whose two ends are simulated by different MPI ranks (a partitioned run on
 * ns-3's distributed simulator): a frame for the far end goes to its rank through
 * RankExchange (ns-3's MpiInterface, in a partitioned run).
 *
 * The far rank gets the frame RankSentTag::Lead() before it arrives (RankExchange::Listen
 * calls ArriveFromRank), and schedules the arrival itself as made by the sending port when it
 * was sent (DeterministicScheduler::ScheduleArrival), as the one-rank run does. So the
 * cable's Delay attribute, which ns-3's engines take as the lookahead, is the link's
 * delay less that lead; RoceFabricHelper sets it so.
 */
#ifndef FABEMU_ROCE_REMOTE_CHANNEL_H
#define FABEMU_ROCE_REMOTE_CHANNEL_H

#include "ns3/rank-sent-tag.h"
#include "ns3/roce-channel.h"

namespace ns3
{

class RoceRemoteChannel : public RoceChannel
{
  public:
    static TypeId GetTypeId();
    RoceRemoteChannel();

    /**
     * \brief As RoceChannel::Transmit; when the other end's node belongs to another rank,
     * the frame is sent there, stamped with when and where it was sent.
     */
    void Transmit(Ptr<Packet> p, Ptr<const RoceNetDevice> src, Time txTime) const override;
    /// The link's own delay: the Delay attribute plus RankSentTag::Lead().
    Time GetLinkDelay() const override { return GetDelay() + RankSentTag::Lead(); }

    /// The far rank's side: \p p reached \p dev's rank; it arrives RankSentTag::Lead()
    /// from now.
    static void ArriveFromRank(Ptr<RoceNetDevice> dev, Ptr<Packet> p);
};

} // namespace ns3

#endif
