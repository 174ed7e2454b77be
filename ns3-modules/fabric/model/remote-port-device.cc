#include "ns3/remote-port-device.h"

#include "ns3/abort.h"
#include "ns3/deterministic-scheduler.h"
#include "ns3/rank-exchange.h"
#include "ns3/rank-sent-tag.h"
#include "ns3/remote-port-channel.h"
#include "ns3/simulator.h"

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(RemotePortDevice);

TypeId
RemotePortDevice::GetTypeId()
{
    static TypeId tid = TypeId("ns3::RemotePortDevice")
                            .SetParent<NetDevice>()
                            .SetGroupName("Fabric")
                            .AddConstructor<RemotePortDevice>();
    return tid;
}

RemotePortDevice::RemotePortDevice() = default;

void
RemotePortDevice::DoDispose()
{
    m_node = nullptr;
    m_channel = nullptr;
    m_arrival = ArrivalCallback();
    NetDevice::DoDispose();
}

Ptr<Channel>
RemotePortDevice::GetChannel() const
{
    return m_channel;
}

void
RemotePortDevice::SendToRank(Ptr<Packet> p, Time arrival)
{
    NS_ABORT_MSG_IF(!m_channel, "RemotePortDevice: send before RemotePortChannel::Cable");
    const Ptr<RemotePortDevice> peer = m_channel->GetPeer(this);
    RankExchange::Send(p, arrival - RankSentTag::Lead(), peer->GetNode()->GetId(),
                       peer->GetIfIndex());
}

void
RemotePortDevice::FromRank(Ptr<Packet> p)
{
    RankSentTag tag;
    NS_ABORT_MSG_IF(!p->RemovePacketTag(tag),
                    "RemotePortDevice: a packet from another rank without its RankSentTag");
    DeterministicScheduler::ScheduleArrival(TimeStep(tag.sentAt), tag.node, tag.port,
                                            m_node->GetId(), RankSentTag::Lead(),
                                            &RemotePortDevice::Arrive, this, p, tag.word);
}

void
RemotePortDevice::Arrive(Ptr<Packet> p, uint64_t word)
{
    if (!m_arrival.IsNull())
    {
        m_arrival(p, word);
    }
}

} // namespace ns3
