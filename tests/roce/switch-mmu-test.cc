#include "ns3/boolean.h"
#include "ns3/double.h"
#include "ns3/switch-mmu.h"
#include "ns3/uinteger.h"

#include <doctest/doctest.h>

using namespace ns3;

namespace
{
using Charge = SwitchMmu::Charge;

Ptr<SwitchMmu>
Mmu(uint64_t buffer, double alpha = 0.125)
{
    Ptr<SwitchMmu> mmu = CreateObject<SwitchMmu>();
    mmu->SetAttribute("BufferSize", UintegerValue(buffer));
    mmu->SetAttribute("ReservePerPg", UintegerValue(4000));
    mmu->SetAttribute("Alpha", DoubleValue(alpha));
    mmu->SetAttribute("LosslessPriorities", UintegerValue(0x08));
    mmu->ConfigurePorts({20000, 20000});
    return mmu;
}
} // namespace

TEST_CASE("a PG fills its reserve, then the shared pool up to alpha x free, then headroom")
{
    // 1 MB: reserve 2 ports x 8 PGs x 4000, headroom 2 ports x 1 lossless PG x 20000.
    auto mmu = Mmu(1'000'000);
    const uint64_t pool = 1'000'000 - 64'000 - 40'000;
    CHECK(mmu->Admit(0, 1, 3, 1000) == Charge::Reserve);
    for (int i = 0; i < 3; ++i)
    {
        CHECK(mmu->Admit(0, 1, 3, 1000) == Charge::Reserve);
    }
    // Shared: the PG may hold alpha x (pool - shared used) = (pool - s) / 8.
    uint64_t shared = 0;
    while (mmu->Admit(0, 1, 3, 1000) == Charge::Shared)
    {
        shared += 1000;
    }
    CHECK(shared == doctest::Approx(pool / 9.0).epsilon(0.01)); // s = (pool - s)/8
    CHECK(mmu->ShouldPause(0, 3));
    CHECK(mmu->GetHeadroomUsed(0, 3) == 1000); // the frame that crossed went to headroom
    // Headroom holds 20000 bytes, then the lossless PG has nowhere left.
    for (int i = 0; i < 19; ++i)
    {
        CHECK(mmu->Admit(0, 1, 3, 1000) == Charge::Headroom);
    }
    CHECK(mmu->Admit(0, 1, 3, 1000) == Charge::Dropped);
    CHECK(mmu->GetTotalUsed() == 4000 + shared + 20000);
}

TEST_CASE("a departing frame frees headroom first; XON at XOFF - ResumeOffset on the shared count")
{
    // pool = 896,000; the PG's XOFF is (pool - s) / 8, so it pauses at s = 99,000.
    auto mmu = Mmu(1'000'000);
    mmu->SetAttribute("ResumeOffset", UintegerValue(5000));
    while (mmu->Admit(0, 1, 3, 1000) != Charge::Headroom)
    {
    }
    for (int i = 0; i < 4; ++i)
    {
        REQUIRE(mmu->Admit(0, 1, 3, 1000) == Charge::Headroom);
    }
    CHECK(mmu->ShouldPause(0, 3));
    const uint64_t sharedAtXoff = mmu->GetSharedUsed(0, 3);
    CHECK(sharedAtXoff == 99'000);
    // Whichever frames leave (the oldest sat in reserve), headroom empties first: five
    // departures free its 5,000 bytes and leave the shared count where it was.
    for (int i = 0; i < 5; ++i)
    {
        CHECK_FALSE(mmu->ShouldResume(0, 3));
        mmu->Release(0, 1, 3, 1000);
    }
    CHECK(mmu->GetHeadroomUsed(0, 3) == 0);
    CHECK(mmu->GetSharedUsed(0, 3) == sharedAtXoff);
    // Then XON once s + 5000 <= (pool - s) / 8, i.e. 9 s <= 856,000: s = 95,000 on
    // 1000-byte steps (95,000 + 5000 <= 100,125; 96,000 + 5000 > 100,000).
    int more = 0;
    while (!mmu->ShouldResume(0, 3))
    {
        mmu->Release(0, 1, 3, 1000);
        ++more;
    }
    CHECK(more == 4);
    CHECK(mmu->GetSharedUsed(0, 3) == 95'000);
    CHECK(mmu->GetIngressBytes(0, 3) == 4000 + 95'000); // the reserve is released last
}

TEST_CASE("a lossy priority is admitted under the egress threshold and dropped above it")
{
    auto mmu = Mmu(1'000'000);
    mmu->SetAttribute("EgressAlpha", DoubleValue(1.0));
    int admitted = 0;
    while (mmu->Admit(0, 1, 0, 1000) != Charge::Dropped)
    {
        ++admitted;
        REQUIRE(admitted < 2000);
    }
    CHECK_FALSE(mmu->ShouldPause(0, 0)); // lossy: never asks for PFC
    CHECK(mmu->GetHeadroomUsed(0, 0) == 0);
    // Egress queue held about half the pool: q = 1 x (pool - q).
    const uint64_t pool = 1'000'000 - 64'000 - 40'000;
    CHECK(mmu->GetEgressBytes(1, 0) == doctest::Approx(4000 + pool / 2.0).epsilon(0.01));
}

TEST_CASE("with PFC off every priority is lossy")
{
    Ptr<SwitchMmu> mmu = CreateObject<SwitchMmu>();
    mmu->SetAttribute("PfcEnabled", BooleanValue(false));
    mmu->ConfigurePorts({20000});
    CHECK_FALSE(mmu->IsLossless(3));
}

TEST_CASE("a static threshold pauses at StaticXoff, whatever the pool holds")
{
    Ptr<SwitchMmu> mmu = CreateObject<SwitchMmu>();
    mmu->SetAttribute("StaticThreshold", BooleanValue(true));
    mmu->SetAttribute("StaticXoff", UintegerValue(50'000));
    mmu->SetAttribute("ReservePerPg", UintegerValue(0));
    mmu->ConfigurePorts({100'000, 100'000});
    uint64_t shared = 0;
    while (mmu->Admit(0, 1, 3, 1000) == Charge::Shared)
    {
        shared += 1000;
    }
    CHECK(shared == 50'000);
    CHECK(mmu->ShouldPause(0, 3));
}

TEST_CASE("RED marks nothing below Kmin, Pmax at Kmax, everything above")
{
    Ptr<SwitchMmu> mmu = CreateObject<SwitchMmu>();
    mmu->SetAttribute("Kmin", UintegerValue(5000));
    mmu->SetAttribute("Kmax", UintegerValue(205000));
    mmu->SetAttribute("Pmax", DoubleValue(0.01));
    CHECK(mmu->MarkProbability(5000) == 0);
    CHECK(mmu->MarkProbability(105000) == doctest::Approx(0.005));
    CHECK(mmu->MarkProbability(204999) < 0.01);
    CHECK(mmu->MarkProbability(205000) == 1);
    mmu->SetAttribute("EcnEnabled", BooleanValue(false));
    CHECK(mmu->MarkProbability(1'000'000) == 0);
}

TEST_CASE("one egress queue may have RED thresholds of its own")
{
    Ptr<SwitchMmu> mmu = CreateObject<SwitchMmu>();
    mmu->SetEcnThresholds(2, 3, 100'000, 400'000, 0.2);
    CHECK(mmu->MarkProbability(2, 3, 50'000) == 0);                     // own Kmin
    CHECK(mmu->MarkProbability(2, 3, 250'000) == doctest::Approx(0.1)); // own Pmax
    // Switch-wide: Kmin 5 KiB, Kmax 200 KiB, Pmax 1%; halfway between is 0.5%.
    CHECK(mmu->MarkProbability(1, 3, (5 * 1024 + 200 * 1024) / 2) == doctest::Approx(0.005));
    CHECK(mmu->MarkProbability(2, 4, 300'000) == 1); // above Kmax 200 KB
}
