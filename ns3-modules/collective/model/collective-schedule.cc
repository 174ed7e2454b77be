#include "ns3/collective-schedule.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <iterator>
#include <numeric>
#include <stdexcept>

namespace ns3
{

namespace
{

const char* const kOpNames[] = {"all-reduce", "reduce-scatter", "all-gather", "all-to-all",
                                "broadcast",  "reduce",         "send-recv"};
const char* const kAlgorithmNames[] = {"ring", "halving-doubling", "direct", "hierarchical", "tree",
                                       "nvls"};

/// The enumerator whose name in \p names is \p name.
template <class E, size_t N>
bool
ParseName(const char* const (&names)[N], const std::string& name, E& out)
{
    for (size_t i = 0; i < N; ++i)
    {
        if (name == names[i])
        {
            out = static_cast<E>(i);
            return true;
        }
    }
    return false;
}

uint32_t
Mod(int64_t a, uint32_t n)
{
    return static_cast<uint32_t>(((a % n) + n) % n);
}

/// Transfers by receiving rank: what each rank has received so far (halving-doubling), or
/// in one phase (rings).
using Received = std::vector<std::vector<uint32_t>>;

/// A step's transfers, from index \p first on, are received: later steps may need them.
/// (Within the step nobody waits for them, so they are added once it is built.)
void
Arrive(const CollectiveSchedule& s, uint32_t first, Received& received)
{
    for (uint32_t i = first; i < s.transfers.size(); ++i)
    {
        received[s.transfers[i].to].push_back(i);
    }
}

/// Each rank's last arrival of \p got (none where it got nothing).
Received
Last(const Received& got)
{
    Received last(got.size());
    for (size_t r = 0; r < got.size(); ++r)
    {
        if (!got[r].empty())
        {
            last[r] = {got[r].back()};
        }
    }
    return last;
}

/**
 * One ring phase over the ranks \p order (position i sends to i+1): m-1 steps from
 * \p step0, moving the segments of pieces \p segments (by position). A reduce step k
 * sends segment i-k-1, so position i ends holding segment i summed; a copy step k
 * sends segment i-k, which i received the step before (or holds at step 0). That last
 * arrival carries everything the segment holds, with what the rank itself adds to it:
 * a rank's first send, and every reducing one, also wait for \p entry of it (what
 * the rank's part needs). Returns what each rank received.
 */
Received
AddRing(CollectiveSchedule& s, const std::vector<uint32_t>& order,
        const std::vector<std::vector<uint32_t>>& segments, bool reduce, uint32_t step0,
        const Received& entry)
{
    const uint32_t m = static_cast<uint32_t>(order.size());
    Received got(s.ranks);
    for (uint32_t k = 0; k + 1 < m; ++k)
    {
        const uint32_t first = static_cast<uint32_t>(s.transfers.size());
        for (uint32_t i = 0; i < m; ++i)
        {
            const uint32_t r = order[i];
            CollectiveTransfer t;
            t.from = r;
            t.to = order[(i + 1) % m];
            t.pieces = segments[Mod(static_cast<int64_t>(i) - k - (reduce ? 1 : 0), m)];
            t.bytes = s.pieceBytes * t.pieces.size();
            t.reduce = reduce;
            t.step = step0 + k;
            if (k == 0 || reduce)
            {
                // What the rank adds to a reduce (its own part) is in once entry is.
                t.after = entry.empty() ? std::vector<uint32_t>{} : entry[r];
            }
            if (k > 0)
            {
                t.after.push_back(got[r].back());
            }
            s.transfers.push_back(std::move(t));
        }
        Arrive(s, first, got);
    }
    return got;
}

/// Ring reduce-scatter, all-gather or both, one ring per channel over its own pieces
/// (channel c's piece of rank r: c * ranks + r).
void
AddRings(CollectiveSchedule& s, const CollectiveLayout& layout, bool reduces, bool gathers)
{
    const uint32_t n = s.ranks;
    const auto orders = CollectiveRingOrders(n, layout, s.split);
    for (uint32_t c = 0; c < orders.size(); ++c)
    {
        std::vector<std::vector<uint32_t>> segments;
        for (uint32_t r : orders[c])
        {
            segments.push_back({c * n + r});
        }
        Received got;
        if (reduces)
        {
            got = AddRing(s, orders[c], segments, true, 0, {});
        }
        if (gathers)
        {
            AddRing(s, orders[c], segments, false, reduces ? n - 1 : 0, Last(got));
        }
    }
    s.steps = (reduces && gathers ? 2 : 1) * (n - 1);
}

/// Adds \p more's transfers to \p into's, rank by rank.
void
Merge(Received& into, const Received& more)
{
    for (size_t r = 0; r < more.size(); ++r)
    {
        into[r].insert(into[r].end(), more[r].begin(), more[r].end());
    }
}

/// Hierarchical all-reduce, chunk by chunk: each server's ranks reduce-scatter the
/// chunk (position j ends with segment j: its piece of every server's j-th rank), the
/// j-th ranks of all servers all-reduce segment j on a ring (one ring per rail), and
/// each server all-gathers. Each phase takes the chunks in order, a rank starting a
/// chunk's phase once it has received the chunk before's (a pipeline that fills
/// chunk by chunk, as NCCL's does).
void
AddHierarchical(CollectiveSchedule& s, const CollectiveLayout& layout)
{
    const uint32_t n = s.ranks;
    const auto& servers = layout.servers;
    const uint32_t nServers = static_cast<uint32_t>(servers.size());
    const uint32_t g = layout.RanksPerServer();
    Received lastRs(n); // each rank's last arrival of the chunk before, by phase
    Received lastRail(n);
    Received lastAg(n);
    for (uint32_t k = 0; k < s.split; ++k)
    {
        const uint32_t base = k * n;
        std::vector<std::vector<uint32_t>> segments(g);
        for (uint32_t j = 0; j < g; ++j)
        {
            for (const auto& server : servers)
            {
                segments[j].push_back(base + server[j]);
            }
        }
        Received intra(n);
        for (const auto& server : servers)
        {
            Merge(intra, AddRing(s, server, segments, true, 0, lastRs));
        }
        lastRs = Last(intra);
        Received entry = lastRs;
        Merge(entry, lastRail);
        Received gathered(n);
        Received rail(n);
        for (uint32_t j = 0; j < g; ++j)
        {
            std::vector<uint32_t> ranks;
            std::vector<std::vector<uint32_t>> shares;
            for (const auto& server : servers)
            {
                ranks.push_back(server[j]);
                shares.push_back({base + server[j]});
            }
            const Received rs = AddRing(s, ranks, shares, true, g - 1, entry);
            Received summed = Last(rs); // a rank's own share: its server's sum and the others'
            for (uint32_t r : ranks)
            {
                summed[r].insert(summed[r].end(), entry[r].begin(), entry[r].end());
            }
            const Received ag = AddRing(s, ranks, shares, false, g - 1 + nServers - 1, summed);
            for (uint32_t r : ranks)
            {
                // Its own share summed, and every other share.
                gathered[r] = ag[r];
                gathered[r].insert(gathered[r].end(), summed[r].begin(), summed[r].end());
                rail[r] = ag[r];
            }
        }
        lastRail = Last(rail);
        Merge(gathered, lastAg);
        Received out(n);
        for (const auto& server : servers)
        {
            Merge(out, AddRing(s, server, segments, false, g - 1 + 2 * (nServers - 1), gathered));
        }
        lastAg = Last(out);
    }
    s.steps = 2 * (g - 1) + 2 * (nServers - 1);
}

/// Recursive halving (reduce): at step k rank r sends r ^ d (d = n >> k+1) the half of its
/// range that holds the partner's piece, keeping the half that holds its own. Recursive
/// doubling (copy): at step k rank r sends its range of d = 1 << k pieces to r ^ d. What
/// a rank sends sums or gathers every arrival so far, so it waits for all of them.
void
AddHalvingDoublingPhase(CollectiveSchedule& s, bool reduce, Received& received)
{
    const uint32_t n = s.ranks;
    uint32_t m = 0;
    while ((1u << m) < n)
    {
        ++m;
    }
    for (uint32_t k = 0; k < m; ++k)
    {
        const uint32_t d = reduce ? n >> (k + 1) : 1u << k;
        const uint32_t first = static_cast<uint32_t>(s.transfers.size());
        for (uint32_t r = 0; r < n; ++r)
        {
            CollectiveTransfer t;
            t.from = r;
            t.to = r ^ d;
            const uint32_t lo = ((reduce ? t.to : r) / d) * d;
            for (uint32_t p = lo; p < lo + d; ++p)
            {
                t.pieces.push_back(p);
            }
            t.bytes = s.pieceBytes * d;
            t.reduce = reduce;
            t.step = s.steps + k;
            t.after = received[r];
            s.transfers.push_back(std::move(t));
        }
        Arrive(s, first, received);
    }
    s.steps += m;
}

/**
 * Tree all-reduce: in each of the two trees, chunk by chunk, every rank sends its part
 * summed with its children's up to its parent; the root then holds the chunk summed
 * over every rank and sends it down, each rank passing it on to its children. Each
 * transfer also waits for the same transfer of the chunk before, so the chunks follow
 * one another up and down the trees.
 */
void
AddTrees(CollectiveSchedule& s)
{
    const uint32_t n = s.ranks;
    const auto trees = CollectiveTrees(n);
    const uint32_t chunks = s.split;
    for (uint32_t t = 0; t < 2; ++t)
    {
        const auto& parent = trees[t];
        std::vector<std::vector<uint32_t>> children(n);
        std::vector<uint32_t> height(n, 0); // a leaf's is 0
        std::vector<uint32_t> depth(n, 0);  // the root's is 0
        int64_t root = 0;
        for (uint32_t r = 0; r < n; ++r)
        {
            if (parent[r] < 0)
            {
                root = r;
                continue;
            }
            children[parent[r]].push_back(r);
            for (int64_t up = parent[r]; up >= 0; up = parent[up])
            {
                ++depth[r];
            }
        }
        for (uint32_t r = 0; r < n; ++r)
        {
            uint32_t below = 0; // r's distance below each of its ancestors
            for (int64_t x = r; parent[x] >= 0; x = parent[x])
            {
                ++below;
                height[parent[x]] = std::max(height[parent[x]], below);
            }
        }
        const uint32_t tall = height[root];
        // Up leaves first, so a rank's children's transfers are made before its own; down
        // root first.
        std::vector<uint32_t> upOrder(n);
        for (uint32_t r = 0; r < n; ++r)
        {
            upOrder[r] = r;
        }
        std::vector<uint32_t> downOrder = upOrder;
        std::stable_sort(upOrder.begin(), upOrder.end(),
                         [&](uint32_t a, uint32_t b) { return height[a] < height[b]; });
        std::stable_sort(downOrder.begin(), downOrder.end(),
                         [&](uint32_t a, uint32_t b) { return depth[a] < depth[b]; });
        for (uint32_t c = 0; c < chunks; ++c)
        {
            const uint32_t piece = t * chunks + c;
            const auto first = static_cast<uint32_t>(s.transfers.size());
            std::vector<std::vector<uint32_t>> up(n); // arrivals from each rank's children
            for (uint32_t r : upOrder)
            {
                if (parent[r] < 0)
                {
                    continue;
                }
                CollectiveTransfer x;
                x.from = r;
                x.to = static_cast<uint32_t>(parent[r]);
                x.pieces = {piece};
                x.bytes = s.pieceBytes;
                x.reduce = true;
                x.step = height[r];
                x.after = up[r];
                up[x.to].push_back(static_cast<uint32_t>(s.transfers.size()));
                s.transfers.push_back(std::move(x));
            }
            // Down: the root once its children's sums are in, every other rank once its
            // parent's copy is.
            std::vector<uint32_t> down(n, 0);
            for (uint32_t r : downOrder)
            {
                for (uint32_t child : children[r])
                {
                    CollectiveTransfer x;
                    x.from = r;
                    x.to = child;
                    x.pieces = {piece};
                    x.bytes = s.pieceBytes;
                    x.step = tall + depth[r];
                    x.after = parent[r] < 0 ? up[r] : std::vector<uint32_t>{down[r]};
                    down[child] = static_cast<uint32_t>(s.transfers.size());
                    s.transfers.push_back(std::move(x));
                }
            }
            const auto perChunk = static_cast<uint32_t>(s.transfers.size()) - first;
            if (c > 0)
            {
                for (uint32_t i = first; i < s.transfers.size(); ++i)
                {
                    s.transfers[i].after.push_back(i - perChunk);
                }
            }
        }
        s.steps = std::max(s.steps, 2 * tall);
    }
}

/**
 * Broadcast or reduce as a pipelined chain over the ranks in order (the root first):
 * each piece goes hop by hop, away from the root (broadcast, copied) or toward it
 * (reduce, summed), and each hop carries the pieces in order, so the pieces follow
 * one another down the chain.
 */
void
AddChain(CollectiveSchedule& s, bool reduce)
{
    const uint32_t n = s.ranks;
    const uint32_t hops = n - 1;
    for (uint32_t p = 0; p < s.pieces; ++p)
    {
        for (uint32_t h = 0; h < hops; ++h)
        {
            CollectiveTransfer t;
            t.from = reduce ? n - 1 - h : h;
            t.to = reduce ? n - 2 - h : h + 1;
            t.pieces = {p};
            t.bytes = s.pieceBytes;
            t.reduce = reduce;
            t.step = p + h;
            if (h > 0)
            {
                t.after.push_back(p * hops + h - 1); // the piece reached this hop's sender
            }
            if (p > 0)
            {
                t.after.push_back((p - 1) * hops + h); // the piece before left on this hop
            }
            s.transfers.push_back(std::move(t));
        }
    }
    s.steps = s.pieces + hops - 1;
}

/**
 * NVLS: chunk c's piece of rank i is summed in the switch from every rank into i
 * (after i's sum of chunk c - kNvlsWindow: that many sums in flight per rank), then
 * multicast by i to every rank (after its sum; with no sum, after its multicast of
 * chunk c - kNvlsWindow).
 */
constexpr uint32_t kNvlsWindow = 1;

void
AddNvls(CollectiveSchedule& s, bool reduces, bool gathers)
{
    const uint32_t n = s.ranks;
    std::vector<uint32_t> all(n);
    for (uint32_t r = 0; r < n; ++r)
    {
        all[r] = r;
    }
    // each rank's transfers of its own pieces (sums, or multicasts without sums), by chunk
    std::vector<std::vector<uint32_t>> own(n);
    for (uint32_t c = 0; c < s.split; ++c)
    {
        for (uint32_t i = 0; i < n; ++i)
        {
            CollectiveTransfer t;
            t.from = i;
            t.to = i;
            t.group = all;
            t.pieces = {c * n + i};
            t.bytes = s.pieceBytes;
            t.step = c;
            if (c >= kNvlsWindow)
            {
                t.after = {own[i][c - kNvlsWindow]};
            }
            own[i].push_back(static_cast<uint32_t>(s.transfers.size()));
            if (reduces)
            {
                t.via = CollectiveVia::SwitchReduce;
                s.transfers.push_back(t);
                t.after = {own[i].back()};
            }
            if (gathers)
            {
                t.via = CollectiveVia::SwitchMulticast;
                s.transfers.push_back(t);
            }
        }
    }
    s.steps = s.split;
}

void
AddDirect(CollectiveSchedule& s)
{
    const uint32_t n = s.ranks;
    for (uint32_t r = 0; r < n; ++r)
    {
        for (uint32_t i = 1; i < n; ++i)
        {
            CollectiveTransfer t;
            t.from = r;
            t.to = (r + i) % n; // each rank starts with its right neighbour, as NCCL's p2p does
            t.pieces = {r * n + t.to};
            t.bytes = s.pieceBytes;
            s.transfers.push_back(std::move(t));
        }
    }
    s.steps = 1;
}

} // namespace

const char*
CollectiveOpName(CollectiveOp op)
{
    return kOpNames[static_cast<size_t>(op)];
}

const char*
CollectiveAlgorithmName(CollectiveAlgorithm a)
{
    return kAlgorithmNames[static_cast<size_t>(a)];
}

std::vector<std::string>
CollectiveOpNames()
{
    return {std::begin(kOpNames), std::end(kOpNames)};
}

std::vector<std::string>
CollectiveAlgorithmNames()
{
    return {std::begin(kAlgorithmNames), std::end(kAlgorithmNames)};
}

bool
ParseCollectiveOp(const std::string& name, CollectiveOp& op)
{
    return ParseName(kOpNames, name, op);
}

bool
ParseCollectiveAlgorithm(const std::string& name, CollectiveAlgorithm& a)
{
    return ParseName(kAlgorithmNames, name, a);
}

CollectiveAlgorithm
CollectiveDefaultAlgorithm(CollectiveOp op)
{
    return op == CollectiveOp::AllToAll || op == CollectiveOp::SendRecv
               ? CollectiveAlgorithm::Direct
               : CollectiveAlgorithm::Ring;
}

double
CollectiveBusBwFactor(CollectiveOp op, uint32_t ranks)
{
    const double n = ranks;
    switch (op)
    {
    case CollectiveOp::AllReduce:
        return 2 * (n - 1) / n;
    case CollectiveOp::Broadcast:
    case CollectiveOp::Reduce:
    case CollectiveOp::SendRecv:
        return 1;
    default:
        return (n - 1) / n;
    }
}

RankSet::RankSet(uint32_t ranks) : m_words((ranks + 63) / 64, 0)
{
}

RankSet
RankSet::Of(uint32_t ranks, uint32_t rank)
{
    RankSet s(ranks);
    s.m_words[rank / 64] |= uint64_t{1} << (rank % 64);
    return s;
}

RankSet
RankSet::All(uint32_t ranks)
{
    RankSet s(ranks);
    for (uint32_t r = 0; r < ranks; ++r)
    {
        s.m_words[r / 64] |= uint64_t{1} << (r % 64);
    }
    return s;
}

bool
RankSet::Empty() const
{
    for (uint64_t w : m_words)
    {
        if (w)
        {
            return false;
        }
    }
    return true;
}

bool
RankSet::Intersects(const RankSet& o) const
{
    for (size_t i = 0; i < m_words.size() && i < o.m_words.size(); ++i)
    {
        if (m_words[i] & o.m_words[i])
        {
            return true;
        }
    }
    return false;
}

bool
RankSet::Contains(const RankSet& o) const
{
    for (size_t i = 0; i < o.m_words.size(); ++i)
    {
        const uint64_t mine = i < m_words.size() ? m_words[i] : 0;
        if ((o.m_words[i] & ~mine) != 0)
        {
            return false;
        }
    }
    return true;
}

void
RankSet::Add(const RankSet& o)
{
    if (m_words.size() < o.m_words.size())
    {
        m_words.resize(o.m_words.size(), 0);
    }
    for (size_t i = 0; i < o.m_words.size(); ++i)
    {
        m_words[i] |= o.m_words[i];
    }
}

std::string
RankSet::ToString() const
{
    std::vector<uint32_t> ranks;
    for (size_t i = 0; i < m_words.size(); ++i)
    {
        for (uint32_t b = 0; b < 64; ++b)
        {
            if (m_words[i] >> b & 1)
            {
                ranks.push_back(static_cast<uint32_t>(i * 64 + b));
            }
        }
    }
    return fmt::format("{{{}}}", fmt::join(ranks, ","));
}

bool
CollectiveLayout::Uniform() const
{
    if (servers.size() < 2)
    {
        return false;
    }
    for (const auto& server : servers)
    {
        if (server.empty() || server.size() != servers[0].size())
        {
            return false;
        }
    }
    return true;
}

uint32_t
CollectiveLayout::RanksPerServer() const
{
    return Uniform() ? static_cast<uint32_t>(servers[0].size()) : 1;
}

namespace
{

/// Extends \p path (from rank 0) to a cycle through every rank over the pairs \p free
/// joins both ways, depth first; false when none exists or \p budget runs out.
bool
ExtendCycle(std::vector<uint32_t>& path, std::vector<bool>& on,
            const std::vector<std::vector<bool>>& free, uint64_t& budget)
{
    const auto n = static_cast<uint32_t>(free.size());
    const uint32_t last = path.back();
    if (path.size() == n)
    {
        return free[last][path[0]];
    }
    for (uint32_t next = 0; next < n && budget > 0; ++next)
    {
        if (on[next] || !free[last][next])
        {
            continue;
        }
        --budget;
        on[next] = true;
        path.push_back(next);
        if (ExtendCycle(path, on, free, budget))
        {
            return true;
        }
        path.pop_back();
        on[next] = false;
    }
    return false;
}

/// Rings over the pairs \p direct joins (both ways): cycles through every rank that share
/// no pair, each followed by its reverse; empty when there is none.
std::vector<std::vector<uint32_t>>
LinkFollowingRings(const std::vector<std::vector<bool>>& direct)
{
    const auto n = static_cast<uint32_t>(direct.size());
    std::vector<std::vector<bool>> free(n, std::vector<bool>(n, false));
    for (uint32_t a = 0; a < n; ++a)
    {
        for (uint32_t b = 0; b < n; ++b)
        {
            free[a][b] = a != b && direct[a].at(b) && direct.at(b)[a];
        }
    }
    std::vector<std::vector<uint32_t>> rings;
    uint64_t budget = 1000000; // a bound on the search on a server of many GPUs
    while (n > 1)
    {
        std::vector<uint32_t> path{0};
        std::vector<bool> on(n, false);
        on[0] = true;
        if (!ExtendCycle(path, on, free, budget))
        {
            break;
        }
        for (uint32_t i = 0; i < n; ++i)
        {
            const uint32_t a = path[i];
            const uint32_t b = path[(i + 1) % n];
            free[a][b] = false;
            free[b][a] = false;
        }
        rings.push_back(path);
        if (n > 2)
        {
            // Backwards: rank 0 first, then the others in reverse.
            std::reverse(path.begin() + 1, path.end());
            rings.push_back(std::move(path));
        }
    }
    return rings;
}

/// Extends \p path to the cycle through every rank that takes the fewest pairs \p direct
/// does not join, into \p best (its count in \p bestCost), depth first within \p budget.
void
FewestIndirect(std::vector<uint32_t>& path, std::vector<bool>& on, uint32_t cost,
               const std::vector<std::vector<bool>>& direct, std::vector<uint32_t>& best,
               uint32_t& bestCost, uint64_t& budget)
{
    const auto n = static_cast<uint32_t>(direct.size());
    const uint32_t last = path.back();
    if (path.size() == n)
    {
        const uint32_t total = cost + (direct[last][path[0]] ? 0 : 1);
        if (total < bestCost)
        {
            bestCost = total;
            best = path;
        }
        return;
    }
    for (uint32_t pass = 0; pass < 2; ++pass) // linked next ranks first
    {
        for (uint32_t next = 0; next < n && budget > 0; ++next)
        {
            const uint32_t step = direct[last][next] ? 0 : 1;
            if (on[next] || step != pass || cost + step >= bestCost)
            {
                continue;
            }
            --budget;
            on[next] = true;
            path.push_back(next);
            FewestIndirect(path, on, cost + step, direct, best, bestCost, budget);
            path.pop_back();
            on[next] = false;
        }
    }
}

} // namespace

std::vector<std::vector<uint32_t>>
CollectiveRingOrders(uint32_t ranks, const CollectiveLayout& layout, uint32_t channels)
{
    const uint32_t g = layout.RanksPerServer();
    if (g < 2 && layout.direct.size() == ranks)
    {
        auto rings = LinkFollowingRings(layout.direct);
        if (!rings.empty())
        {
            rings.resize(std::max(1u, std::min(channels, static_cast<uint32_t>(rings.size()))));
            return rings;
        }
        // No cycle on the links alone: one ring that leaves them (for PCIe) fewest times.
        std::vector<uint32_t> best(ranks);
        std::iota(best.begin(), best.end(), 0u);
        uint32_t bestCost = ranks + 1;
        std::vector<uint32_t> path{0};
        std::vector<bool> on(ranks, false);
        on[0] = true;
        uint64_t budget = 1000000;
        FewestIndirect(path, on, 0, layout.direct, best, bestCost, budget);
        return {best};
    }
    if (g < 2)
    {
        std::vector<uint32_t> order(ranks);
        for (uint32_t r = 0; r < ranks; ++r)
        {
            order[r] = r;
        }
        return {order};
    }
    const uint32_t c = std::max(1u, std::min(channels, g));
    std::vector<std::vector<uint32_t>> orders;
    for (uint32_t ch = 0; ch < c; ++ch)
    {
        const uint32_t start = ch * g / c;
        std::vector<uint32_t> order;
        for (uint32_t s = 0; s < layout.servers.size(); ++s)
        {
            for (uint32_t t = 0; t < g; ++t)
            {
                // Forward from start (ending at start-1), or back from start-1 (ending at start).
                const int64_t j = s % 2 == 0 ? int64_t{start} + t : int64_t{start} - 1 - t;
                order.push_back(layout.servers[s][Mod(j, g)]);
            }
        }
        orders.push_back(std::move(order));
    }
    return orders;
}

std::vector<std::vector<int64_t>>
CollectiveTrees(uint32_t ranks)
{
    // Numbered 1..n, node v's parent in the full in-order tree is v +- lowbit(v), the one
    // with the larger lowbit; the root is the largest power of 2 not above n, and a node
    // past n hands its children to its own parent. Odd numbers (even ranks) are leaves.
    const auto up = [](int64_t v) {
        const int64_t b = v & -v;
        return (v / (2 * b)) % 2 == 0 ? v + b : v - b;
    };
    int64_t root = 1;
    while (root * 2 <= ranks)
    {
        root *= 2;
    }
    std::vector<std::vector<int64_t>> trees(2, std::vector<int64_t>(ranks, -1));
    for (int64_t v = 1; v <= ranks; ++v)
    {
        int64_t p = v == root ? 0 : up(v);
        while (p > ranks)
        {
            p = up(p);
        }
        trees[0][v - 1] = p - 1; // the root's: -1
    }
    for (uint32_t r = 0; r < ranks; ++r)
    {
        // Tree 1 is tree 0 with every rank moved one place on: r sits where r-1 sat.
        const int64_t p = trees[0][(r + ranks - 1) % ranks];
        trees[1][r] = p < 0 ? -1 : (p + 1) % ranks;
    }
    return trees;
}

uint32_t
CollectiveSplit(uint64_t bytes, uint32_t ranks, uint32_t want)
{
    for (uint32_t c = want; c > 1; --c)
    {
        if (bytes % (uint64_t{ranks} * c) == 0)
        {
            return c;
        }
    }
    return 1;
}

uint32_t
CollectiveSplitOf(CollectiveOp op, CollectiveAlgorithm algorithm, uint32_t ranks, uint64_t bytes,
                  const CollectiveLayout& layout)
{
    switch (algorithm)
    {
    case CollectiveAlgorithm::Ring:
        // A chain pipelines its pieces: 8 per rank where the bytes cut so.
        if (op == CollectiveOp::Broadcast || op == CollectiveOp::Reduce)
        {
            return CollectiveSplit(bytes, ranks, 8);
        }
        return CollectiveSplit(
            bytes, ranks,
            layout.direct.empty()
                ? layout.RanksPerServer()
                : static_cast<uint32_t>(CollectiveRingOrders(ranks, layout, ranks * ranks).size()));
    case CollectiveAlgorithm::Hierarchical:
        return CollectiveSplit(bytes, ranks, layout.chunks);
    case CollectiveAlgorithm::Tree:
        return CollectiveSplit(bytes, 2, 16); // each tree takes half the buffer
    case CollectiveAlgorithm::Nvls:
        return CollectiveSplit(bytes, ranks, 32);
    default:
        return 1;
    }
}

void
CheckCollective(CollectiveOp op, CollectiveAlgorithm algorithm, uint32_t ranks, uint64_t bytes,
                const CollectiveLayout& layout)
{
    if (ranks < 2)
    {
        throw std::invalid_argument(
            fmt::format("a collective needs at least 2 ranks, not {}", ranks));
    }
    if (bytes == 0 || bytes % ranks != 0)
    {
        throw std::invalid_argument(fmt::format(
            "{} bytes do not cut into {} equal pieces, one per rank (they are not padded)", bytes,
            ranks));
    }
    if (op == CollectiveOp::SendRecv && ranks != 2)
    {
        throw std::invalid_argument(
            fmt::format("send-recv is between 2 ranks (the first sends), not {}", ranks));
    }
    if (algorithm == CollectiveAlgorithm::Hierarchical && op != CollectiveOp::AllReduce)
    {
        throw std::invalid_argument(
            fmt::format("hierarchical is an all-reduce algorithm; {} has {}", CollectiveOpName(op),
                        CollectiveAlgorithmName(CollectiveDefaultAlgorithm(op))));
    }
    using A = CollectiveAlgorithm;
    bool has = algorithm == CollectiveDefaultAlgorithm(op);
    if (op == CollectiveOp::AllReduce || op == CollectiveOp::ReduceScatter ||
        op == CollectiveOp::AllGather)
    {
        has = algorithm == A::Ring || algorithm == A::HalvingDoubling || algorithm == A::Nvls ||
              ((algorithm == A::Hierarchical || algorithm == A::Tree) &&
               op == CollectiveOp::AllReduce);
    }
    if (!has)
    {
        throw std::invalid_argument(fmt::format(
            "{} has no {} algorithm (all-reduce: ring, halving-doubling, hierarchical, tree or "
            "nvls; reduce-scatter, all-gather: ring, halving-doubling or nvls; broadcast, "
            "reduce: ring; all-to-all, send-recv: direct)",
            CollectiveOpName(op), CollectiveAlgorithmName(algorithm)));
    }
    if (algorithm == CollectiveAlgorithm::Tree && bytes % 2 != 0)
    {
        throw std::invalid_argument(fmt::format(
            "tree halves the buffer between its two trees: {} bytes do not halve (they are "
            "not padded)",
            bytes));
    }
    if (algorithm == CollectiveAlgorithm::HalvingDoubling && (ranks & (ranks - 1)) != 0)
    {
        throw std::invalid_argument(
            fmt::format("halving-doubling needs a power of 2 of ranks, not {}", ranks));
    }
    if (!layout.servers.empty())
    {
        std::vector<uint32_t> placed(ranks, 0);
        for (const auto& server : layout.servers)
        {
            for (uint32_t r : server)
            {
                if (r >= ranks || placed[r]++ != 0)
                {
                    throw std::invalid_argument(fmt::format(
                        "the layout places rank {} {}", r, r >= ranks ? "past the last" : "twice"));
                }
            }
        }
        for (uint32_t r = 0; r < ranks; ++r)
        {
            if (placed[r] == 0)
            {
                throw std::invalid_argument(fmt::format("the layout places rank {} nowhere", r));
            }
        }
    }
    if (algorithm == CollectiveAlgorithm::Hierarchical)
    {
        if (!layout.Uniform())
        {
            throw std::invalid_argument(
                "hierarchical needs the ranks on at least 2 servers, as many on each");
        }
    }
}

CollectiveSchedule
CollectiveSchedule::Build(CollectiveOp op, CollectiveAlgorithm algorithm, uint32_t ranks,
                          uint64_t bytes, const CollectiveLayout& layout)
{
    CheckCollective(op, algorithm, ranks, bytes, layout);
    CollectiveSchedule s;
    s.op = op;
    s.algorithm = algorithm;
    s.ranks = ranks;
    s.bytes = bytes;
    const bool reduces = op == CollectiveOp::AllReduce || op == CollectiveOp::ReduceScatter;
    const bool gathers = op == CollectiveOp::AllReduce || op == CollectiveOp::AllGather;
    const bool chain = op == CollectiveOp::Broadcast || op == CollectiveOp::Reduce;
    s.split = CollectiveSplitOf(op, algorithm, ranks, bytes, layout);
    s.pieces = op == CollectiveOp::AllToAll ? ranks * ranks : ranks * s.split;
    s.pieceBytes = bytes / (uint64_t{ranks} * s.split);
    if (algorithm == CollectiveAlgorithm::Tree)
    {
        s.pieces = 2 * s.split;
        s.pieceBytes = bytes / s.pieces;
    }
    switch (algorithm)
    {
    case CollectiveAlgorithm::Direct:
        if (op == CollectiveOp::SendRecv)
        {
            CollectiveTransfer t;
            t.from = 0;
            t.to = 1;
            t.pieces = {0, 1};
            t.bytes = bytes;
            s.transfers.push_back(std::move(t));
            s.steps = 1;
            break;
        }
        AddDirect(s);
        break;
    case CollectiveAlgorithm::Ring:
        if (chain)
        {
            AddChain(s, op == CollectiveOp::Reduce);
            break;
        }
        AddRings(s, layout, reduces, gathers);
        break;
    case CollectiveAlgorithm::Hierarchical:
        AddHierarchical(s, layout);
        break;
    case CollectiveAlgorithm::Tree:
        AddTrees(s);
        break;
    case CollectiveAlgorithm::Nvls:
        AddNvls(s, reduces, gathers);
        break;
    case CollectiveAlgorithm::HalvingDoubling: {
        Received received(ranks);
        if (reduces)
        {
            AddHalvingDoublingPhase(s, true, received);
        }
        if (gathers)
        {
            AddHalvingDoublingPhase(s, false, received);
        }
        break;
    }
    }
    return s;
}

RankSet
CollectiveSchedule::Initial(uint32_t r, uint32_t p) const
{
    switch (op)
    {
    case CollectiveOp::AllReduce:
    case CollectiveOp::ReduceScatter:
        return RankSet::Of(ranks, r);
    case CollectiveOp::AllGather:
        return p % ranks == r ? RankSet::Of(ranks, r) : RankSet(ranks);
    case CollectiveOp::AllToAll:
        return p / ranks == r ? RankSet::Of(ranks, r) : RankSet(ranks);
    case CollectiveOp::Reduce:
        return RankSet::Of(ranks, r);
    case CollectiveOp::Broadcast:
    case CollectiveOp::SendRecv:
        return r == 0 ? RankSet::Of(ranks, 0) : RankSet(ranks);
    }
    return RankSet(ranks);
}

RankSet
CollectiveSchedule::Goal(uint32_t r, uint32_t p) const
{
    switch (op)
    {
    case CollectiveOp::AllReduce:
        return RankSet::All(ranks);
    case CollectiveOp::ReduceScatter:
        return p % ranks == r ? RankSet::All(ranks) : RankSet(ranks);
    case CollectiveOp::AllGather:
        return RankSet::Of(ranks, p % ranks);
    case CollectiveOp::AllToAll:
        return p % ranks == r ? RankSet::Of(ranks, p / ranks) : RankSet(ranks);
    case CollectiveOp::Broadcast:
        return RankSet::Of(ranks, 0);
    case CollectiveOp::Reduce:
        return r == 0 ? RankSet::All(ranks) : RankSet(ranks);
    case CollectiveOp::SendRecv:
        return r == 1 ? RankSet::Of(ranks, 0) : RankSet(ranks);
    }
    return RankSet(ranks);
}

CollectiveHoldings::CollectiveHoldings(const CollectiveSchedule& s) : m_schedule(s)
{
    m_held.reserve(static_cast<size_t>(s.ranks) * s.pieces);
    for (uint32_t r = 0; r < s.ranks; ++r)
    {
        for (uint32_t p = 0; p < s.pieces; ++p)
        {
            m_held.push_back(s.Initial(r, p));
        }
    }
}

std::vector<RankSet>
CollectiveHoldings::Snapshot(const CollectiveTransfer& t, std::string* wrong) const
{
    std::vector<RankSet> sent;
    sent.reserve(t.pieces.size());
    for (uint32_t p : t.pieces)
    {
        if (t.via != CollectiveVia::SwitchReduce)
        {
            sent.push_back(m_held[static_cast<size_t>(t.from) * m_schedule.pieces + p]);
            continue;
        }
        RankSet sum(m_schedule.ranks);
        for (uint32_t r : t.group)
        {
            const RankSet& held = m_held[static_cast<size_t>(r) * m_schedule.pieces + p];
            if (wrong && wrong->empty() && sum.Intersects(held))
            {
                *wrong = fmt::format("the switch sums piece {} of ranks {} at step {}: rank {} "
                                     "holds {}, some of them summed already: some ranks summed "
                                     "twice",
                                     p, fmt::join(t.group, ","), t.step, r, held.ToString());
            }
            sum.Add(held);
        }
        sent.push_back(sum);
    }
    return sent;
}

std::string
CollectiveHoldings::Apply(const CollectiveTransfer& t, const std::vector<RankSet>& sent)
{
    std::vector<uint32_t> receivers{t.to};
    if (t.via == CollectiveVia::SwitchMulticast)
    {
        receivers.clear();
        std::copy_if(t.group.begin(), t.group.end(), std::back_inserter(receivers),
                     [&t](uint32_t r) { return r != t.from; });
    }
    for (uint32_t to : receivers)
    {
        for (size_t i = 0; i < t.pieces.size(); ++i)
        {
            RankSet& held = m_held[static_cast<size_t>(to) * m_schedule.pieces + t.pieces[i]];
            if (t.reduce ? held.Intersects(sent[i]) : held.Contains(sent[i]))
            {
                return fmt::format(
                    "rank {} got piece {} from rank {} at step {} holding {} over {}: {}", to,
                    t.pieces[i], t.from, t.step, sent[i].ToString(), held.ToString(),
                    t.reduce ? "some ranks summed twice" : "nothing new (a duplicate)");
            }
            if (t.reduce)
            {
                held.Add(sent[i]);
            }
            else
            {
                held = sent[i];
            }
        }
    }
    return "";
}

std::string
CollectiveHoldings::Check() const
{
    for (uint32_t r = 0; r < m_schedule.ranks; ++r)
    {
        for (uint32_t p = 0; p < m_schedule.pieces; ++p)
        {
            const RankSet goal = m_schedule.Goal(r, p);
            const RankSet& held = m_held[static_cast<size_t>(r) * m_schedule.pieces + p];
            if (!goal.Empty() && !(held == goal))
            {
                return fmt::format("rank {} ends with piece {} holding {}, not {}", r, p,
                                   held.ToString(), goal.ToString());
            }
        }
    }
    return "";
}

} // namespace ns3
