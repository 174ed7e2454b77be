// NICs behind PCIe: an RDMA WRITE between two servers whose NICs fetch the payload from GPU
// memory with DMA reads and place it with posted writes (PcieNicInterface). GPUDirect RDMA
// on Gen5 x16 keeps a 400 Gb/s RoCEv2 link at line rate; a NIC on Gen4 x8 holds the fabric
// to the PCIe framing limit; under one switch the path never touches the root complex.
#include "ns3/config.h"
#include "ns3/ib-fabric-helper.h"
#include "ns3/ib-link.h"
#include "ns3/pcie-helper.h"
#include "ns3/pcie-nic-interface.h"
#include "ns3/pcie-spec.h"
#include "ns3/rdma-workload.h"
#include "ns3/roce-fabric-helper.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

#include <doctest/doctest.h>

#include <vector>

using namespace ns3;

namespace
{

const uint64_t kBytes = 16 << 20;

/// gpu0 and nic0 under one switch, every link Gen \p gen x \p width; the NIC's link
/// Gen \p nicGen x \p nicWidth.
PcieHelper::Tree
Server(uint32_t gen, uint32_t width, uint32_t nicGen, uint32_t nicWidth)
{
    PcieHelper h;
    h.SetLinkAttribute("Generation", UintegerValue(gen));
    h.SetLinkAttribute("Width", UintegerValue(width));
    h.SetPortAttribute("MaxPayloadSize", UintegerValue(256));
    PcieTreeSpec spec;
    PcieTreeSpec::Switch sw;
    PcieTreeSpec::Device gpu;
    gpu.kind = PcieDeviceKind::Gpu;
    PcieTreeSpec::Device nic;
    nic.kind = PcieDeviceKind::Nic;
    nic.link = {nicGen, nicWidth};
    sw.devices = {gpu, nic};
    spec.switches.push_back(sw);
    PcieHelper::Tree t = h.InstallTree(spec);
    REQUIRE(t.Ok());
    return t;
}

struct Run
{
    double gbps{0};     ///< payload Gb/s over the flow's FCT
    uint64_t rcTlps{0}; ///< TLPs that reached either root complex
};

void
CountTlp(uint64_t* n, const PcieTlp&, uint32_t)
{
    ++*n;
}

/// One 16 MiB WRITE h0 -> h1 over a 400 Gb/s link (RoCEv2, or InfiniBand NDR 4x when
/// \p ib); \p nicGen 0: no PCIe at all.
Run
Write(uint32_t nicGen, uint32_t nicWidth, const std::string& memory, bool ib = false)
{
    Config::Reset();
    Config::SetDefault("ns3::RdmaQueuePair::Mtu", UintegerValue(4096));
    RoceFabricHelper roce;
    IbFabricHelper infiniband;
    RdmaFabric& fabric = ib ? static_cast<RdmaFabric&>(infiniband) : roce;
    if (ib)
    {
        // A 100 ns cable, and VL buffers past the credit loop's bandwidth-delay product.
        Config::SetDefault("ns3::IbPort::BufferBlocks", UintegerValue(2048));
        infiniband.Install(TopologySpec::Pair(LinkParams{IbLinkRate("NDR", 4), NanoSeconds(100)}));
    }
    else
    {
        roce.Install(TopologySpec::Pair(LinkParams{DataRate("400Gbps"), MicroSeconds(1)}));
    }
    FlowRunner runner(fabric);
    FlowSpec f{0, 1, kBytes, MicroSeconds(1)};
    f.srcMemory = memory;
    f.dstMemory = memory;
    runner.Add({f});
    Run run;
    std::vector<PcieHelper::Tree> trees;
    if (nicGen > 0)
    {
        for (uint32_t host = 0; host < 2; ++host)
        {
            trees.push_back(Server(5, 16, nicGen, nicWidth));
            Ptr<PcieNicInterface> nic = CreateObject<PcieNicInterface>();
            nic->Setup(trees.back().tree, "nic0");
            REQUIRE(nic->CheckMemory(memory) == "");
            runner.SetHostInterface(host, nic);
            trees.back().tree->GetRootComplex()->TraceConnectWithoutContext(
                "TlpRx", MakeBoundCallback(&CountTlp, &run.rcTlps));
        }
    }
    runner.SetAllDoneCallback(MakeCallback(static_cast<void (*)()>(&Simulator::Stop)));
    runner.Start();
    Simulator::Stop(MilliSeconds(20));
    Simulator::Run();
    REQUIRE(runner.Records().size() == 1);
    const FlowRecord& r = runner.Records()[0];
    REQUIRE(r.Completed());
    run.gbps = kBytes * 8.0 / r.fct.GetSeconds() / 1e9;
    Simulator::Destroy();
    return run;
}

} // namespace

TEST_CASE("GPUDirect RDMA on Gen5 x16 under the GPU's switch keeps 400 Gb/s at line rate")
{
    const Run plain = Write(0, 0, "gpu0");
    const Run direct = Write(5, 16, "gpu0");
    MESSAGE("no PCIe " << plain.gbps << " Gb/s, GPUDirect Gen5 x16 " << direct.gbps << " Gb/s");
    CHECK(plain.gbps > 380);
    CHECK(direct.gbps >= 0.98 * plain.gbps);
    CHECK(direct.gbps <= plain.gbps * 1.0001);
    // GPU and NIC share the switch: the payload never reaches the root complex.
    CHECK(direct.rcTlps == 0);
}

TEST_CASE("a NIC on Gen4 x8 holds the fabric to the PCIe framing limit")
{
    const Run slow = Write(4, 8, "gpu0");
    // The sender's NIC link, toward the NIC, carries each 512-byte read (MRRS) as two
    // completions of 256 bytes (MPS) with 20 bytes of header and framing each, plus the
    // UpdateFC-NP that returns the request's credit and an eighth of an Ack (8 bytes each).
    // The receiver's posted writes (256 per 276 bytes) are a little faster, so reads decide.
    const double wire = 1e12 / PcieBytePicoseconds(4, 8) * 8 / 1e9;
    const double limit = wire * 512 / (2 * (256 + 20) + 8 + 8.0 / 8);
    MESSAGE("Gen4 x8 NIC " << slow.gbps << " Gb/s, read limit " << limit << " Gb/s");
    // 2 %: the model's own error plus the pipeline's ends (the first chunk's read, the
    // last chunk's placement: about 0.5 % of a 16 MiB WRITE at this rate).
    CHECK(slow.gbps == doctest::Approx(limit).epsilon(0.02));
    CHECK(slow.gbps < limit);
}

TEST_CASE("the same on NDR InfiniBand: line rate beside the GPU, the PCIe limit on Gen4 x8")
{
    const Run plain = Write(0, 0, "gpu0", true);
    const Run direct = Write(5, 16, "gpu0", true);
    const Run slow = Write(4, 8, "gpu0", true);
    MESSAGE("NDR: no PCIe " << plain.gbps << ", Gen5 x16 " << direct.gbps << ", Gen4 x8 "
                            << slow.gbps << " Gb/s");
    CHECK(plain.gbps > 380);
    CHECK(direct.gbps >= 0.98 * plain.gbps);
    CHECK(direct.rcTlps == 0);
    const double wire = 1e12 / PcieBytePicoseconds(4, 8) * 8 / 1e9;
    CHECK(slow.gbps == doctest::Approx(wire * 512 / (2 * (256 + 20) + 8 + 8.0 / 8)).epsilon(0.02));
}

TEST_CASE("host memory behind the NIC is reached through the root complex")
{
    const Run host = Write(5, 16, "host");
    CHECK(host.rcTlps > kBytes / 512); // at least every read request and every write TLP
    CHECK(host.gbps > 300);
}
