#include "ns3/collective-cost-model.h"

#include <algorithm>

namespace ns3
{

namespace
{

/// The worst alpha and bandwidth over the pairs (r, partner(r)) of one step.
CollectiveTransport::PathCost
WorstOf(uint32_t ranks, const std::function<uint32_t(uint32_t)>& partner,
        const CollectivePathCostFn& cost)
{
    CollectiveTransport::PathCost worst{Time(0), 0};
    for (uint32_t r = 0; r < ranks; ++r)
    {
        const auto c = cost(r, partner(r));
        worst.alpha = std::max(worst.alpha, c.alpha);
        worst.bytesPerSecond =
            r == 0 ? c.bytesPerSecond : std::min(worst.bytesPerSecond, c.bytesPerSecond);
    }
    return worst;
}

Time
StepTime(const CollectiveTransport::PathCost& c, double bytes)
{
    return c.alpha + Seconds(bytes / c.bytesPerSecond);
}

} // namespace

Time
CollectiveAnalyticalTime(CollectiveOp op, CollectiveAlgorithm algorithm, uint32_t ranks,
                         uint64_t bytes, const CollectivePathCostFn& cost)
{
    CheckCollective(op, algorithm, ranks, bytes);
    const uint32_t n = ranks;
    const double piece = static_cast<double>(bytes) / n;
    const uint32_t phases = op == CollectiveOp::AllReduce ? 2 : 1;
    switch (algorithm)
    {
    case CollectiveAlgorithm::Ring: {
        const auto c = WorstOf(
            n, [n](uint32_t r) { return (r + 1) % n; }, cost);
        return StepTime(c, piece) * static_cast<int64_t>(phases * (n - 1));
    }
    case CollectiveAlgorithm::HalvingDoubling: {
        Time total;
        for (uint32_t d = 1; d < n; d <<= 1)
        {
            // Halving's step at distance d and doubling's move d pieces each.
            const auto c = WorstOf(
                n, [d](uint32_t r) { return r ^ d; }, cost);
            total += StepTime(c, piece * d) * static_cast<int64_t>(phases);
        }
        return total;
    }
    case CollectiveAlgorithm::Direct: {
        Time worst;
        for (uint32_t r = 0; r < n; ++r)
        {
            CollectiveTransport::PathCost c{Time(0), 0};
            for (uint32_t i = 1; i < n; ++i)
            {
                const auto p = cost(r, (r + i) % n);
                c.alpha = std::max(c.alpha, p.alpha);
                c.bytesPerSecond =
                    i == 1 ? p.bytesPerSecond : std::min(c.bytesPerSecond, p.bytesPerSecond);
            }
            worst = std::max(worst, StepTime(c, piece * (n - 1)));
        }
        return worst;
    }
    }
    return Time(0);
}

} // namespace ns3
