/*
 * ARP and IPv6 neighbour discovery at the edge. A routed fabric does not flood,
 * so an endpoint's question "who has 10.0.0.2?" (ARP, RFC 826) or its neighbour
 * solicitation for another endpoint's link-local address (RFC 4861) is answered
 * at its own edge from the directory of every endpoint's addresses. Router
 * discovery and duplicate address detection stay at the edge unanswered (an
 * answer to DAD would make the endpoint give up its own address).
 */
#ifndef FABEMU_NEIGHBOUR_RESPONDER_H
#define FABEMU_NEIGHBOUR_RESPONDER_H

#include "ns3/roce-frame.h"

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace fabemu
{

/// A real endpoint's addresses, as its kernel holds them.
struct EndpointAddress
{
    uint32_t ipv4{0}; ///< host order
    std::array<uint8_t, 6> mac{};
    /// fe80::/64 with the MAC's modified EUI-64, as the endpoint's kernel forms it
    /// (rxe's GID 0 and RoCEv2 over IPv6 use it).
    std::array<uint8_t, 16> LinkLocal() const;
};

class NeighbourResponder
{
  public:
    explicit NeighbourResponder(std::vector<EndpointAddress> directory);

    enum class Verdict
    {
        NotMine, ///< not ARP or neighbour discovery: the fabric carries it
        Answer,  ///< write Outcome::reply back to the asker
        Keep,    ///< stays at the edge unanswered; Outcome::reason says why
    };
    struct Outcome
    {
        Verdict verdict{Verdict::NotMine};
        std::vector<uint8_t> reply; ///< an ARP reply or neighbour advertisement (Answer)
        std::string reason;         ///< a drop reason (Keep)
        bool arp{false};            ///< the reply is an ARP reply (else a neighbour advert)
    };
    /// What to do with an endpoint's untagged Ethernet \p frame, parsed as \p f.
    Outcome Handle(const uint8_t* frame, size_t len, const ns3::ParsedFrame& f) const;
    Outcome Handle(const std::vector<uint8_t>& frame, const ns3::ParsedFrame& f) const
    {
        return Handle(frame.data(), frame.size(), f);
    }

  private:
    Outcome AnswerArp(const std::vector<uint8_t>& request) const;
    Outcome AnswerSolicitation(const std::vector<uint8_t>& frame, const ns3::ParsedFrame& f) const;

    std::vector<EndpointAddress> m_directory;
};

} // namespace fabemu

#endif
