#include "ns3/double.h"
#include "ns3/flow-size-cdf.h"
#include "ns3/rdma-workload.h"
#include "ns3/rng-seed-manager.h"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <unistd.h>

using namespace ns3;

namespace
{
std::string
Cdf(const std::string& name)
{
    return std::string(FABEMU_SOURCE_DIR) + "/scenarios/cdf/" + name;
}

std::string
WriteTemp(const std::string& text)
{
    const auto path = std::filesystem::temp_directory_path() /
                      ("fabemu-cdf-" + std::to_string(getpid()) + ".txt");
    std::ofstream(path) << text;
    return path.string();
}

Ptr<UniformRandomVariable>
Rng(uint64_t stream)
{
    Ptr<UniformRandomVariable> rng = CreateObject<UniformRandomVariable>();
    rng->SetStream(static_cast<int64_t>(stream));
    return rng;
}
} // namespace

TEST_CASE("the web-search CDF has the literature's mean, and sampling reproduces it")
{
    const auto cdf = FlowSizeCdf::Load(Cdf("websearch.txt"));
    // Segment midpoints weighted by their probability (linear interpolation).
    CHECK(cdf.Mean() == doctest::Approx(1'711'250).epsilon(1e-9));
    auto rng = Rng(1);
    double sum = 0;
    const int n = 400'000;
    for (int i = 0; i < n; ++i)
    {
        sum += static_cast<double>(cdf.Sample(rng->GetValue()));
    }
    CHECK(sum / n == doctest::Approx(cdf.Mean()).epsilon(0.02));
    CHECK(cdf.Sample(0.15) == 10'000);
    CHECK(cdf.Sample(0.999999) <= 30'000'000);
}

TEST_CASE("the Hadoop CDF loads and is dominated by small flows")
{
    const auto cdf = FlowSizeCdf::Load(Cdf("hadoop.txt"));
    CHECK(cdf.Sample(0.5) == 700);
    CHECK(cdf.Mean() < cdf.Sample(0.95));
}

TEST_CASE("a malformed CDF file is rejected naming file and line")
{
    const auto bad = WriteTemp("0 0\n100 50\n50 60\n1000 100\n");
    try
    {
        FlowSizeCdf::Load(bad);
        FAIL("a decreasing size was accepted");
    }
    catch (const std::runtime_error& e)
    {
        CHECK(std::string(e.what()).find(bad + ":3:") == 0);
    }
    const auto shortOne = WriteTemp("0 0\n100 90\n");
    CHECK_THROWS_WITH_AS(FlowSizeCdf::Load(shortOne), doctest::Contains("must end at 100"),
                         std::runtime_error);
    CHECK_THROWS_AS(FlowSizeCdf::Load("/nonexistent/cdf.txt"), std::runtime_error);
    std::filesystem::remove(bad);
    std::filesystem::remove(shortOne);
}

TEST_CASE("a permutation sends from every host to another, each receiving once")
{
    std::vector<uint32_t> hosts{0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
    for (uint64_t stream = 0; stream < 20; ++stream)
    {
        const auto flows = workload::Permutation(hosts, 1000, Time(0), Rng(stream));
        REQUIRE(flows.size() == hosts.size());
        std::set<uint32_t> dsts;
        for (const auto& f : flows)
        {
            CHECK(f.src != f.dst);
            dsts.insert(f.dst);
        }
        CHECK(dsts.size() == hosts.size());
    }
}

TEST_CASE("all-to-all and incast produce the flows their names say")
{
    CHECK(workload::AllToAll({0, 1, 2, 3}, 10, Time(0)).size() == 12);
    const auto incast = workload::Incast(0, {1, 2, 3}, 10, MicroSeconds(5));
    REQUIRE(incast.size() == 3);
    CHECK(incast[2].dst == 0);
    CHECK(incast[2].start == MicroSeconds(5));
}

TEST_CASE("Poisson arrivals load each host's link to the target on average")
{
    const auto cdf = FlowSizeCdf::Load(Cdf("websearch.txt"));
    std::vector<uint32_t> hosts{0, 1, 2, 3, 4, 5, 6, 7};
    const double load = 0.5;
    const Time duration = Seconds(2);
    const auto flows =
        workload::Poisson(hosts, load, cdf, DataRate("10Gbps"), Time(0), duration, Rng(3));
    double bytes = 0;
    for (const auto& f : flows)
    {
        CHECK(f.src != f.dst);
        CHECK(f.start < duration);
        bytes += static_cast<double>(f.bytes);
    }
    const double offered = bytes * 8 / duration.GetSeconds() / hosts.size() / 10e9;
    // About 5800 flows: heavy-tailed sizes leave a few percent of noise.
    CHECK(offered == doctest::Approx(load).epsilon(0.05));
}
