/*
 * The gate between a real endpoint's tap and the modelled fabric: every frame
 * the endpoint sends is parsed once, and either admitted (RoCEv2, ARP, other
 * IP such as perftest's TCP handshake, IPv6 neighbour discovery or siw's TCP)
 * or dropped and counted under a named reason. Nothing a tap delivers, however
 * broken, can crash it.
 */
#ifndef FABEMU_EDGE_FRAME_FILTER_H
#define FABEMU_EDGE_FRAME_FILTER_H

#include "ns3/roce-frame.h"

#include <cstdint>
#include <map>
#include <string>

namespace fabemu
{

class EdgeFrameFilter
{
  public:
    /// \param mtu the endpoint's IP MTU; frames longer than mtu + 18 are oversize
    explicit EdgeFrameFilter(uint32_t mtu);

    struct Verdict
    {
        bool admit{false};
        std::string reason; ///< empty when admitted
        ns3::ParsedFrame frame;
    };

    Verdict Classify(const uint8_t* frame, size_t len);

    uint64_t Admitted() const { return m_admitted; }
    uint64_t Dropped() const { return m_dropped; }
    /// Drops by reason, e.g. {"runt": 3, "bad_icrc": 1}.
    const std::map<std::string, uint64_t>& DropsByReason() const { return m_drops; }

  private:
    Verdict Drop(ns3::ParsedFrame f, std::string reason);

    uint32_t m_maxFrame;
    uint64_t m_admitted{0};
    uint64_t m_dropped{0};
    std::map<std::string, uint64_t> m_drops;
};

} // namespace fabemu

#endif
