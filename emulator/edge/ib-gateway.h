/*
 * The edge gateway of an InfiniBand fabric: a real endpoint's frames cross the
 * IB model as IB packets and come out at the far gateway bit-exact.
 *
 * A RoCEv2 frame becomes what an IB HCA would send for it: LRH (DLID of the
 * endpoint that owns the destination address, SL the frame's priority), a GRH
 * made from the IP header (GIDs from the addresses, IPv4 as ::ffff:a.b.c.d;
 * TClass from the TOS; HopLmt from the TTL), then the frame's own BTH, extension
 * headers, payload and ICRC, then a VCRC. Other IP traffic (perftest's TCP
 * handshake, ICMP) goes as IPoIB: a UD SEND (LRH, BTH, DETH, 4-byte IPoIB
 * header) carrying the IP packet. The wire sees exactly those bytes.
 *
 * The Ethernet, IP and UDP headers the IB packet does not carry travel beside it
 * in an IbTunnel, first in first out per (SLID, DLID, SL): IB delivers in order
 * per SL along the one path the forwarding tables give a DLID, so the far
 * gateway takes the frame that belongs to each packet it receives.
 */
#ifndef FABEMU_IB_GATEWAY_H
#define FABEMU_IB_GATEWAY_H

#include "emulator/edge/edge-uplink.h"
#include "emulator/edge/neighbour-responder.h"

#include "ns3/ib-port.h"

#include <deque>
#include <memory>
#include <optional>
#include <tuple>

namespace fabemu
{

class IbTunnel
{
  public:
    void Push(uint16_t slid, uint16_t dlid, uint8_t sl, std::vector<uint8_t> frame);
    std::optional<std::vector<uint8_t>> Pop(uint16_t slid, uint16_t dlid, uint8_t sl);
    /// Frames whose packets are still in the fabric.
    size_t InFlight() const;

  private:
    std::map<std::tuple<uint16_t, uint16_t, uint8_t>, std::deque<std::vector<uint8_t>>> m_queues;
};

class IbGateway : public EdgeUplink
{
  public:
    /// \param port the external host's bare port (IbFabricHelper::GetPort)
    /// \param lids the LID of each endpoint of \p directory, in the same order
    IbGateway(ns3::Ptr<ns3::IbPort> port, uint32_t context, uint16_t lid,
              std::shared_ptr<IbTunnel> tunnel, std::vector<EndpointAddress> directory,
              std::vector<uint16_t> lids);
    ~IbGateway() override;

    void Send(uint8_t* frame, size_t len, const ns3::ParsedFrame& f, uint8_t prio) override;
    void SetDeliver(std::function<void(std::vector<uint8_t>)> deliver) override
    {
        m_deliver = std::move(deliver);
    }
    uint32_t Context() const override { return m_context; }
    void AddCounters(EdgeCounters& c) const override;

    /// The IB packet a frame becomes (without enqueuing it); empty if it cannot cross.
    std::vector<uint8_t> Encapsulate(const std::vector<uint8_t>& frame, const ns3::ParsedFrame& f,
                                     uint8_t sl, uint16_t dlid) const;
    /// The LID of the endpoint that owns \p f's destination address, or 0.
    uint16_t LidFor(const ns3::ParsedFrame& f) const;
    uint64_t PacketsSent() const { return m_sent; }
    uint64_t PacketsReceived() const { return m_received; }

  private:
    void Receive(ns3::Ptr<ns3::IbPort> port, ns3::Ptr<ns3::Packet> p, uint8_t vl, ns3::Time tail);
    void Deliver(ns3::Ptr<ns3::Packet> p, uint8_t vl);

    ns3::Ptr<ns3::IbPort> m_port;
    uint32_t m_context;
    uint16_t m_lid;
    std::shared_ptr<IbTunnel> m_tunnel;
    std::vector<EndpointAddress> m_directory;
    std::vector<uint16_t> m_lids;
    std::function<void(std::vector<uint8_t>)> m_deliver;
    std::map<std::string, uint64_t> m_drops;
    uint64_t m_sent{0};
    uint64_t m_received{0};
};

} // namespace fabemu

#endif
