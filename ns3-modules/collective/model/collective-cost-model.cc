#include "ns3/collective-cost-model.h"

#include <algorithm>
#include <vector>

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
        // Rank r's transfer at step k waits for rank r-1's at step k-1, so the last one
        // ends after the costs of K consecutive ring edges (K = the steps): whole turns
        // of the ring, then the dearest window of the rest. A uniform ring gives K (a +
        // S/(nB)); one slow edge costs once per turn, not at every step.
        std::vector<Time> edge(n);
        Time turn;
        for (uint32_t r = 0; r < n; ++r)
        {
            edge[r] = StepTime(cost(r, (r + 1) % n), piece);
            turn += edge[r];
        }
        const uint32_t steps = phases * (n - 1);
        Time window;
        for (uint32_t j = 0; j < steps % n; ++j)
        {
            window += edge[(n - j) % n]; // the window ending at edge 0
        }
        Time dearest = window;
        for (uint32_t r = 1; r < n; ++r)
        {
            // Slide: add edge r, drop the edge steps % n before it.
            if (steps % n > 0)
            {
                window += edge[r] - edge[(r + n - steps % n) % n];
            }
            dearest = std::max(dearest, window);
        }
        return turn * static_cast<int64_t>(steps / n) + dearest;
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
