// ARP and neighbour discovery at the edge, against real kernels: the replies the
// two VMs of a real rxe capture sent each other are what the responder must write.
#include "../pcap-frames.h"
#include "emulator/edge/neighbour-responder.h"

#include <doctest/doctest.h>

using namespace fabemu;
using namespace ns3;

namespace
{

/// The two VMs of the captures: 10.0.0.1 at 52:54:00:00:00:01, 10.0.0.2 at ...:02.
std::vector<EndpointAddress>
CaptureDirectory()
{
    std::vector<EndpointAddress> d(2);
    for (uint8_t i = 0; i < 2; ++i)
    {
        d[i].ipv4 = 0x0a000001u + i;
        d[i].mac = {0x52, 0x54, 0, 0, 0, static_cast<uint8_t>(i + 1)};
    }
    return d;
}

ParsedFrame
Parse(const std::vector<uint8_t>& frame)
{
    return ParseEthernetFrame(frame.data(), frame.size(), false);
}

} // namespace

TEST_CASE("the ARP reply and neighbour advertisement are the real kernels' own, byte for byte")
{
    // rxe-rc-send-ipv6: frame 15 asks who has 10.0.0.1 and 16 is the answer; frame 22
    // solicits fe80::5054:ff:fe00:2 and 23 advertises it (solicited, override).
    const auto frames = ReadPcapFrames(TestData("rxe-rc-send-ipv6.pcap"));
    REQUIRE(frames.size() > 23);
    NeighbourResponder responder(CaptureDirectory());

    const auto arp = responder.Handle(frames[14], Parse(frames[14]));
    REQUIRE(arp.verdict == NeighbourResponder::Verdict::Answer);
    CHECK(arp.arp);
    CHECK(arp.reply == frames[15]);

    const auto na = responder.Handle(frames[21], Parse(frames[21]));
    REQUIRE(na.verdict == NeighbourResponder::Verdict::Answer);
    CHECK_FALSE(na.arp);
    CHECK(na.reply == frames[22]); // checksum included
}

TEST_CASE("duplicate address detection, unknown targets and other ICMPv6 are not answered")
{
    const auto frames = ReadPcapFrames(TestData("rxe-rc-send-ipv6.pcap"));
    NeighbourResponder responder(CaptureDirectory());
    // Frame 6: a solicitation from :: (DAD) for the VM's own address.
    const auto dad = responder.Handle(frames[5], Parse(frames[5]));
    CHECK(dad.verdict == NeighbourResponder::Verdict::Keep);
    CHECK(dad.reason == "neighbour_discovery_kept_at_edge");
    // Frame 1: an MLDv2 report, routed like any IPv6.
    CHECK(responder.Handle(frames[0], Parse(frames[0])).verdict ==
          NeighbourResponder::Verdict::NotMine);

    NeighbourResponder stranger({CaptureDirectory()[1]}); // knows 10.0.0.2 alone
    const auto arp = stranger.Handle(frames[14], Parse(frames[14]));
    CHECK(arp.verdict == NeighbourResponder::Verdict::Keep);
    CHECK(arp.reason == "arp_unknown_target");
    auto reply = frames[15]; // an ARP reply is no request
    const auto notRequest = stranger.Handle(reply, Parse(reply));
    CHECK(notRequest.reason == "arp_not_a_request");
    // 10.0.0.1 solicits 10.0.0.2's link-local address, which a directory of 10.0.0.1
    // alone does not hold; nor is the asker ever answered about itself.
    const auto d = CaptureDirectory();
    NeighbourResponder self({d[0]});
    const auto unknown = self.Handle(frames[21], Parse(frames[21]));
    CHECK(unknown.verdict == NeighbourResponder::Verdict::Keep);
    CHECK(unknown.reason == "neighbour_unknown_target");
    auto asksItself = frames[21];
    std::copy(d[1].mac.begin(), d[1].mac.end(), asksItself.begin() + 6);
    CHECK(responder.Handle(asksItself, Parse(asksItself)).reason == "neighbour_unknown_target");
}
