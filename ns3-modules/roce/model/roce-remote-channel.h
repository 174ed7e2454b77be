/*
 * A RoceChannel whose two ends are simulated by different MPI ranks (a partitioned run on
 * ns-3's distributed simulator): a frame for the far end goes to its rank through
 * MpiInterface. Built where ns-3's mpi module is (FABEMU_HAVE_MPI).
 *
 * The far rank gets the frame kLead before it arrives (its MpiReceiver calls
 * ArriveFromRank), and schedules the arrival itself as made by the sending port when it
 * was sent (DeterministicScheduler::ScheduleArrival), as the one-rank run does. So the
 * cable's Delay attribute, which ns-3's engines take as the lookahead, is the link's
 * delay less kLead; RoceFabricHelper sets it so.
 */
#ifndef FABEMU_ROCE_REMOTE_CHANNEL_H
#define FABEMU_ROCE_REMOTE_CHANNEL_H

#include "ns3/roce-channel.h"
#include "ns3/tag.h"

namespace ns3
{

class RoceRemoteChannel : public RoceChannel
{
  public:
    static TypeId GetTypeId();
    RoceRemoteChannel();

    /// How long before its arrival a frame reaches the far rank.
    static Time Lead() { return PicoSeconds(1); }

    /**
     * \brief As RoceChannel::Transmit; when the other end's node belongs to another rank,
     * the frame is sent there, stamped with when and where it was sent.
     */
    void Transmit(Ptr<Packet> p, Ptr<const RoceNetDevice> src, Time txTime) const override;
    /// The link's own delay: the Delay attribute plus Lead().
    Time GetLinkDelay() const override { return GetDelay() + Lead(); }

    /// The far rank's side: \p p reached \p dev's rank; it arrives Lead() from now.
    static void ArriveFromRank(Ptr<RoceNetDevice> dev, Ptr<Packet> p);
};

/// When and by which port a frame that crosses ranks was sent (a packet tag, serialised
/// with the frame by ns-3's MPI interfaces and removed on arrival).
class RoceSentTag : public Tag
{
  public:
    static TypeId GetTypeId();
    TypeId GetInstanceTypeId() const override;
    uint32_t GetSerializedSize() const override;
    void Serialize(TagBuffer i) const override;
    void Deserialize(TagBuffer i) override;
    void Print(std::ostream& os) const override;

    int64_t sentAt{0}; ///< time steps
    uint32_t node{0};
    uint32_t ifIndex{0};
};

} // namespace ns3

#endif
