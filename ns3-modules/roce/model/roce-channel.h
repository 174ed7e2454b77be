/*
 * A full-duplex point-to-point Ethernet cable between two RoceNetDevices.
 */
#ifndef FABEMU_ROCE_CHANNEL_H
#define FABEMU_ROCE_CHANNEL_H

#include "ns3/channel.h"
#include "ns3/nstime.h"
#include "ns3/packet.h"

#include <array>
#include <cstdint>

namespace ns3
{

class RoceNetDevice;

class RoceChannel : public Channel
{
  public:
    static TypeId GetTypeId();
    RoceChannel();

    /// Connects \p device to one end of the cable (two ends).
    void Attach(Ptr<RoceNetDevice> device);

    /**
     * \brief Carries \p p from \p src to the other end; it arrives whole when its
     * last bit does: \p txTime plus the propagation delay from now.
     */
    virtual void Transmit(Ptr<Packet> p, Ptr<const RoceNetDevice> src, Time txTime) const;

    /// The Delay attribute: what ns-3's distributed engines take as this cable's lookahead.
    Time GetDelay() const { return m_delay; }
    /// How long a bit takes from one end to the other (a RoceRemoteChannel's is longer than
    /// its Delay attribute).
    virtual Time GetLinkDelay() const { return m_delay; }
    std::size_t GetNDevices() const override;
    Ptr<NetDevice> GetDevice(std::size_t i) const override;
    /// The device at the other end from \p device.
    Ptr<RoceNetDevice> GetPeer(Ptr<const RoceNetDevice> device) const;

  private:
    /// Who an end's arrivals are for, and which port sent them: read from the devices at
    /// the first transmit (each Node::GetId() is a call into ns-3, with its log check, at
    /// every packet-hop otherwise).
    struct EndIds
    {
        uint32_t node;
        uint32_t ifIndex;
    };

    void LearnIds() const;
    /// The end \p device is at: 0 or 1 (1 for a device at neither).
    std::size_t EndOf(Ptr<const RoceNetDevice> device) const;

    Time m_delay;
    std::array<Ptr<RoceNetDevice>, 2> m_ends;
    std::size_t m_attached{0};
    mutable std::array<EndIds, 2> m_ids{};
    mutable bool m_idsKnown{false};
};

} // namespace ns3

#endif
