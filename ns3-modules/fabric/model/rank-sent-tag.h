/*
 * When and by which port a packet that crosses MPI ranks was sent, in a partitioned run on
 * ns-3's distributed simulator: a packet tag, serialised with the packet by ns-3's MPI
 * interfaces. The far rank schedules the arrival as made by that port at that time
 * (DeterministicScheduler::ScheduleArrival), as the one-rank run does, so ties between
 * events break alike however the run is split. A fabric model may carry one word of its
 * own with it (InfiniBand: what the packet is, its VL and its time on the wire).
 */
#ifndef FABEMU_RANK_SENT_TAG_H
#define FABEMU_RANK_SENT_TAG_H

#include "ns3/nstime.h"
#include "ns3/tag.h"

#include <cstdint>
#include <string>

namespace ns3
{

class RankSentTag : public Tag
{
  public:
    static TypeId GetTypeId();
    TypeId GetInstanceTypeId() const override;
    uint32_t GetSerializedSize() const override;
    void Serialize(TagBuffer i) const override;
    void Deserialize(TagBuffer i) override;
    void Print(std::ostream& os) const override;

    /// How long before its arrival a packet reaches the far rank: the lookahead of a
    /// link between ranks is its delay less this.
    static Time Lead() { return PicoSeconds(1); }
    /// The lookahead of \p link, of \p delay, between ranks: the delay less Lead().
    /// Throws std::invalid_argument, naming the link, when nothing is left, or where no
    /// MPI interface is open (RankExchange).
    static Time Lookahead(Time delay, const std::string& link);

    int64_t sentAt{0}; ///< time steps
    uint32_t node{0};  ///< the sending port's node (its event context)
    uint32_t port{0};  ///< the sending port, as the model numbers them
    uint64_t word{0};  ///< the model's own
};

} // namespace ns3

#endif
