#include "emulator/edge/edge-frame-filter.h"

namespace fabemu
{

EdgeFrameFilter::EdgeFrameFilter(uint32_t mtu)
    : m_maxFrame(mtu + ns3::kEthernetHeaderSize + ns3::kVlanTagSize)
{
}

EdgeFrameFilter::Verdict
EdgeFrameFilter::Drop(ns3::ParsedFrame f, std::string reason)
{
    ++m_dropped;
    ++m_drops[reason];
    return Verdict{false, std::move(reason), f};
}

EdgeFrameFilter::Verdict
EdgeFrameFilter::Classify(const uint8_t* frame, size_t len)
{
    if (len > m_maxFrame)
    {
        return Drop({}, "oversize");
    }
    const auto f = ns3::ParseEthernetFrame(frame, len, true);
    switch (f.kind)
    {
    case ns3::FrameKind::Roce:
    case ns3::FrameKind::Arp:
    case ns3::FrameKind::Ip:
        ++m_admitted;
        return Verdict{true, {}, f};
    case ns3::FrameKind::Pfc:
        // Pause is the fabric's business: an endpoint's own PFC frame is not forwarded.
        return Drop(f, "pfc_from_endpoint");
    case ns3::FrameKind::Malformed:
        break;
    }
    return Drop(f, ns3::FrameErrorName(f.error));
}

} // namespace fabemu
