#include "ns3/boolean.h"
#include "ns3/config.h"
#include "ns3/dcqcn-rate-control.h"
#include "ns3/double.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

#include <doctest/doctest.h>

#include <cmath>

using namespace ns3;

namespace
{

Ptr<DcqcnRateControl>
Started(const std::string& preset, const char* rate = "40Gbps")
{
    Config::Reset();
    REQUIRE(DcqcnRateControl::ApplyPreset(preset));
    Ptr<DcqcnRateControl> rp = CreateObject<DcqcnRateControl>();
    rp->Start(DataRate(rate));
    return rp;
}

double
Gbps(DataRate r)
{
    return r.GetBitRate() / 1e9;
}

} // namespace

TEST_CASE("paper preset: a first CNP halves the rate, fast recovery climbs back by halves")
{
    auto rp = Started("paper");
    Simulator::Schedule(MicroSeconds(10), &DcqcnRateControl::OnCnp, rp);
    std::vector<double> rates;
    for (int k = 0; k <= 5; ++k)
    {
        // sample just after each 55 us increase event that follows the CNP
        Simulator::Schedule(MicroSeconds(10 + 55 * k) + NanoSeconds(1),
                            [&rates, rp]() { rates.push_back(Gbps(rp->GetRate())); });
    }
    Simulator::Stop(MicroSeconds(400));
    Simulator::Run();
    // alpha starts at 1 and stays ~1 after the first CNP: Rc = 40 * (1 - 1/2) = 20.
    CHECK(rates[0] == doctest::Approx(20).epsilon(1e-3));
    // Fast recovery toward Rt = 40: 30, 35, 37.5, 38.75, 39.375.
    const double want[] = {30, 35, 37.5, 38.75, 39.375};
    for (int k = 0; k < 5; ++k)
    {
        CHECK(rates[k + 1] == doctest::Approx(want[k]).epsilon(1e-3));
    }
    Simulator::Destroy();
}

TEST_CASE("paper preset: without CNPs alpha decays by (1 - g) each interval")
{
    auto rp = Started("paper");
    Simulator::Schedule(MicroSeconds(1), &DcqcnRateControl::OnCnp, rp);
    double alpha = 0;
    Simulator::Schedule(MicroSeconds(1 + 55 * 10) + NanoSeconds(1),
                        [&alpha, rp]() { alpha = rp->GetAlpha(); });
    Simulator::Stop(MicroSeconds(600));
    Simulator::Run();
    CHECK(alpha == doctest::Approx(std::pow(1 - 1.0 / 256, 10)).epsilon(1e-9));
    Simulator::Destroy();
}

TEST_CASE("paper preset: the rate never drops below MinRate")
{
    auto rp = Started("paper");
    for (int k = 0; k < 40; ++k)
    {
        Simulator::Schedule(MicroSeconds(1 + k), &DcqcnRateControl::OnCnp, rp);
    }
    Simulator::Stop(MicroSeconds(45));
    Simulator::Run();
    CHECK(Gbps(rp->GetRate()) == doctest::Approx(0.1));
    Simulator::Destroy();
}

TEST_CASE("nvidia preset: alpha starts at the first CNP; a periodic 4 us check makes the cuts")
{
    auto rp = Started("nvidia", "100Gbps");
    const double g = 5.0 / 1024; // DCE_TCP_G 1019: the old estimate keeps 1019/1024
    // CNPs at 10.5 and 11.5 us. The first sets alpha to 1023/1024 and starts the
    // checks' grid at 10.501 us; nothing is cut before the check at 14.501 us.
    Simulator::Schedule(NanoSeconds(10500), &DcqcnRateControl::OnCnp, rp);
    Simulator::Schedule(NanoSeconds(11500), &DcqcnRateControl::OnCnp, rp);
    double rateBefore = 0;
    double rateAfter = 0;
    double alphaAtCut = 0;
    double rateLater = 0;
    Simulator::Schedule(NanoSeconds(14400), [&]() { rateBefore = Gbps(rp->GetRate()); });
    Simulator::Schedule(NanoSeconds(14600), [&]() {
        rateAfter = Gbps(rp->GetRate());
        alphaAtCut = rp->GetAlpha();
    });
    Simulator::Schedule(NanoSeconds(22600), [&]() { rateLater = Gbps(rp->GetRate()); });
    Simulator::Stop(MicroSeconds(30));
    Simulator::Run();
    CHECK(rateBefore == doctest::Approx(100));
    // Alpha: 1023/1024 at 10.5 us. At 11.5 us the second CNP counts at once, and the
    // tick of the same instant closes its interval without decay; the ticks at 12.5,
    // 13.5 and 14.5 us see no CNP and decay it.
    const double a0 = 1023.0 / 1024;
    const double a1 = (1 - g) * a0 + g;
    const double a2 = std::pow(1 - g, 3) * a1;
    CHECK(alphaAtCut == doctest::Approx(a2).epsilon(1e-9));
    CHECK(rateAfter == doctest::Approx(100 * (1 - a2 / 2)).epsilon(1e-6)); // about halved
    // No CNP after the check: the later checks (18.5, 22.5 us) cut nothing.
    CHECK(rateLater == doctest::Approx(rateAfter).epsilon(1e-9));
    Simulator::Destroy();
}

TEST_CASE("hpcc preset: alpha 1 at the first CNP, cut 4 us later, target kept without increase")
{
    auto rp = Started("hpcc", "100Gbps");
    // A CNP every microsecond from 10 us to 17 us: checks at 14.001 and 18.001 us cut.
    for (int k = 0; k < 8; ++k)
    {
        Simulator::Schedule(MicroSeconds(10 + k), &DcqcnRateControl::OnCnp, rp);
    }
    std::vector<double> rate;
    std::vector<double> target;
    for (int t : {13, 15, 19})
    {
        Simulator::Schedule(MicroSeconds(t) + NanoSeconds(500), [&]() {
            rate.push_back(Gbps(rp->GetRate()));
            target.push_back(Gbps(rp->GetTargetRate()));
        });
    }
    Simulator::Stop(MicroSeconds(25));
    Simulator::Run();
    CHECK(rate[0] == doctest::Approx(100)); // the first CNP does not cut at once
    // Alpha stayed 1 (each 1 us interval held a CNP): halved at 14 us, again at 18 us.
    CHECK(rate[1] == doctest::Approx(50).epsilon(1e-3));
    // ... except that the tick at 18 us saw no CNP in its interval: one decay.
    CHECK(rate[2] == doctest::Approx(50 * (1 - (1 - 1.0 / 256) / 2)).epsilon(1e-6));
    // CLAMP_TARGET_RATE 0: no increase came between the two cuts, so the target stays
    // at the rate before the first cut.
    CHECK(target[1] == doctest::Approx(100));
    CHECK(target[2] == doctest::Approx(100));
    Simulator::Destroy();
}

TEST_CASE("hpcc preset: the timer alone leads to hyper increase, one additive step first")
{
    auto rp = Started("hpcc", "100Gbps");
    // A CNP at 1 us (cut at 5.001 us), fast recovery at 305.001 us, and a CNP at 306 us
    // whose cut at 309.001 us (on the 4 us grid) clamps the target below line rate,
    // since an increase came between the two cuts.
    Simulator::Schedule(MicroSeconds(1), &DcqcnRateControl::OnCnp, rp);
    Simulator::Schedule(MicroSeconds(306), &DcqcnRateControl::OnCnp, rp);
    std::vector<double> target;
    for (int k = 0; k <= 4; ++k)
    {
        // just after the k-th 300 us timer event that follows the second cut
        Simulator::Schedule(MicroSeconds(309 + 300 * k) + NanoSeconds(2),
                            [&]() { target.push_back(rp->GetTargetRate().GetBitRate() / 1e6); });
    }
    Simulator::Stop(MicroSeconds(1600));
    Simulator::Run();
    REQUIRE(target.size() == 5);
    CHECK(target[0] < 80'000); // clamped at the second cut
    // F = 1: event 1 fast recovery (target unchanged), event 2 additive (+20 Mb/s),
    // events 3 and 4 hyper (+200 Mb/s each: HPCC's step does not grow).
    CHECK(target[1] - target[0] == doctest::Approx(0));
    CHECK(target[2] - target[1] == doctest::Approx(20));
    CHECK(target[3] - target[2] == doctest::Approx(200));
    CHECK(target[4] - target[3] == doctest::Approx(200));
    Simulator::Destroy();
}

TEST_CASE("paper preset with no byte counter: the timer alone reaches hyper increase")
{
    Config::Reset();
    REQUIRE(DcqcnRateControl::ApplyPreset("paper"));
    Config::SetDefault("ns3::DcqcnRateControl::ByteCounter", UintegerValue(0));
    Config::SetDefault("ns3::DcqcnRateControl::FastRecoverySteps", UintegerValue(1));
    Ptr<DcqcnRateControl> rp = CreateObject<DcqcnRateControl>();
    rp->Start(DataRate("40Gbps"));
    Simulator::Schedule(MicroSeconds(1), &DcqcnRateControl::OnCnp, rp);
    Simulator::Schedule(MicroSeconds(57), &DcqcnRateControl::OnCnp, rp); // after one FR step
    std::vector<double> target;
    for (int k = 0; k <= 4; ++k)
    {
        Simulator::Schedule(MicroSeconds(57 + 55 * k) + NanoSeconds(1),
                            [&]() { target.push_back(rp->GetTargetRate().GetBitRate() / 1e6); });
    }
    Simulator::Stop(MicroSeconds(400));
    Simulator::Run();
    REQUIRE(target.size() == 5);
    // Once a disabled byte counter held hyper increase back for ever: now fast
    // recovery, additive (+40), then the paper's growing hyper steps (+200, +400).
    CHECK(target[1] - target[0] == doctest::Approx(0));
    CHECK(target[2] - target[1] == doctest::Approx(40));
    CHECK(target[3] - target[2] == doctest::Approx(200));
    CHECK(target[4] - target[3] == doctest::Approx(400));
    Simulator::Destroy();
}
