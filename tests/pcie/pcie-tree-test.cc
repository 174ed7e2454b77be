// Trees of PCIe links: a switch's cut-through latency, routing that keeps
// peer-to-peer traffic under a switch, ACS redirect through the root complex,
// DMA to host memory at the narrowest link's framing limit, Intel's 64-byte
// P2P split, and the transfer API's completion callbacks.
#include "ns3/boolean.h"
#include "ns3/data-rate.h"
#include "ns3/pcie-helper.h"
#include "ns3/pcie-spec.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

#include <doctest/doctest.h>

#include <cmath>
#include <vector>

using namespace ns3;

namespace
{

PcieTreeSpec::Device
Dev(PcieDeviceKind kind, uint32_t gen = 0, uint32_t width = 0)
{
    PcieTreeSpec::Device d;
    d.kind = kind;
    d.link = {gen, width};
    return d;
}

/// One switch with gpu0 and nic0 under it.
PcieTreeSpec
OneSwitch(uint32_t upGen = 0, uint32_t upWidth = 0, uint32_t devGen = 0, uint32_t devWidth = 0)
{
    PcieTreeSpec spec;
    PcieTreeSpec::Switch sw;
    sw.upstream = {upGen, upWidth};
    sw.devices = {Dev(PcieDeviceKind::Gpu, devGen, devWidth),
                  Dev(PcieDeviceKind::Nic, devGen, devWidth)};
    spec.switches.push_back(sw);
    return spec;
}

PcieHelper
Helper(uint32_t gen, uint32_t width)
{
    PcieHelper h;
    h.SetLinkAttribute("Generation", UintegerValue(gen));
    h.SetLinkAttribute("Width", UintegerValue(width));
    h.SetPortAttribute("MaxPayloadSize", UintegerValue(256));
    return h;
}

/// Payload bytes/s of a link for TLPs of \p payload bytes with a 3DW header (Gen1-5).
double
FramingLimit(uint32_t gen, uint32_t width, uint32_t payload)
{
    return 1e12 / PcieBytePicoseconds(gen, width) * payload / (payload + 12 + 8);
}

struct Done
{
    std::vector<PcieTransfer> transfers;
    void Add(const PcieTransfer& t) { transfers.push_back(t); }
    double Rate(size_t i = 0) const
    {
        const auto& t = transfers.at(i);
        return double(t.bytes) / (t.completed - t.started).GetSeconds();
    }
};

struct Counter
{
    uint64_t n{0};
    void Tlp(const PcieTlp&) { ++n; }
    void TlpTx(const PcieTlp&, bool) { ++n; }
    void TlpAt(const PcieTlp&, uint32_t) { ++n; }
};

} // namespace

TEST_CASE("one small TLP through one switch takes the switch latency plus one serialisation")
{
    struct Case
    {
        uint32_t gen;
        Time latency;
    };
    for (const Case& c : {Case{4, NanoSeconds(105)}, Case{3, NanoSeconds(150)}})
    {
        CAPTURE(c.gen);
        PcieHelper h = Helper(c.gen, 16);
        h.SetLinkAttribute("Delay", TimeValue(NanoSeconds(5)));
        if (c.gen == 3)
        {
            h.SetSwitchAttribute("Latency", TimeValue(c.latency));
        }
        auto built = h.InstallTree(OneSwitch());
        REQUIRE(built.Ok());
        Ptr<PcieTree> tree = built.tree;
        TimeValue lat;
        tree->GetSwitch("sw0")->GetAttribute("Latency", lat);
        CHECK(lat.Get() == c.latency); // Gen4 default: PEX88000's 105 ns

        Time arrival;
        tree->GetEndpoint("nic0")->GetPort()->TraceConnectWithoutContext(
            "TlpRx", Callback<void, const PcieTlp&>([&arrival](const PcieTlp& t) {
                if (t.kind == PcieTlp::Kind::MemWrite)
                {
                    arrival = Simulator::Now();
                }
            }));
        const Time t0 = MicroSeconds(1); // InitFC long done
        Simulator::Schedule(t0, [&tree]() {
            tree->Write("gpu0", "nic0", 0, 64, Callback<void, const PcieTransfer&>());
        });
        Simulator::Run();
        const Time wire = tree->GetLink("gpu0")->WireTime(PcieTlpWireBytes(c.gen, 12, 64, false));
        const Time expected = t0 + c.latency + wire + NanoSeconds(5) * 2;
        MESSAGE("Gen", c.gen, " x16: 64-byte write arrives after ", (arrival - t0).GetNanoSeconds(),
                " ns; latency + T(84 B) + 2 d = ", (expected - t0).GetNanoSeconds(), " ns");
        CHECK(std::abs((arrival - expected).GetPicoSeconds()) <= 1);
        CHECK(tree->GetRootComplex()->GetTlpsReceived() == 0);
        Simulator::Destroy();
    }
}

TEST_CASE("a GPU-NIC transfer under one switch never reaches the root complex")
{
    PcieHelper h = Helper(4, 16);
    auto built = h.InstallTree(OneSwitch());
    REQUIRE(built.Ok());
    Ptr<PcieTree> tree = built.tree;
    Done done;
    auto cb = MakeCallback(&Done::Add, &done);
    REQUIRE(tree->Write("gpu0", "nic0", 0, 1 << 20, cb) != 0);
    REQUIRE(tree->Read("nic0", "gpu0", 0, 1 << 20, cb) != 0);
    Simulator::Run();
    REQUIRE(done.transfers.size() == 2);
    CHECK(tree->GetRootComplex()->GetTlpsReceived() == 0);
    CHECK(tree->GetSwitch("sw0")->GetPort(PcieSwitch::kUpstream)->GetTlpsSent() == 0);
    CHECK(tree->GetSwitch("sw0")->GetTlpsForwarded() > 4096 + 2048);
    CHECK(tree->GetEndpoint("nic0")->GetMemory()->GetBytesWritten() == 1 << 20);
    Simulator::Destroy();
}

namespace
{

struct AcsRun
{
    double rateAB{0};
    double rateBA{0};
    uint64_t rcTlps{0};
    uint64_t upSent{0};
    uint64_t upReceived{0};
};

AcsRun
RunAcs(bool acs, bool bothWays, uint64_t bytes)
{
    PcieHelper h = Helper(4, 16);
    h.SetSwitchAttribute("AcsRedirect", BooleanValue(acs));
    auto built = h.InstallTree(OneSwitch());
    REQUIRE(built.Ok());
    Ptr<PcieTree> tree = built.tree;
    Done ab;
    Done ba;
    tree->Write("gpu0", "nic0", 0, bytes, MakeCallback(&Done::Add, &ab));
    if (bothWays)
    {
        tree->Write("nic0", "gpu0", 0, bytes, MakeCallback(&Done::Add, &ba));
    }
    Simulator::Run();
    AcsRun r;
    REQUIRE(ab.transfers.size() == 1);
    r.rateAB = ab.Rate();
    if (bothWays)
    {
        REQUIRE(ba.transfers.size() == 1);
        r.rateBA = ba.Rate();
    }
    r.rcTlps = tree->GetRootComplex()->GetTlpsReceived();
    Ptr<PciePort> up = tree->GetSwitch("sw0")->GetPort(PcieSwitch::kUpstream);
    r.upSent = up->GetTlpsSent();
    r.upReceived = up->GetTlpsDelivered();
    Simulator::Destroy();
    return r;
}

} // namespace

TEST_CASE("with ACS redirect, P2P crosses the upstream link twice and two-way traffic gets half")
{
    const uint64_t bytes = 8 << 20;
    const uint64_t tlps = bytes / 256;
    const AcsRun direct = RunAcs(false, true, bytes);
    const AcsRun acs = RunAcs(true, true, bytes);
    const AcsRun acsOneWay = RunAcs(true, false, bytes);
    CHECK(direct.rcTlps == 0);
    // Each direction's TLPs go up to the root complex and come back down.
    CHECK(acs.rcTlps == 2 * tlps);
    CHECK(acs.upSent == 2 * tlps);
    CHECK(acs.upReceived == 2 * tlps);
    CHECK(acsOneWay.upSent == tlps);
    CHECK(acsOneWay.upReceived == tlps);
    const double ratioAB = acs.rateAB / direct.rateAB;
    const double ratioBA = acs.rateBA / direct.rateBA;
    MESSAGE("Gen4 x16, 8 MiB each way: direct ", direct.rateAB / 1e9, " / ", direct.rateBA / 1e9,
            " GB/s; ACS ", acs.rateAB / 1e9, " / ", acs.rateBA / 1e9, " GB/s (ratio ", ratioAB,
            " / ", ratioBA, "); ACS one way ", acsOneWay.rateAB / 1e9, " GB/s");
    // At most half, and within 5 % of half (the up link also carries the DLLPs of the down one).
    CHECK(ratioAB <= 0.5);
    CHECK(ratioAB >= 0.475);
    CHECK(ratioBA <= 0.5);
    CHECK(ratioBA >= 0.475);
    // One way, the two crossings use the link's two directions: no halving.
    CHECK(acsOneWay.rateAB / direct.rateAB > 0.9);
}

TEST_CASE("a GPU's DMA write to host memory runs at the framing limit of the narrowest link")
{
    struct Case
    {
        uint32_t upGen, upWidth, devGen, devWidth;
    };
    for (const Case& c : {Case{4, 8, 5, 16}, Case{5, 16, 4, 8}, Case{5, 16, 5, 16}})
    {
        CAPTURE(c.upGen);
        CAPTURE(c.upWidth);
        CAPTURE(c.devGen);
        CAPTURE(c.devWidth);
        PcieHelper h = Helper(4, 16);
        auto built = h.InstallTree(OneSwitch(c.upGen, c.upWidth, c.devGen, c.devWidth));
        REQUIRE(built.Ok());
        Ptr<PcieTree> tree = built.tree;
        Done done;
        const uint64_t bytes = 16 << 20;
        tree->Write("gpu0", "mem", 0, bytes, MakeCallback(&Done::Add, &done));
        Simulator::Run();
        REQUIRE(done.transfers.size() == 1);
        const double limit = std::min(FramingLimit(c.upGen, c.upWidth, 256),
                                      FramingLimit(c.devGen, c.devWidth, 256));
        MESSAGE("up Gen", c.upGen, " x", c.upWidth, ", device Gen", c.devGen, " x", c.devWidth,
                ": ", done.Rate() / 1e9, " GB/s, limit ", limit / 1e9, " GB/s");
        CHECK(done.Rate() == doctest::Approx(limit).epsilon(0.005));
        CHECK(done.Rate() <= limit);
        CHECK(tree->GetRootComplex()->GetHostMemory()->GetBytesWritten() == bytes);
        Simulator::Destroy();
    }
}

TEST_CASE("with Intel P2P, GPU-to-GPU through the root complex runs at 64-byte TLP efficiency")
{
    for (const bool intel : {false, true})
    {
        CAPTURE(intel);
        PcieHelper h = Helper(4, 16);
        h.SetRootComplexAttribute("IntelP2p", BooleanValue(intel));
        PcieTreeSpec spec;
        spec.rootDevices = {Dev(PcieDeviceKind::Gpu), Dev(PcieDeviceKind::Gpu)};
        auto built = h.InstallTree(spec);
        REQUIRE(built.Ok());
        Ptr<PcieTree> tree = built.tree;
        Done done;
        const uint64_t bytes = 8 << 20;
        tree->Write("gpu0", "gpu1", 0, bytes, MakeCallback(&Done::Add, &done));
        Simulator::Run();
        REQUIRE(done.transfers.size() == 1);
        const double expected = FramingLimit(4, 16, intel ? 64 : 256);
        MESSAGE((intel ? "Intel P2P" : "plain P2P"), ", Gen4 x16: ", done.Rate() / 1e9,
                " GB/s, expected ", expected / 1e9, " GB/s (", done.Rate() / expected, ")");
        CHECK(done.Rate() == doctest::Approx(expected).epsilon(intel ? 0.02 : 0.005));
        CHECK(tree->GetRootComplex()->GetP2pTlpsSent() == bytes / (intel ? 64 : 256));
        CHECK(tree->GetEndpoint("gpu1")->GetMemory()->GetBytesWritten() == bytes);
        Simulator::Destroy();
    }
}

TEST_CASE("the transfer API reads and writes any memory and reports bytes, start and end")
{
    PcieHelper h = Helper(4, 16);
    PcieTreeSpec spec = OneSwitch();
    spec.rootDevices = {Dev(PcieDeviceKind::Gpu)};
    auto built = h.InstallTree(spec);
    REQUIRE(built.Ok());
    Ptr<PcieTree> tree = built.tree;
    CHECK(tree->GetEndpointNames() == std::vector<std::string>{"gpu0", "nic0", "gpu1"});
    CHECK(tree->CheckTransfer("gpu9", "mem", 0, 1) == "no endpoint named 'gpu9'");
    CHECK(tree->CheckTransfer("gpu0", "disk", 0, 1) ==
          "no memory named 'disk' (host memory is 'mem')");
    CHECK(tree->CheckTransfer("gpu0", "gpu1", 1, uint64_t(1) << 36) != "");
    CHECK(tree->Write("gpu0", "gpu9", 0, 1, Callback<void, const PcieTransfer&>()) == 0);

    Done done;
    auto cb = MakeCallback(&Done::Add, &done);
    Simulator::Schedule(MicroSeconds(1), [&]() {
        tree->Read("nic0", "mem", 4096, 65536, cb); // NIC reads a host buffer
        tree->Read("gpu0", "gpu1", 0, 65536, cb);   // P2P read through the root complex
        tree->Write("gpu1", "nic0", 0, 4096, cb);   // doorbell-like write across the tree
        tree->Write("gpu0", "mem", 0, 0, cb);       // nothing to move: done at once
        tree->Read("gpu1", "mem", 0, 0, cb);        // the same for a read
    });
    Simulator::Run();
    REQUIRE(done.transfers.size() == 5);
    for (const auto& t : done.transfers)
    {
        CAPTURE(t.bytes);
        CHECK(t.started == MicroSeconds(1));
        CHECK(t.completed >= t.started);
    }
    CHECK(done.transfers[0].bytes == 0);
    CHECK(done.transfers[1].bytes == 0);
    CHECK(done.transfers[1].completed == MicroSeconds(1));
    uint64_t read = 0;
    for (const auto& t : done.transfers)
    {
        read += t.write ? 0 : t.bytes;
    }
    CHECK(read == 2 * 65536);
    CHECK(tree->GetEndpoint("nic0")->GetMemory()->GetBytesWritten() == 4096);
    CHECK(tree->GetSwitch("sw0")->GetTlpsUnroutable() == 0);
    CHECK(tree->GetRootComplex()->GetTlpsUnroutable() == 0);
    Simulator::Destroy();
}

TEST_CASE("a tree with a link the spec does not allow is refused, naming the link")
{
    PcieHelper h = Helper(4, 16);
    auto built = h.InstallTree(OneSwitch(4, 3));
    CHECK_FALSE(built.Ok());
    CHECK(built.error == "ns3::PcieLink above 'sw0': Width x3 is not a PCIe link width (1, 2, 4, "
                         "8 or 16)");
    PcieTreeSpec dup = OneSwitch();
    dup.switches[0].devices[1].name = "gpu0";
    CHECK(h.InstallTree(dup).error == "PcieTreeSpec: name 'gpu0' used twice");
}

TEST_CASE("a GPU's copy engines run two transfers side by side; one engine runs them in turn")
{
    for (const uint32_t engines : {1u, 2u})
    {
        CAPTURE(engines);
        PcieHelper h = Helper(4, 16);
        h.SetGpuEndpointAttribute("DmaEngines", UintegerValue(engines));
        PcieTreeSpec spec = OneSwitch();
        spec.switches[0].devices.push_back(Dev(PcieDeviceKind::Gpu)); // gpu1
        auto built = h.InstallTree(spec);
        REQUIRE(built.Ok());
        Ptr<PcieTree> tree = built.tree;
        CHECK(tree->GetEndpoint("gpu0")->GetNDmas() == engines);
        CHECK(tree->GetEndpoint("nic0")->GetNDmas() == 1);
        Done done;
        const uint64_t bytes = 4 << 20;
        auto cb = MakeCallback(&Done::Add, &done);
        tree->Write("gpu0", "gpu1", 0, bytes, cb);
        tree->Write("gpu0", "nic0", 0, bytes, cb);
        tree->Read("gpu0", "gpu1", 0, 65536, cb); // completions find the engine by tag
        Simulator::Run();
        REQUIRE(done.transfers.size() == 3);
        Time firstWrite = Time::Max();
        Time lastWrite;
        for (const auto& t : done.transfers)
        {
            if (t.write)
            {
                firstWrite = std::min(firstWrite, t.completed);
                lastWrite = std::max(lastWrite, t.completed);
            }
        }
        const double ratio = firstWrite.GetSeconds() / lastWrite.GetSeconds();
        MESSAGE(engines, " engine(s): the writes end at ", firstWrite.GetMicroSeconds(), " and ",
                lastWrite.GetMicroSeconds(), " us");
        // Both share the gpu0 link: the pair takes 2 x 4 MiB at the link's rate either way.
        CHECK(double(2 * bytes) / lastWrite.GetSeconds() ==
              doctest::Approx(FramingLimit(4, 16, 256)).epsilon(0.01));
        if (engines == 1)
        {
            CHECK(ratio == doctest::Approx(0.5).epsilon(0.02));
        }
        else
        {
            CHECK(ratio > 0.98);
        }
        Simulator::Destroy();
    }
}

TEST_CASE("with a second socket, traffic between sockets runs at the socket link's bandwidth")
{
    PcieHelper h = Helper(4, 16);
    PcieTreeSpec spec;
    spec.sockets = 2;
    spec.rootDevices = {Dev(PcieDeviceKind::Gpu), Dev(PcieDeviceKind::Gpu)};
    spec.rootDevices[1].socket = 1;
    auto built = h.InstallTree(spec);
    REQUIRE(built.Ok());
    Ptr<PcieTree> tree = built.tree;
    REQUIRE(tree->GetRootComplex(1));
    DataRateValue upi;
    tree->GetSocketLink()->GetAttribute("Bandwidth", upi);
    Done done;
    const uint64_t bytes = 4 << 20;
    tree->Write("gpu0", "gpu1", 0, bytes, MakeCallback(&Done::Add, &done));
    Simulator::Run();
    REQUIRE(done.transfers.size() == 1);
    // The socket link carries header + payload bytes: 256 of every 268.
    const double expected = upi.Get().GetBitRate() / 8.0 * 256 / 268;
    MESSAGE("gpu0 (socket 0) -> gpu1 (socket 1): ", done.Rate() / 1e9, " GB/s, socket link ",
            expected / 1e9, " GB/s of payload");
    CHECK(done.Rate() == doctest::Approx(expected).epsilon(0.01));
    CHECK(tree->GetRootComplex(1)->GetTlpsFromSocket() == bytes / 256);
    CHECK(tree->GetEndpoint("gpu1")->GetMemory()->GetBytesWritten() == bytes);

    // Reads across: gpu1 reads socket 0's memory, gpu0 reads socket 1's; both come back.
    Done reads;
    tree->Read("gpu1", "mem", 0, 65536, MakeCallback(&Done::Add, &reads));
    tree->Read("gpu0", "mem1", 0, 65536, MakeCallback(&Done::Add, &reads));
    tree->Write("gpu0", "mem1", 0, 65536, MakeCallback(&Done::Add, &reads));
    Simulator::Run();
    CHECK(reads.transfers.size() == 3);
    CHECK(tree->GetRootComplex(1)->GetHostMemory()->GetBytesWritten() == 65536);
    CHECK(tree->GetRootComplex(0)->GetTlpsUnroutable() == 0);
    CHECK(tree->GetRootComplex(1)->GetTlpsUnroutable() == 0);
    Simulator::Destroy();

    PcieTreeSpec bad = spec;
    bad.sockets = 1;
    CHECK(h.InstallTree(bad).error == "PcieTreeSpec: 'gpu1' on socket 1 of 1");
}

TEST_CASE("a slow memory behind a switch holds the writer to its bandwidth through switch credits")
{
    PcieHelper h = Helper(4, 16);
    h.SetNicMemoryAttribute("Bandwidth", DataRateValue(DataRate("40Gbps"))); // 5 GB/s
    auto built = h.InstallTree(OneSwitch());
    REQUIRE(built.Ok());
    Ptr<PcieTree> tree = built.tree;
    Ptr<PcieSwitch> sw = tree->GetSwitch("sw0");
    size_t maxQueued = 0;
    sw->TraceConnectWithoutContext(
        "Forward", Callback<void, const PcieTlp&, uint32_t, uint32_t>([&](const PcieTlp&, uint32_t,
                                                                          uint32_t out) {
            maxQueued = std::max(maxQueued, sw->GetPort(out)->GetQueued(PcieFcType::Posted));
        }));
    Done done;
    const uint64_t bytes = 2 << 20;
    tree->Write("gpu0", "nic0", 0, bytes, MakeCallback(&Done::Add, &done));
    Simulator::Run();
    REQUIRE(done.transfers.size() == 1);
    MESSAGE("memory at 5 GB/s behind the switch: ", done.Rate() / 1e9, " GB/s; at most ", maxQueued,
            " TLPs queued at the switch's egress");
    CHECK(done.Rate() == doctest::Approx(5e9).epsilon(0.01));
    // The egress queue holds no more than the ingress buffer advertised (InitPH 64;
    // InitPD 1024 credits = 64 TLPs of 256 B).
    CHECK(maxQueued <= 64);
    CHECK(maxQueued >= 32); // and the buffer is really used: the backlog sits in the switch
    for (uint32_t i = 0; i < sw->GetNPorts(); ++i)
    {
        CHECK(sw->GetPort(i)->GetOverflows() == 0);
    }
    CHECK(tree->GetEndpoint("nic0")->GetPort()->GetOverflows() == 0);
    Simulator::Destroy();
}

TEST_CASE("a request for an address nobody owns goes up and is dropped at the root complex")
{
    PcieHelper h = Helper(4, 16);
    auto built = h.InstallTree(OneSwitch());
    REQUIRE(built.Ok());
    Ptr<PcieTree> tree = built.tree;
    uint64_t base = 0;
    uint64_t size = 0;
    REQUIRE(tree->GetBase("nic0", base, size));
    tree->GetEndpoint("gpu0")->GetDma()->Write(base + 64 * size, 256); // past every window
    Simulator::Run();
    CHECK(tree->GetSwitch("sw0")->GetTlpsUnroutable() == 0);
    CHECK(tree->GetRootComplex()->GetTlpsReceived() == 1);
    CHECK(tree->GetRootComplex()->GetTlpsUnroutable() == 1);
    Simulator::Destroy();
}

TEST_CASE("host memory calibration: a GPU reads host memory on Gen5 x16 at the measured H2D rate")
{
    // ref 2.1: H2D 54.8 GB/s on Gen5 x16 (an 8xH100 node, vpbenchmarking [S]). The model's host
    // memory completes reads in 128-byte pieces: each 512-byte read (MRRS) comes down as four
    // 148-byte completions beside an UpdateFC-NP and an eighth of an Ack (8 bytes each):
    // 63 GB/s x 512 / (4 x 148 + 9) = 53.67 GB/s, 2.1 % under the measurement.
    PcieHelper h = Helper(5, 16);
    PcieTreeSpec spec;
    spec.rootDevices.push_back(Dev(PcieDeviceKind::Gpu));
    PcieHelper::Tree t = h.InstallTree(spec);
    REQUIRE(t.Ok());
    struct Rate
    {
        double bytesPerSecond{0};
        static void Done(Rate* r, const PcieTransfer& x)
        {
            r->bytesPerSecond = x.bytes / (x.completed - x.started).GetSeconds();
        }
    } rate;
    t.tree->Read("gpu0", "mem", 0, 64 << 20, MakeBoundCallback(&Rate::Done, &rate));
    Simulator::Run();
    MESSAGE("H2D " << rate.bytesPerSecond / 1e9 << " GB/s; measured 54.8 GB/s");
    CHECK(rate.bytesPerSecond / 1e9 == doctest::Approx(54.8).epsilon(0.03));
    const double wire = 1e12 / PcieBytePicoseconds(5, 16);
    CHECK(rate.bytesPerSecond == doctest::Approx(wire * 512 / (4 * 148 + 9)).epsilon(0.005));
    Simulator::Destroy();
}
