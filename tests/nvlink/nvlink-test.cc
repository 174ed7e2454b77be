// NVLink against arithmetic: one link at NCCL's usable rate, a DGX H100-like 5/4/4/5 split
// giving a GPU its 450 GB/s toward the switches, an 8-GPU all-to-all the switches do not
// block, credits below the bandwidth-delay product, a lossless 7:1 incast, and replays
// only with bit errors.
#include "ns3/config.h"
#include "ns3/double.h"
#include "ns3/nvlink-helper.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

#include <doctest/doctest.h>

#include <vector>

using namespace ns3;

namespace
{

const uint64_t kMiB = 1 << 20;

struct Done
{
    std::vector<NvlinkTransfer> transfers;
    static void Add(Done* d, const NvlinkTransfer& t) { d->transfers.push_back(t); }
    /// Bytes over the span from the first start to the last completion.
    double Rate() const
    {
        Time first = Time::Max();
        Time last;
        uint64_t bytes = 0;
        for (const auto& t : transfers)
        {
            first = std::min(first, t.started);
            last = std::max(last, t.completed);
            bytes += t.bytes;
        }
        return bytes / (last - first).GetSeconds();
    }
};

NvlinkHelper::Node
Pair(uint32_t links, NvlinkHelper h = NvlinkHelper())
{
    NvlinkHelper::Node n = h.InstallMesh(2, {{0, 1, links}});
    REQUIRE(n.Ok());
    return n;
}

NvlinkHelper::Node
DgxH100()
{
    NvlinkHelper h;
    NvlinkHelper::Node n = h.InstallSwitched(8, {5, 4, 4, 5});
    REQUIRE(n.Ok());
    return n;
}

} // namespace

TEST_CASE("one NVLink4 link carries a long transfer at NCCL's usable 20.6 GB/s")
{
    for (uint32_t gen : {1u, 2u, 3u, 4u, 5u})
    {
        CAPTURE(gen);
        NvlinkHelper h;
        h.SetLinkAttribute("Generation", UintegerValue(gen));
        NvlinkHelper::Node n = Pair(1, h);
        Done done;
        n.node->Send(0, 1, 64 * kMiB, MakeBoundCallback(&Done::Add, &done));
        Simulator::Run();
        REQUIRE(done.transfers.size() == 1);
        const double usable = NvlinkLinkBytesPerSecond(gen) * NvlinkNcclEfficiency(gen);
        MESSAGE("NVLink" << gen << ": " << done.Rate() / 1e9 << " GB/s, NCCL " << usable / 1e9);
        CHECK(done.Rate() == doctest::Approx(usable).epsilon(0.01));
        if (gen == 4)
        {
            CHECK(usable / 1e9 == doctest::Approx(20.6));
        }
        Simulator::Destroy();
    }
}

TEST_CASE("18 links split 5/4/4/5 over four NVSwitches give a GPU 450 GB/s toward them")
{
    NvlinkHelper::Node n = DgxH100();
    Done done;
    for (uint32_t dst = 1; dst < 8; ++dst)
    {
        n.node->Send(0, dst, 64 * kMiB, MakeBoundCallback(&Done::Add, &done));
    }
    Simulator::Run();
    REQUIRE(done.transfers.size() == 7);
    double wire = 0;
    for (uint32_t p = 0; p < n.node->GetGpu(0)->GetNPorts(); ++p)
    {
        wire += n.node->GetGpu(0)->GetPort(p)->GetWireBytes();
    }
    const double span = Simulator::Now().GetSeconds();
    MESSAGE("GPU0 to 7 peers: " << done.Rate() / 1e9 << " GB/s of data, " << wire / span / 1e9
                                << " GB/s on its links");
    CHECK(n.node->GetGpu(0)->GetNPorts() == 4);
    CHECK(wire / span / 1e9 == doctest::Approx(450).epsilon(0.01));
    CHECK(done.Rate() / 1e9 == doctest::Approx(18 * 20.6).epsilon(0.01));
    Simulator::Destroy();
}

TEST_CASE("an all-to-all among 8 GPUs through the NVSwitches is not blocked")
{
    NvlinkHelper::Node n = DgxH100();
    Done done;
    for (uint32_t src = 0; src < 8; ++src)
    {
        for (uint32_t dst = 0; dst < 8; ++dst)
        {
            if (src != dst)
            {
                n.node->Send(src, dst, 16 * kMiB, MakeBoundCallback(&Done::Add, &done));
            }
        }
    }
    Simulator::Run();
    REQUIRE(done.transfers.size() == 56);
    // Each GPU sends 7 x 16 MiB and receives as much: at 370.8 GB/s each way, unblocked.
    const double perGpu = done.Rate() / 8;
    MESSAGE("all-to-all: " << perGpu / 1e9 << " GB/s per GPU");
    CHECK(perGpu / 1e9 == doctest::Approx(18 * 20.6).epsilon(0.02));
    CHECK(n.node->GetOverflows() == 0);
    Simulator::Destroy();
}

TEST_CASE("credits below the bandwidth-delay product: credits x packet / credit loop")
{
    NvlinkHelper h;
    h.SetLinkAttribute("Delay", TimeValue(MicroSeconds(1)));
    h.SetPortAttribute("BufferPackets", UintegerValue(16));
    NvlinkHelper::Node n = Pair(1, h);
    Done done;
    n.node->Send(0, 1, 16 * kMiB, MakeBoundCallback(&Done::Add, &done));
    Simulator::Run();
    REQUIRE(done.transfers.size() == 1);
    // A packet's wire time, the link, the credit back over the link.
    Ptr<NvlinkLink> link = n.node->GetLinks()[0];
    const double loop = (link->WireTime(256) + 2 * link->GetDelay()).GetSeconds();
    const double expected = 16 * 256 / loop;
    MESSAGE("16 credits over 1 us: " << done.Rate() / 1e9 << " GB/s, expected " << expected / 1e9);
    CHECK(done.Rate() == doctest::Approx(expected).epsilon(0.03));
    CHECK(n.node->GetCreditStarvedTime().IsStrictlyPositive());
    Simulator::Destroy();
}

TEST_CASE("seven GPUs write into one through the NVSwitches: nothing dropped, its links full")
{
    NvlinkHelper h;
    h.SetPortAttribute("BufferPackets", UintegerValue(32));
    NvlinkHelper::Node n = h.InstallSwitched(8, {5, 4, 4, 5});
    REQUIRE(n.Ok());
    Done done;
    for (uint32_t src = 1; src < 8; ++src)
    {
        n.node->Send(src, 0, 16 * kMiB, MakeBoundCallback(&Done::Add, &done));
    }
    Simulator::Run();
    REQUIRE(done.transfers.size() == 7);
    CHECK(n.node->GetOverflows() == 0);
    CHECK(n.node->GetReplays() == 0);
    CHECK(done.Rate() / 1e9 == doctest::Approx(18 * 20.6).epsilon(0.02));
    CHECK(n.node->GetCreditStarvedTime().IsStrictlyPositive()); // the senders were held back
    Simulator::Destroy();
}

TEST_CASE("bit errors: replays only above BER 0, every byte delivered once, slower")
{
    double rates[2] = {0, 0};
    for (int noisy = 0; noisy < 2; ++noisy)
    {
        NvlinkHelper h;
        h.SetLinkAttribute("BitErrorRate", DoubleValue(noisy ? 1e-6 : 0.0));
        h.SetLinkAttribute("Delay", TimeValue(NanoSeconds(100)));
        NvlinkHelper::Node n = Pair(1, h);
        Done done;
        n.node->Send(0, 1, 64 * kMiB, MakeBoundCallback(&Done::Add, &done));
        Simulator::Run();
        REQUIRE(done.transfers.size() == 1);
        CHECK(done.transfers[0].bytes == 64 * kMiB);
        Ptr<NvlinkPort> rx = n.node->GetLinks()[0]->GetPort(1);
        CHECK(rx->GetPacketsDelivered() == 64 * kMiB / 256);
        if (noisy)
        {
            CHECK(n.node->GetReplays() > 0);
            CHECK(rx->GetCrcErrors() > 0);
        }
        else
        {
            CHECK(n.node->GetReplays() == 0);
        }
        rates[noisy] = done.Rate();
        Simulator::Destroy();
    }
    CHECK(rates[1] < rates[0]);
}

TEST_CASE("a mesh reaches only its neighbours; a bad description builds nothing")
{
    NvlinkHelper h;
    NvlinkHelper::Node ring = h.InstallMesh(4, {{0, 1, 2}, {1, 2, 2}, {2, 3, 2}, {3, 0, 2}});
    REQUIRE(ring.Ok());
    CHECK(ring.node->CheckTransfer(0, 1) == "");
    CHECK(ring.node->CheckTransfer(0, 2) == "GPU 0 has no NVLink to GPU 2");
    CHECK(ring.node->Send(0, 2, 1024, MakeNullCallback<void, const NvlinkTransfer&>()) == 0);
    CHECK(h.InstallMesh(2, {{0, 0, 1}}).error == "a mesh edge joins GPU 0 and GPU 0 of 2");
    h.SetLinkAttribute("Generation", UintegerValue(6));
    CHECK(h.InstallMesh(2, {{0, 1, 1}}).error ==
          "ns3::NvlinkLink: Generation 6 is not an NVLink generation (1 to 5)");
    NvlinkHelper big;
    CHECK(big.InstallSwitched(16, {5}).error ==
          "NVSwitch 0: 16 GPUs x 5 links need 80 ports; this generation has 64");
    Simulator::Destroy();
}
