#include "ns3/roce-channel.h"

#include "ns3/abort.h"
#include "ns3/bucket-scheduler.h"
#include "ns3/deterministic-scheduler.h"
#include "ns3/node.h"
#include "ns3/packet-bytes-address.h"
#include "ns3/pooled-event.h"
#include "ns3/roce-net-device.h"
#include "ns3/simulator-impl-cache.h"
#include "ns3/simulator.h"

#include <utility>

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(RoceChannel);

namespace
{

/// A frame's arrival at the far end: one per packet-hop, so its memory is reused.
class FrameArrival : public PooledEvent<FrameArrival>
{
  public:
    FrameArrival(Ptr<RoceNetDevice> dst, Ptr<Packet> p)
        : m_dst(std::move(dst)),
          m_packet(std::move(p))
    {
    }

  private:
    void Notify() override { m_dst->Receive(std::move(m_packet)); }

    Ptr<RoceNetDevice> m_dst;
    Ptr<Packet> m_packet;
};

} // namespace

TypeId
RoceChannel::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::RoceChannel")
            .SetParent<Channel>()
            .SetGroupName("Roce")
            .AddConstructor<RoceChannel>()
            .AddAttribute("Delay", "Propagation delay of the cable, each direction",
                          TimeValue(MicroSeconds(1)), MakeTimeAccessor(&RoceChannel::m_delay),
                          MakeTimeChecker(Time(0)));
    return tid;
}

RoceChannel::RoceChannel() = default;

void
RoceChannel::Attach(Ptr<RoceNetDevice> device)
{
    NS_ABORT_MSG_IF(m_attached == 2, "a RoceChannel has two ends; both are taken");
    m_ends[m_attached++] = device;
}

void
RoceChannel::LearnIds() const
{
    for (std::size_t i = 0; i < 2; ++i)
    {
        Ptr<Node> node = m_ends[i]->GetNode();
        NS_ABORT_MSG_IF(!node, "RoceChannel: transmit from a device on no node");
        m_ids[i] = EndIds{node->GetId(), m_ends[i]->GetIfIndex()};
    }
    m_idsKnown = true;
}

void
RoceChannel::Transmit(Ptr<Packet> p, Ptr<const RoceNetDevice> src, Time txTime) const
{
    NS_ABORT_MSG_IF(m_attached < 2, "RoceChannel: transmit on a cable with one end free");
    if (!m_idsKnown)
    {
        LearnIds();
    }
    const std::size_t from = EndOf(src);
    const Ptr<RoceNetDevice>& dst = m_ends[1 - from];
    // The receiver reads the Packet and its headers first: by the time it runs, a frame
    // that waited in a queue has left the caches, so the BucketScheduler loads them ahead.
    BucketScheduler::TouchNext(PeekPointer(p), PacketBytesAddress(*p));
    // An arrival: under the DeterministicScheduler its ties are broken by the sending
    // port and the time sent, the same on every rank of a partitioned run.
    DeterministicScheduler::ScheduleArrival(
        SimulatorImplCache::Now(), m_ids[from].node, m_ids[from].ifIndex, m_ids[1 - from].node,
        txTime + GetLinkDelay(), static_cast<EventImpl*>(new FrameArrival(dst, std::move(p))));
}

std::size_t
RoceChannel::GetNDevices() const
{
    return m_attached;
}

Ptr<NetDevice>
RoceChannel::GetDevice(std::size_t i) const
{
    return i < m_attached ? m_ends[i] : nullptr;
}

Ptr<RoceNetDevice>
RoceChannel::GetPeer(Ptr<const RoceNetDevice> device) const
{
    if (m_attached < 2)
    {
        return nullptr;
    }
    return m_ends[1 - EndOf(device)];
}

std::size_t
RoceChannel::EndOf(Ptr<const RoceNetDevice> device) const
{
    return m_ends[0] == device ? 0 : 1;
}

} // namespace ns3
