// The PCIe arithmetic against the specification's figures, and the checks
// that refuse values the specification does not allow, with their messages.
#include "ns3/pcie-helper.h"
#include "ns3/pcie-spec.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

#include <doctest/doctest.h>

using namespace ns3;

TEST_CASE("lane rates and encodings give the published per-direction bandwidths")
{
    CHECK(PcieLinkBytesPerSecond(1, 1) == doctest::Approx(250e6));
    CHECK(PcieLinkBytesPerSecond(2, 16) == doctest::Approx(8e9));
    CHECK(PcieLinkBytesPerSecond(3, 1) == doctest::Approx(984.6e6).epsilon(0.001)); // "985 MBPS"
    CHECK(PcieLinkBytesPerSecond(3, 16) == doctest::Approx(15.75e9).epsilon(0.001));
    CHECK(PcieLinkBytesPerSecond(4, 16) == doctest::Approx(31.5e9).epsilon(0.001));
    CHECK(PcieLinkBytesPerSecond(5, 16) == doctest::Approx(63.0e9).epsilon(0.001));
    CHECK(PcieLinkBytesPerSecond(6, 16) == doctest::Approx(128e9));
}

TEST_CASE(
    "a TLP costs 8 bytes of framing, sequence number and LCRC before Gen6, flit share in Gen6")
{
    CHECK(PcieTlpWireBytes(1, 12, 256, false) == 276);
    CHECK(PcieTlpWireBytes(3, 16, 256, true) == 284);
    CHECK(PcieTlpWireBytes(5, 12, 0, false) == 20);
    CHECK(PcieTlpWireBytes(6, 12, 224, false) ==
          doctest::Approx(256.0)); // exactly one flit's TLP bytes
    CHECK(PcieDllpWireBytes(4) == 8);
    CHECK(PcieDllpWireBytes(6) == 0);
    // Intel AN 456: 256 B payload, 3DW header: 256 / (256 + 20) = 92.75 %.
    CHECK(256.0 / PcieTlpWireBytes(3, 12, 256, false) == doctest::Approx(0.9275).epsilon(0.001));
}

TEST_CASE("the Ack latency limit and replay timer follow the spec's 2.5 GT/s table")
{
    // Table rows: MPS 128 x1 -> 237 symbols, x8 -> 67, x16 -> 48; MPS 512 x16 -> 86.
    CHECK(PcieSymbolTime(1) == NanoSeconds(4));
    CHECK(PcieAckLatencyLimit(1, 1, 128).GetNanoSeconds() ==
          doctest::Approx(237.4 * 4).epsilon(0.001));
    CHECK(PcieAckLatencyLimit(1, 8, 128).GetNanoSeconds() ==
          doctest::Approx(67.75 * 4).epsilon(0.001));
    CHECK(PcieAckLatencyLimit(1, 16, 128).GetNanoSeconds() ==
          doctest::Approx(48.25 * 4).epsilon(0.001));
    CHECK(PcieAckLatencyLimit(1, 16, 512).GetNanoSeconds() ==
          doctest::Approx(86.5 * 4).epsilon(0.001));
    CHECK(PcieReplayTimerLimit(1, 1, 128) == 3 * PcieAckLatencyLimit(1, 1, 128));
    // Gen3: symbol = 8 UI = 1 ns, internal delay 115 symbols.
    CHECK(PcieAckLatencyLimit(3, 16, 256).GetPicoSeconds() ==
          doctest::Approx((284 * 3.0 / 16 + 115) * 1000));
}

TEST_CASE("values the spec does not allow are refused with a message naming them")
{
    CHECK(PcieCheckWidth(3) == "Width x3 is not a PCIe link width (1, 2, 4, 8 or 16)");
    CHECK(PcieCheckWidth(16).empty());
    CHECK(PcieCheckGeneration(7) == "Generation 7 is not a PCIe generation (1 to 6)");
    CHECK(PcieCheckGeneration(0) != "");
    CHECK(PcieCheckSizeEncoding("MaxPayloadSize", 300) ==
          "MaxPayloadSize 300 is not a power of two from 128 to 4096 bytes");
    CHECK(PcieCheckSizeEncoding("MaxPayloadSize", 64) != "");
    CHECK(PcieCheckSizeEncoding("MaxPayloadSize", 8192) != "");
    CHECK(PcieCheckSizeEncoding("MaxPayloadSize", 4096).empty());
    CHECK(PcieCheckRcb(32) != "");
}

TEST_CASE("the helper refuses a bad configuration without aborting and builds nothing")
{
    {
        PcieHelper h;
        h.SetLinkAttribute("Generation", UintegerValue(7));
        CHECK(h.Check() == "ns3::PcieLink: Generation 7 is not a PCIe generation (1 to 6)");
        const auto pair = h.Install();
        CHECK_FALSE(pair.Ok());
        CHECK(!pair.a);
    }
    {
        PcieHelper h;
        h.SetLinkAttribute("Width", UintegerValue(3));
        CHECK(h.Install().error ==
              "ns3::PcieLink: Width x3 is not a PCIe link width (1, 2, 4, 8 or 16)");
    }
    {
        PcieHelper h;
        h.SetPortAttribute("MaxPayloadSize", UintegerValue(384));
        CHECK(h.Check() ==
              "ns3::PciePort: MaxPayloadSize 384 is not a power of two from 128 to 4096 bytes");
    }
    {
        PcieHelper h;
        h.SetDmaAttribute("MaxReadRequestSize", UintegerValue(100));
        CHECK(h.Check().rfind("ns3::PcieDmaEngine: MaxReadRequestSize 100", 0) == 0);
    }
    PcieHelper ok;
    CHECK(ok.Check().empty());
    Simulator::Destroy();
}
