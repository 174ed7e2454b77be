#include "ns3/roce-remote-channel.h"

#include "ns3/abort.h"
#include "ns3/deterministic-scheduler.h"
#include "ns3/node.h"
#include "ns3/rank-exchange.h"
#include "ns3/roce-net-device.h"
#include "ns3/simulator.h"

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(RoceRemoteChannel);

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
    RankSentTag tag;
    tag.sentAt = Simulator::Now().GetTimeStep();
    tag.node = src->GetNode()->GetId();
    tag.port = src->GetIfIndex();
    copy->AddPacketTag(tag);
    RankExchange::Send(copy, Simulator::Now() + txTime + GetDelay(), dst->GetNode()->GetId(),
                       dst->GetIfIndex());
}

void
RoceRemoteChannel::ArriveFromRank(Ptr<RoceNetDevice> dev, Ptr<Packet> p)
{
    RankSentTag tag;
    const bool stamped = p->RemovePacketTag(tag);
    NS_ABORT_MSG_IF(!stamped, "RoceRemoteChannel: a frame from another rank without its stamp");
    DeterministicScheduler::ScheduleArrival(TimeStep(tag.sentAt), tag.node, tag.port,
                                            dev->GetNode()->GetId(), RankSentTag::Lead(),
                                            &RoceNetDevice::Receive, dev, p);
}

} // namespace ns3
