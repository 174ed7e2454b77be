#include "ns3/collective-cost-model.h"

#include <algorithm>
#include <limits>
#include <map>
#include <stdexcept>
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

/**
 * A ring of \p steps steps over \p order moving \p piece bytes per edge and step. Rank
 * r's transfer at step k waits for rank r-1's at step k-1, so the last one ends after
 * the costs of K consecutive edges (K = the steps): whole turns of the ring, then the
 * dearest window of the rest. And every edge carries a piece at every step: a slow
 * edge's sends queue, so K of its pieces back to back, and one latency, bound the
 * time from below. A uniform ring gives K (a + S/(nB)) either way. \p share(from, to):
 * the rings that share the edge's way out of its sender.
 */
Time
RingTime(const std::vector<uint32_t>& order, uint32_t steps, double piece,
         const CollectivePathCostFn& cost, const std::function<uint32_t(uint32_t, uint32_t)>& share)
{
    const size_t m = order.size();
    std::vector<Time> edge(m);
    Time turn;
    Time queued; // the slowest edge's pieces back to back
    for (size_t i = 0; i < m; ++i)
    {
        const uint32_t from = order[i];
        const uint32_t to = order[(i + 1) % m];
        auto c = cost(from, to);
        c.bytesPerSecond /= share(from, to);
        edge[i] = StepTime(c, piece);
        turn += edge[i];
        queued = std::max(queued, c.alpha + Seconds(piece / c.bytesPerSecond * steps));
    }
    const size_t rest = steps % m;
    Time window;
    for (size_t j = 0; j < rest; ++j)
    {
        window += edge[j];
    }
    Time dearest = window;
    for (size_t i = 1; i < m && rest > 0; ++i)
    {
        window += edge[(i + rest - 1) % m] - edge[i - 1]; // slide by one edge
        dearest = std::max(dearest, window);
    }
    return std::max(turn * static_cast<int64_t>(steps / m) + dearest, queued);
}

/**
 * Hierarchical's pipeline of \p k chunks, in seconds: each chunk's reduce-scatter, then
 * its all-reduce on the rails (\p ar), then its all-gather; each phase takes the chunks
 * in order. The reduce-scatter and the all-gather share the servers' links: each
 * chunk's is \p work of bytes at the links' rate, shared half and half while both
 * move bytes, and is in \p latency later (its steps' alpha). A rank goes on to the
 * next chunk once it has sent, so the links stay busy while there is work.
 */
double
HierarchicalPipeline(uint32_t k, double latency, double work, double ar)
{
    uint32_t rs = 0;      // the chunk the reduce-scatter is on
    double rsLeft = work; // its bytes left, in seconds alone
    uint32_t ag = 0;      // the chunk the all-gather is on
    double agLeft = 0;    // its bytes left (once it has begun)
    double agFrom = -1;   // when it may begin; < 0: its all-reduce has not begun
    std::vector<double> arDone(k, -1);
    double t = 0;
    double end = 0;
    auto next = [&]() {
        if (ag < k && agFrom < 0 && arDone[ag] >= 0)
        {
            agFrom = std::max(t, arDone[ag]);
            agLeft = work;
        }
    };
    while (ag < k)
    {
        const bool rsOn = rs < k;
        const bool agOn = agFrom >= 0 && agFrom <= t;
        const int moving = (rsOn ? 1 : 0) + (agOn ? 1 : 0);
        double dt = std::numeric_limits<double>::infinity();
        if (rsOn)
        {
            dt = rsLeft * moving;
        }
        if (agOn)
        {
            dt = std::min(dt, agLeft * moving);
        }
        else if (agFrom > t)
        {
            dt = std::min(dt, agFrom - t);
        }
        t += dt;
        rsLeft -= rsOn ? dt / moving : 0;
        agLeft -= agOn ? dt / moving : 0;
        if (rsOn && rsLeft <= 1e-18)
        {
            arDone[rs] = std::max(t + latency, rs > 0 ? arDone[rs - 1] : 0.0) + ar;
            rsLeft = work;
            ++rs;
            next();
        }
        if (agOn && agLeft <= 1e-18)
        {
            end = t + latency;
            ++ag;
            agFrom = -1;
            next();
        }
    }
    return end;
}

/**
 * How many of \p orders' rings share each edge's way out of its sender: on a server's
 * switch (NVSwitch, PCIe) or its NIC, every ring leaving the rank inside its server, or
 * out of it; where the server's links join only some pairs (\p layout.direct), each
 * linked pair has a link of its own, shared by the rings that take that pair, and the
 * edges between unlinked pairs all share the server's PCIe (a bound: they may cross
 * different switches).
 */
std::function<uint32_t(uint32_t, uint32_t)>
RingShares(const std::vector<std::vector<uint32_t>>& orders, const std::vector<uint32_t>& serverOf,
           const CollectiveLayout& layout)
{
    const auto way = [&serverOf, &layout](uint32_t from, uint32_t to) {
        if (layout.direct.empty())
        {
            return std::make_pair(from, serverOf[from] == serverOf[to] ? 0u : 1u);
        }
        return layout.direct[from][to] ? std::make_pair(from, to)
                                       : std::make_pair(UINT32_MAX, UINT32_MAX);
    };
    std::map<std::pair<uint32_t, uint32_t>, uint32_t> ways;
    for (const auto& order : orders)
    {
        for (size_t i = 0; i < order.size(); ++i)
        {
            ++ways[way(order[i], order[(i + 1) % order.size()])];
        }
    }
    return [ways, way](uint32_t from, uint32_t to) {
        const auto it = ways.find(way(from, to));
        return it == ways.end() ? 1u : it->second;
    };
}

} // namespace

Time
CollectiveAnalyticalTime(CollectiveOp op, CollectiveAlgorithm algorithm, uint32_t ranks,
                         uint64_t bytes, const CollectivePathCostFn& cost,
                         const CollectiveLayout& layout, const CollectiveRankCostFn& inSwitch)
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
    switch (algorithm)
    {
    case CollectiveAlgorithm::Ring: {
        if (op == CollectiveOp::Broadcast || op == CollectiveOp::Reduce)
        {
            // A pipelined chain of m pieces: the first piece crosses every hop, each
            // other one follows a hop behind; the dearest hop paces the followers.
            const uint32_t m = n * CollectiveSplitOf(op, algorithm, n, bytes, layout);
            Time chain;
            Time dearest;
            for (uint32_t h = 0; h + 1 < n; ++h)
            {
                const Time hop =
                    StepTime(op == CollectiveOp::Broadcast ? cost(h, h + 1) : cost(h + 1, h),
                             static_cast<double>(bytes) / m);
                chain += hop;
                dearest = std::max(dearest, hop);
            }
            return chain + dearest * static_cast<int64_t>(m - 1);
        }
        const uint32_t c = CollectiveSplitOf(op, algorithm, n, bytes, layout);
        const auto orders = CollectiveRingOrders(n, layout, c);
        const auto share = RingShares(orders, serverOf, layout);
        Time worst;
        for (const auto& order : orders)
        {
            worst = std::max(worst, RingTime(order, phases * (n - 1), piece / c, cost, share));
        }
        return worst;
    }
    case CollectiveAlgorithm::Hierarchical: {
        const uint32_t k = CollectiveSplitOf(op, algorithm, n, bytes, layout);
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
        // The servers' links carry every chunk's reduce-scatter and all-gather, the rails
        // every chunk's all-reduce; the pipeline's time comes from playing it out.
        return Seconds(HierarchicalPipeline(k, (rs - rsBytes).GetSeconds(), rsBytes.GetSeconds(),
                                            ar.GetSeconds()));
    }
    case CollectiveAlgorithm::Tree: {
        // Each chunk climbs and descends the trees (2 x height steps of a piece); the
        // other chunks follow, paced by the rank whose way out carries the most pieces
        // per chunk (up to its parent and down to its children, in both trees).
        const uint32_t k = CollectiveSplitOf(op, algorithm, n, bytes, layout);
        const double p = static_cast<double>(bytes) / (2 * k);
        const auto trees = CollectiveTrees(n);
        Time slowest;  // one hop of the slowest edge
        Time perChunk; // the busiest rank's pieces of one chunk of each tree
        uint32_t tall = 0;
        std::vector<Time> out(n);
        for (const auto& parent : trees)
        {
            for (uint32_t r = 0; r < n; ++r)
            {
                uint32_t depth = 0;
                for (int64_t x = r; parent[x] >= 0; x = parent[x])
                {
                    ++depth;
                }
                tall = std::max(tall, depth);
                if (parent[r] < 0)
                {
                    continue;
                }
                const auto x = static_cast<uint32_t>(parent[r]);
                for (const auto& [from, to] : {std::pair{r, x}, std::pair{x, r}})
                {
                    const auto c = cost(from, to);
                    slowest = std::max(slowest, StepTime(c, p));
                    out[from] += Seconds(p / c.bytesPerSecond);
                }
            }
        }
        for (const Time& t : out)
        {
            perChunk = std::max(perChunk, t);
        }
        return slowest * static_cast<int64_t>(2 * tall) + perChunk * static_cast<int64_t>(k - 1);
    }
    case CollectiveAlgorithm::Nvls: {
        if (!inSwitch)
        {
            throw std::invalid_argument("nvls needs the cost of the switch's sums and copies");
        }
        const bool reduces = op != CollectiveOp::AllGather;
        const bool gathers = op != CollectiveOp::ReduceScatter;
        const double total = static_cast<double>(bytes);
        Time worst;
        for (uint32_t r = 0; r < n; ++r)
        {
            const auto made = inSwitch(r);
            const double out = (reduces ? total : 0) + (gathers ? piece : 0);
            const double in = (reduces ? piece : 0) + (gathers ? total : 0);
            const double busier =
                std::max(out / cost(r, (r + 1) % n).bytesPerSecond, in / made.bytesPerSecond);
            worst = std::max(worst, made.alpha * static_cast<int64_t>(phases) + Seconds(busier));
        }
        return worst;
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
        if (op == CollectiveOp::SendRecv)
        {
            return StepTime(cost(0, 1), static_cast<double>(bytes));
        }
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
