/*
 * The ns-3 face of a link end whose other end is simulated by another MPI rank, for fabric
 * models whose ports are not NetDevices (InfiniBand's IbPort). ns-3's distributed engines
 * find the lookahead in a Node's point-to-point devices and their channel's Delay, and
 * hand a packet from another rank to the MpiReceiver of the device it is addressed to:
 * this device gives them both. The port sends through SendToRank and is told of an
 * arrival by the arrival callback, at the time it arrives, as an event made by the
 * sending port when it sent it (RankSentTag, DeterministicScheduler::ScheduleArrival).
 * Packets cross ranks through RankExchange; RemotePortChannel::Cable makes the pair.
 */
#ifndef FABEMU_REMOTE_PORT_DEVICE_H
#define FABEMU_REMOTE_PORT_DEVICE_H

#include "ns3/net-device.h"
#include "ns3/node.h"

namespace ns3
{

class RemotePortChannel;

class RemotePortDevice : public NetDevice
{
  public:
    static TypeId GetTypeId();
    RemotePortDevice();

    /**
     * \brief Sends \p p, which carries a RankSentTag (who sent it, when), to the far end, to
     * arrive there at \p arrival (at least the channel's Delay plus RankSentTag::Lead()
     * from now).
     */
    void SendToRank(Ptr<Packet> p, Time arrival);
    /// Called at a packet's arrival from the far rank, with the packet (its tag removed)
    /// and the sender's word.
    using ArrivalCallback = Callback<void, Ptr<Packet>, uint64_t>;
    void SetArrivalCallback(ArrivalCallback cb) { m_arrival = cb; }
    /// The joining cable (RemotePortChannel::Cable).
    void SetChannel(Ptr<RemotePortChannel> channel) { m_channel = channel; }
    /// RankExchange (ns-3's MpiReceiver) hands over \p p: it arrives RankSentTag::Lead()
    /// from now.
    void FromRank(Ptr<Packet> p);

    // NetDevice: a stand-in that sends and receives nothing of its own.
    void SetIfIndex(const uint32_t index) override { m_ifIndex = index; }
    uint32_t GetIfIndex() const override { return m_ifIndex; }
    Ptr<Channel> GetChannel() const override;
    void SetAddress(Address) override {}
    Address GetAddress() const override { return Address(); }
    bool SetMtu(const uint16_t) override { return false; }
    uint16_t GetMtu() const override { return 0; }
    bool IsLinkUp() const override { return true; }
    void AddLinkChangeCallback(Callback<void>) override {}
    bool IsBroadcast() const override { return false; }
    Address GetBroadcast() const override { return Address(); }
    bool IsMulticast() const override { return false; }
    Address GetMulticast(Ipv4Address) const override { return Address(); }
    Address GetMulticast(Ipv6Address) const override { return Address(); }
    bool IsBridge() const override { return false; }
    /// True: ns-3's engines take the lookahead from point-to-point devices only.
    bool IsPointToPoint() const override { return true; }
    bool Send(Ptr<Packet>, const Address&, uint16_t) override { return false; }
    bool SendFrom(Ptr<Packet>, const Address&, const Address&, uint16_t) override { return false; }
    Ptr<Node> GetNode() const override { return m_node; }
    void SetNode(Ptr<Node> node) override { m_node = node; }
    bool NeedsArp() const override { return false; }
    void SetReceiveCallback(ReceiveCallback) override {}
    void SetPromiscReceiveCallback(PromiscReceiveCallback) override {}
    bool SupportsSendFrom() const override { return false; }

  protected:
    void DoDispose() override;

  private:
    void Arrive(Ptr<Packet> p, uint64_t word);

    Ptr<Node> m_node;
    Ptr<RemotePortChannel> m_channel;
    uint32_t m_ifIndex{0};
    ArrivalCallback m_arrival;
};

} // namespace ns3

#endif
