#include "dcqcn-rate-control.h"

#include "ns3/config.h"
#include "ns3/double.h"
#include "ns3/simulator.h"

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

TEST_CASE("nvidia preset: alpha follows CNP presence per microsecond, one cut per 4 us")
{
    auto rp = Started("nvidia", "100Gbps");
    // Two CNPs 1 us apart: the monitor period lets only the first cut the rate.
    Simulator::Schedule(NanoSeconds(10500), &DcqcnRateControl::OnCnp, rp);
    Simulator::Schedule(NanoSeconds(11500), &DcqcnRateControl::OnCnp, rp);
    double rateAfter = 0;
    double alphaAfterCnp = 0;
    double alphaLater = 0;
    Simulator::Schedule(NanoSeconds(12600), [&]() {
        rateAfter = Gbps(rp->GetRate());
        alphaAfterCnp = rp->GetAlpha();
    });
    Simulator::Schedule(NanoSeconds(15600), [&]() { alphaLater = rp->GetAlpha(); });
    Simulator::Stop(MicroSeconds(20));
    Simulator::Run();
    // Before the CNP alpha decayed from 1023/1024 by (1 - g) = 5/1024 per microsecond for
    // 10 us; the CNP's interval counts it at once, so the cut sees alpha near 1.
    const double g = 1019.0 / 1024;
    const double a1 = (1 - g) * (1023.0 / 1024 * std::pow(1 - g, 10)) + g;
    CHECK(a1 > 0.99);
    CHECK(rateAfter == doctest::Approx(100 * (1 - a1 / 2)).epsilon(1e-6)); // about halved
    // The second CNP (next interval) raises alpha again but may not cut within 4 us.
    const double a2 = (1 - g) * a1 + g;
    CHECK(alphaAfterCnp == doctest::Approx(a2).epsilon(1e-9));
    // The tick at 12 us closes the interval that counted the second CNP; those at
    // 13, 14 and 15 us see none: alpha falls away within a few microseconds.
    // (A ratio: doctest's Approx would call any two numbers near zero equal.)
    CHECK(alphaLater / (a2 * std::pow(1 - g, 3)) == doctest::Approx(1).epsilon(1e-6));
    CHECK(alphaLater < 0.001);
    Simulator::Destroy();
}
