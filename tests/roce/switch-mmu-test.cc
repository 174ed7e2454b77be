#include "switch-mmu.h"

#include "ns3/boolean.h"
#include "ns3/double.h"
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

TEST_CASE("XON comes once headroom is empty and the PG is ResumeOffset under its threshold")
{
    auto mmu = Mmu(1'000'000);
    std::vector<Charge> charges;
    Charge c;
    while ((c = mmu->Admit(0, 1, 3, 1000)) != Charge::Headroom)
    {
        charges.push_back(c);
    }
    charges.push_back(c);
    CHECK(mmu->ShouldPause(0, 3));
    CHECK_FALSE(mmu->ShouldResume(0, 3));
    // Drain in FIFO order; resume only after the headroom byte is gone and 3 KB more.
    bool resumed = false;
    size_t drained = 0;
    for (Charge ch : charges)
    {
        mmu->Release(0, 1, 3, 1000, ch);
        ++drained;
        if (mmu->ShouldResume(0, 3))
        {
            resumed = true;
            break;
        }
    }
    CHECK(resumed);
    CHECK(drained > 1);
    CHECK(mmu->GetHeadroomUsed(0, 3) == 0);
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
    CHECK(mmu->MarkProbability(2, 3, 50'000) == 0);                        // own Kmin
    CHECK(mmu->MarkProbability(2, 3, 250'000) == doctest::Approx(0.1));    // own Pmax
    // Switch-wide: Kmin 5 KiB, Kmax 200 KiB, Pmax 1%; halfway between is 0.5%.
    CHECK(mmu->MarkProbability(1, 3, (5 * 1024 + 200 * 1024) / 2) == doctest::Approx(0.005));
    CHECK(mmu->MarkProbability(2, 4, 300'000) == 1);                       // above Kmax 200 KB
}
