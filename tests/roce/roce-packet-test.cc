// A simulated RoCEv2 packet keeps its zero payload virtual, and a switch's routes keep
// each destination's ECMP ports in the order they were added (issue 22's memory work).
#include "ns3/roce-icrc.h"
#include "ns3/roce-net-device.h"
#include "ns3/roce-packet.h"
#include "ns3/roce-switch.h"
#include "ns3/simulator.h"

#include <doctest/doctest.h>

#include <vector>

using namespace ns3;

TEST_CASE("MakeRoceV2Packet: real headers and ICRC around a payload ns-3 never allocates")
{
    RoceFrameSpec spec;
    spec.transport.opcode = 0x0a; // RC WRITE Only
    spec.transport.payload = 4096;
    const Ptr<Packet> p = MakeRoceV2Packet(spec, true);
    const uint32_t size = p->GetSize();
    CHECK(size == RoceV2HeaderBytes(spec) + 4096 + kIcrcSize);
    // Serialised, a buffer's zero area is a count, not bytes: a payload written out as real
    // zeros (Packet::AddAtEnd of a second packet does that) would add its 4 KB here.
    CHECK(p->GetSerializedSize() < 600);
    // The bytes are the frame's all the same: the ICRC at the end checks.
    std::vector<uint8_t> bytes(size);
    p->CopyData(bytes.data(), size);
    const ParsedFrame f = ParseEthernetFrame(bytes.data(), size, true);
    CHECK(f.error == FrameError::None); // BadIcrc if the trailer were misplaced
    CHECK(f.payloadLength == 4096);
    ByteTrailer icrc(kIcrcSize);
    p->RemoveTrailer(icrc);
    CHECK(p->GetSize() == size - kIcrcSize);
    CHECK(ReadIcrc(icrc.Data()) == f.icrc);
}

namespace
{

/// A switch with four ports and no routes.
Ptr<RoceSwitch>
FourPortSwitch()
{
    Ptr<RoceSwitch> sw = CreateObject<RoceSwitch>();
    for (int i = 0; i < 4; ++i)
    {
        Ptr<RoceNetDevice> dev = CreateObject<RoceNetDevice>();
        dev->SetNode(CreateObject<Node>());
        dev->SetAddress(Mac48Address::Allocate());
        sw->AddPort(dev);
    }
    return sw;
}

} // namespace

TEST_CASE("RoceSwitch routes: each destination's ports in the order added, shared sets apart, "
          "any address")
{
    Ptr<RoceSwitch> sw = FourPortSwitch();
    const Ipv4Address a("10.0.0.1");
    const Ipv4Address b("10.0.0.2");
    const Ipv4Address c("10.0.0.3");
    // Interleaved, as a helper adds ECMP routes host by host and link by link.
    sw->AddRoute(c, 2);
    sw->AddRoute(a, 2);
    sw->AddRoute(b, 1);
    sw->AddRoute(a, 3);
    sw->AddRoute(b, 0);
    sw->AddRoute(c, 3);
    CHECK(sw->GetRoute(a) == std::vector<uint32_t>{2, 3});
    CHECK(sw->GetRoute(b) == std::vector<uint32_t>{1, 0}); // not sorted: the order given
    CHECK(sw->GetRoute(c) == std::vector<uint32_t>{2, 3}); // the same set as a's
    sw->AddRoute(c, 0);                                    // c's set changes, a's does not
    CHECK(sw->GetRoute(c) == std::vector<uint32_t>{2, 3, 0});
    CHECK(sw->GetRoute(a) == std::vector<uint32_t>{2, 3});
    CHECK(sw->GetRoute(Ipv4Address("10.0.0.9")).empty());
    // The table starts at the first address routed (c): a and b, below it, and an
    // address far above it are kept aside, and the gaps inside it route nowhere.
    sw->AddRoute(Ipv4Address("10.0.0.6"), 1);
    sw->AddRoute(Ipv4Address("11.0.0.1"), 3);
    CHECK(sw->GetRoute(Ipv4Address("10.0.0.6")) == std::vector<uint32_t>{1});
    CHECK(sw->GetRoute(Ipv4Address("11.0.0.1")) == std::vector<uint32_t>{3});
    CHECK(sw->GetRoute(Ipv4Address("10.0.0.5")).empty());
    CHECK(sw->GetRoute(Ipv4Address("10.0.0.4")).empty());
    CHECK(sw->GetRoute(b) == std::vector<uint32_t>{1, 0});
    // Cleared and routed again from a lower first address.
    sw->ClearRoutes();
    CHECK(sw->GetRoute(c).empty());
    sw->AddRoute(b, 2);
    sw->AddRoute(c, 0);
    sw->AddRoute(a, 1);
    CHECK(sw->GetRoute(a) == std::vector<uint32_t>{1});
    CHECK(sw->GetRoute(b) == std::vector<uint32_t>{2});
    CHECK(sw->GetRoute(c) == std::vector<uint32_t>{0});
    CHECK(sw->GetRoute(Ipv4Address("11.0.0.1")).empty());
    Simulator::Destroy();
}

TEST_CASE("RoceSwitch routes: a switch with more port sets than its table's byte numbers keeps "
          "the later ones aside, and routes every destination")
{
    Ptr<RoceSwitch> sw = FourPortSwitch();
    // 400 consecutive destinations, each with its own sequence of five ports (its number
    // in base 4): 400 distinct sets, and their prefixes, numbered well past 255.
    const uint32_t first = Ipv4Address("10.1.0.0").Get();
    auto ports = [](uint32_t i) {
        std::vector<uint32_t> v;
        for (int digit = 0; digit < 5; ++digit, i /= 4)
        {
            v.push_back(i % 4);
        }
        return v;
    };
    for (uint32_t i = 0; i < 400; ++i)
    {
        for (const uint32_t port : ports(i))
        {
            sw->AddRoute(Ipv4Address(first + i), port);
        }
    }
    sw->AddRoute(Ipv4Address(first + 402), 1); // a gap at 400 and 401
    int wrong = 0;
    for (uint32_t i = 0; i < 400; ++i)
    {
        wrong += sw->GetRoute(Ipv4Address(first + i)) != ports(i) ? 1 : 0;
    }
    CHECK(wrong == 0);
    CHECK(sw->GetRoute(Ipv4Address(first + 400)).empty());
    CHECK(sw->GetRoute(Ipv4Address(first + 401)).empty());
    CHECK(sw->GetRoute(Ipv4Address(first + 402)) == std::vector<uint32_t>{1});
    Simulator::Destroy();
}
