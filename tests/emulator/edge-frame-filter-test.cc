#include "../pcap-frames.h"
#include "emulator/edge/edge-frame-filter.h"
#include "emulator/edge/edge-port.h"

#include <doctest/doctest.h>

#include <random>

using namespace fabemu;

TEST_CASE("every frame of real rxe and siw traffic is admitted")
{
    for (const char* name : {"rxe-rc-write-ipv4.pcap", "rxe-rc-send-ipv6.pcap",
                             "rxe-rping-rdmacm-ipv4.pcap", "siw-rping-iwarp.pcap"})
    {
        CAPTURE(name);
        EdgeFrameFilter filter(1500);
        size_t n = 0;
        for (const auto& frame : ReadPcapFrames(TestData(name)))
        {
            ++n;
            const auto v = filter.Classify(frame.data(), frame.size());
            CHECK_MESSAGE(v.admit, "dropped as " << v.reason);
        }
        CHECK(n > 10);
        CHECK(filter.Admitted() == n);
        CHECK(filter.Dropped() == 0);
    }
}

TEST_CASE("runts, oversize, non-IP and corrupted frames are dropped by reason")
{
    const auto frames = ReadPcapFrames(TestData("rxe-rc-write-ipv4.pcap"));
    std::vector<uint8_t> roce;
    for (const auto& f : frames)
    {
        if (ns3::ParseEthernetFrame(f.data(), f.size()).kind == ns3::FrameKind::Roce &&
            f.size() > 1000)
        {
            roce = f;
            break;
        }
    }
    REQUIRE(!roce.empty());

    EdgeFrameFilter filter(512); // this frame carries a 1024-byte RoCE payload
    CHECK(filter.Classify(roce.data(), roce.size()).reason == "oversize");

    EdgeFrameFilter f(1500);
    CHECK(f.Classify(roce.data(), 6).reason == "runt");
    auto lldp = roce;
    lldp[12] = 0x88;
    lldp[13] = 0xcc;
    CHECK(f.Classify(lldp.data(), lldp.size()).reason == "unsupported_ethertype");
    auto flipped = roce;
    flipped[roce.size() - 10] ^= 0xff;
    CHECK(f.Classify(flipped.data(), flipped.size()).reason == "bad_icrc");
    CHECK(f.Dropped() == 3);
    CHECK(f.DropsByReason().at("runt") == 1);
    CHECK(f.DropsByReason().at("bad_icrc") == 1);
}

TEST_CASE("fuzz: mutated and random frames never crash the filter and are all counted")
{
    // Bounded: a fixed seed and a fixed count, so the test is repeatable.
    std::mt19937 rng(4791);
    const auto frames = ReadPcapFrames(TestData("rxe-rping-rdmacm-ipv4.pcap"));
    REQUIRE(!frames.empty());
    EdgeFrameFilter filter(4200);
    uint64_t n = 0;
    for (int round = 0; round < 20000; ++round)
    {
        std::vector<uint8_t> f = frames[rng() % frames.size()];
        switch (rng() % 4)
        {
        case 0: // flip a few bytes
            for (int k = 0; k < 1 + static_cast<int>(rng() % 4); ++k)
            {
                f[rng() % f.size()] = static_cast<uint8_t>(rng());
            }
            break;
        case 1: // truncate
            f.resize(rng() % f.size());
            break;
        case 2: // pure garbage
            f.assign(rng() % 1600, 0);
            for (auto& b : f)
            {
                b = static_cast<uint8_t>(rng());
            }
            break;
        default: // extend with junk
            f.resize(f.size() + rng() % 64, 0xa5);
        }
        filter.Classify(f.data(), f.size());
        ++n;
    }
    CHECK(filter.Admitted() + filter.Dropped() == n);
    CHECK(filter.Dropped() > n / 4);
}

TEST_CASE("the edge's priority: RoCEv2 the RoCE class, other IP its DSCP, the rest 0")
{
    using ns3::FrameKind;
    using ns3::ParseEthernetFrame;
    std::vector<uint8_t> roce;
    std::vector<uint8_t> tcp;
    for (const auto& f : ReadPcapFrames(TestData("rxe-rping-rdmacm-ipv4.pcap")))
    {
        if (roce.empty() && ParseEthernetFrame(f.data(), f.size()).kind == FrameKind::Roce)
        {
            roce = f;
        }
    }
    for (const auto& f : ReadPcapFrames(TestData("siw-rping-iwarp.pcap")))
    {
        const auto parsed = ParseEthernetFrame(f.data(), f.size());
        if (tcp.empty() && parsed.kind == FrameKind::Ip && parsed.ipVersion == 4 &&
            parsed.ipProtocol == 6)
        {
            tcp = f;
        }
    }
    REQUIRE(!roce.empty());
    REQUIRE(!tcp.empty());
    // rxe wrote DSCP 0; the NIC still puts RoCEv2 on the RoCE priority.
    CHECK(EdgePriority(ParseEthernetFrame(roce.data(), roce.size()), 3) == 3);
    CHECK(EdgePriority(ParseEthernetFrame(roce.data(), roce.size()), 5) == 5);
    CHECK(EdgePriority(ParseEthernetFrame(tcp.data(), tcp.size()), 3) == 0); // DSCP 0
    for (const auto& [tos, prio] : {std::pair{0x60, 3}, std::pair{0x62, 3}, std::pair{0xb8, 5},
                                    std::pair{0x20, 1}, std::pair{0xe0, 7}})
    {
        CAPTURE(tos);
        auto marked = tcp;
        marked[15] = static_cast<uint8_t>(tos); // IPv4 TOS (the checksum is not read here)
        CHECK(EdgePriority(ParseEthernetFrame(marked.data(), marked.size()), 3) == prio);
    }
    auto arp = tcp;
    arp[12] = 0x08;
    arp[13] = 0x06;
    CHECK(EdgePriority(ParseEthernetFrame(arp.data(), arp.size()), 3) == 0);
}
