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

/// A ring of \p steps steps over \p order moving \p piece bytes per edge and step: the
/// dearest edge's cost, at every step. \p share(from, to): the rings that share the
/// edge's way out of its sender.
Time
RingTime(const std::vector<uint32_t>& order, uint32_t steps, double piece,
         const CollectivePathCostFn& cost, const std::function<uint32_t(uint32_t, uint32_t)>& share)
{
    Time dearest;
    for (size_t i = 0; i < order.size(); ++i)
    {
        const uint32_t from = order[i];
        const uint32_t to = order[(i + 1) % order.size()];
        auto c = cost(from, to);
        c.bytesPerSecond /= share(from, to);
        dearest = std::max(dearest, StepTime(c, piece));
    }
    return dearest * static_cast<int64_t>(steps);
}

} // namespace

Time
CollectiveAnalyticalTime(CollectiveOp op, CollectiveAlgorithm algorithm, uint32_t ranks,
                         uint64_t bytes, const CollectivePathCostFn& cost,
                         const CollectiveLayout& layout)
{
    CheckCollective(op, algorithm, ranks, bytes, layout);
    const uint32_t n = ranks;
    const double piece = static_cast<double>(bytes) / n;
    const uint32_t phases = op == CollectiveOp::AllReduce ? 2 : 1;
    std::vector<uint32_t> serverOf(n, 0);
    for (uint32_t s = 0; s < layout.servers.size(); ++s)
    {
        for (uint32_t r : layout.servers[s])
        {
            serverOf[r] = s;
        }
    }
    const auto inside = [&serverOf](uint32_t a, uint32_t b) { return serverOf[a] == serverOf[b]; };
    switch (algorithm)
    {
    case CollectiveAlgorithm::Ring: {
        const uint32_t c = CollectiveSplit(bytes, n, layout.RanksPerServer());
        const auto orders = CollectiveRingOrders(n, layout, c);
        // How many channels leave each rank inside its server, and out of it.
        std::vector<uint32_t> ways(2 * n, 0);
        for (const auto& order : orders)
        {
            for (size_t i = 0; i < order.size(); ++i)
            {
                ++ways[2 * order[i] + (inside(order[i], order[(i + 1) % n]) ? 0 : 1)];
            }
        }
        const auto share = [&](uint32_t from, uint32_t to) {
            return ways[2 * from + (inside(from, to) ? 0 : 1)];
        };
        Time worst;
        for (const auto& order : orders)
        {
            worst = std::max(worst, RingTime(order, phases * (n - 1), piece / c, cost, share));
        }
        return worst;
    }
    case CollectiveAlgorithm::Hierarchical: {
        const uint32_t k = CollectiveSplit(bytes, n, layout.chunks);
        const uint32_t g = layout.RanksPerServer();
        const uint32_t servers = static_cast<uint32_t>(layout.servers.size());
        const double chunk = static_cast<double>(bytes) / k;
        const auto alone = [](uint32_t, uint32_t) { return 1u; };
        const CollectivePathCostFn beta = [&cost](uint32_t x, uint32_t y) {
            return CollectiveTransport::PathCost{Time(0), cost(x, y).bytesPerSecond};
        };
        // Each phase of one chunk, with its latency (t) and its bytes alone (b).
        Time rs;
        Time rsBytes;
        for (const auto& server : layout.servers)
        {
            rs = std::max(rs, RingTime(server, g - 1, chunk / g, cost, alone));
            rsBytes = std::max(rsBytes, RingTime(server, g - 1, chunk / g, beta, alone));
        }
        Time ar;
        Time arBytes;
        for (uint32_t j = 0; j < g; ++j)
        {
            std::vector<uint32_t> rail;
            for (const auto& server : layout.servers)
            {
                rail.push_back(server[j]);
            }
            const double share = chunk / g / servers;
            ar = std::max(ar, RingTime(rail, 2 * (servers - 1), share, cost, alone));
            arBytes = std::max(arBytes, RingTime(rail, 2 * (servers - 1), share, beta, alone));
        }
        // The servers' links carry every chunk's reduce-scatter and all-gather; the rails
        // every chunk's all-reduce, between the first reduce-scatter and the last
        // all-gather. Latency is paid once, where the pipeline fills.
        const auto more = static_cast<int64_t>(k - 1);
        const Time onServers = 2 * rs + 2 * rsBytes * more;
        const Time onRails = 2 * rs + ar + arBytes * more;
        return std::max(onServers, onRails);
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
