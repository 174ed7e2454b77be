#include "ns3/roce-remote-channel.h"

#include "ns3/abort.h"
#include "ns3/deterministic-scheduler.h"
#include "ns3/mpi-interface.h"
#include "ns3/node.h"
#include "ns3/roce-net-device.h"
#include "ns3/simulator.h"

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(RoceRemoteChannel);
NS_OBJECT_ENSURE_REGISTERED(RoceSentTag);

TypeId
RoceRemoteChannel::GetTypeId()
{
    static TypeId tid = TypeId("ns3::RoceRemoteChannel")
                            .SetParent<RoceChannel>()
                            .SetGroupName("Roce")
                            .AddConstructor<RoceRemoteChannel>();
    return tid;
}

RoceRemoteChannel::RoceRemoteChannel() = default;

void
RoceRemoteChannel::Transmit(Ptr<Packet> p, Ptr<const RoceNetDevice> src, Time txTime) const
{
    Ptr<RoceNetDevice> dst = GetPeer(src);
    NS_ABORT_MSG_IF(!dst, "RoceRemoteChannel: transmit on a cable with one end free");
    if (dst->GetNode()->GetSystemId() == src->GetNode()->GetSystemId())
    {
        RoceChannel::Transmit(p, src, txTime); // both ends here: GetLinkDelay() from now
        return;
    }
    Ptr<Packet> copy = p->Copy();
    RoceSentTag tag;
    tag.sentAt = Simulator::Now().GetTimeStep();
    tag.node = src->GetNode()->GetId();
    tag.ifIndex = src->GetIfIndex();
    copy->AddPacketTag(tag);
    MpiInterface::SendPacket(copy, Simulator::Now() + txTime + GetDelay(), dst->GetNode()->GetId(),
                             dst->GetIfIndex());
}

void
RoceRemoteChannel::ArriveFromRank(Ptr<RoceNetDevice> dev, Ptr<Packet> p)
{
    RoceSentTag tag;
    const bool stamped = p->RemovePacketTag(tag);
    NS_ABORT_MSG_IF(!stamped, "RoceRemoteChannel: a frame from another rank without its stamp");
    DeterministicScheduler::ScheduleArrival(TimeStep(tag.sentAt), tag.node, tag.ifIndex,
                                            dev->GetNode()->GetId(), Lead(),
                                            &RoceNetDevice::Receive, dev, p);
}

TypeId
RoceSentTag::GetTypeId()
{
    static TypeId tid = TypeId("ns3::RoceSentTag")
                            .SetParent<Tag>()
                            .SetGroupName("Roce")
                            .AddConstructor<RoceSentTag>();
    return tid;
}

TypeId
RoceSentTag::GetInstanceTypeId() const
{
    return GetTypeId();
}

uint32_t
RoceSentTag::GetSerializedSize() const
{
    return 16;
}

void
RoceSentTag::Serialize(TagBuffer i) const
{
    i.WriteU64(static_cast<uint64_t>(sentAt));
    i.WriteU32(node);
    i.WriteU32(ifIndex);
}

void
RoceSentTag::Deserialize(TagBuffer i)
{
    sentAt = static_cast<int64_t>(i.ReadU64());
    node = i.ReadU32();
    ifIndex = i.ReadU32();
}

void
RoceSentTag::Print(std::ostream& os) const
{
    os << "sent at " << sentAt << " by node " << node << " port " << ifIndex;
}

} // namespace ns3
