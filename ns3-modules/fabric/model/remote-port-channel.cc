#include "ns3/remote-port-channel.h"

#include "ns3/rank-exchange.h"
#include "ns3/rank-sent-tag.h"

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(RemotePortChannel);

TypeId
RemotePortChannel::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::RemotePortChannel")
            .SetParent<Channel>()
            .SetGroupName("Fabric")
            .AddConstructor<RemotePortChannel>()
            .AddAttribute("Delay",
                          "The lookahead ns-3's distributed engines take from this link: its "
                          "delay less RankSentTag::Lead()",
                          TimeValue(Time(0)), MakeTimeAccessor(&RemotePortChannel::m_delay),
                          MakeTimeChecker(Time(0)));
    return tid;
}

RemotePortChannel::RemotePortChannel() = default;

void
RemotePortChannel::DoDispose()
{
    m_ends = {};
    Channel::DoDispose();
}

std::pair<Ptr<RemotePortDevice>, Ptr<RemotePortDevice>>
RemotePortChannel::Cable(Ptr<Node> a, Ptr<Node> b, Time delay, const std::string& name)
{
    Ptr<RemotePortChannel> channel = CreateObject<RemotePortChannel>();
    channel->m_delay = RankSentTag::Lookahead(delay, name);
    for (size_t i = 0; i < 2; ++i)
    {
        Ptr<RemotePortDevice> dev = CreateObject<RemotePortDevice>();
        (i == 0 ? a : b)->AddDevice(dev); // sets its node and ifIndex
        dev->SetChannel(channel);
        RankExchange::Listen(dev, MakeCallback(&RemotePortDevice::FromRank, dev));
        channel->m_ends[i] = dev;
    }
    return {channel->m_ends[0], channel->m_ends[1]};
}

Ptr<RemotePortDevice>
RemotePortChannel::GetPeer(Ptr<const RemotePortDevice> device) const
{
    return m_ends[0] == device ? m_ends[1] : m_ends[0];
}

Ptr<NetDevice>
RemotePortChannel::GetDevice(std::size_t i) const
{
    return i < m_ends.size() ? m_ends[i] : nullptr;
}

} // namespace ns3
