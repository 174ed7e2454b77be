#include "ns3/collective-schedule.h"

#include <fmt/format.h>

#include <stdexcept>

namespace ns3
{

namespace
{

const char* const kOpNames[] = {"all-reduce", "reduce-scatter", "all-gather", "all-to-all"};
const char* const kAlgorithmNames[] = {"ring", "halving-doubling", "direct"};

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

/// What each rank has received so far, by transfer index: the transfers a rank's next
/// sends may need.
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

/// Ring phases: n-1 steps each, rank r sending one piece to r+1. A reduce-scatter
/// step k sends piece r-k-1, so rank r ends holding piece r summed; an all-gather
/// step k sends piece r-k, which r received the step before (or owns at step 0). That
/// last arrival carries everything the piece holds, so it is the one dependency.
void
AddRingPhase(CollectiveSchedule& s, bool reduce, Received& received)
{
    const uint32_t n = s.ranks;
    for (uint32_t k = 0; k + 1 < n; ++k)
    {
        const uint32_t first = static_cast<uint32_t>(s.transfers.size());
        for (uint32_t r = 0; r < n; ++r)
        {
            CollectiveTransfer t;
            t.from = r;
            t.to = (r + 1) % n;
            t.pieces = {Mod(static_cast<int64_t>(r) - k - (reduce ? 1 : 0), n)};
            t.bytes = s.pieceBytes;
            t.reduce = reduce;
            t.step = s.steps + k;
            if (!received[r].empty())
            {
                t.after = {received[r].back()};
            }
            s.transfers.push_back(std::move(t));
        }
        Arrive(s, first, received);
    }
    s.steps += n - 1;
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

double
CollectiveBusBwFactor(CollectiveOp op, uint32_t ranks)
{
    const double n = ranks;
    return op == CollectiveOp::AllReduce ? 2 * (n - 1) / n : (n - 1) / n;
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

void
CheckCollective(CollectiveOp op, CollectiveAlgorithm algorithm, uint32_t ranks, uint64_t bytes)
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
    const bool direct = algorithm == CollectiveAlgorithm::Direct;
    if (direct != (op == CollectiveOp::AllToAll))
    {
        throw std::invalid_argument(
            fmt::format("{} has no {} algorithm (all-to-all is direct; the others ring or "
                        "halving-doubling)",
                        CollectiveOpName(op), CollectiveAlgorithmName(algorithm)));
    }
    if (algorithm == CollectiveAlgorithm::HalvingDoubling && (ranks & (ranks - 1)) != 0)
    {
        throw std::invalid_argument(
            fmt::format("halving-doubling needs a power of 2 of ranks, not {}", ranks));
    }
}

CollectiveSchedule
CollectiveSchedule::Build(CollectiveOp op, CollectiveAlgorithm algorithm, uint32_t ranks,
                          uint64_t bytes)
{
    CheckCollective(op, algorithm, ranks, bytes);
    const bool direct = algorithm == CollectiveAlgorithm::Direct;
    CollectiveSchedule s;
    s.op = op;
    s.algorithm = algorithm;
    s.ranks = ranks;
    s.bytes = bytes;
    s.pieces = op == CollectiveOp::AllToAll ? ranks * ranks : ranks;
    s.pieceBytes = bytes / ranks;
    const bool reduces = op == CollectiveOp::AllReduce || op == CollectiveOp::ReduceScatter;
    const bool gathers = op == CollectiveOp::AllReduce || op == CollectiveOp::AllGather;
    auto phase = algorithm == CollectiveAlgorithm::Ring ? AddRingPhase : AddHalvingDoublingPhase;
    if (direct)
    {
        AddDirect(s);
    }
    Received received(ranks);
    if (reduces && !direct)
    {
        phase(s, true, received);
    }
    if (gathers && !direct)
    {
        phase(s, false, received);
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
        return p == r ? RankSet::Of(ranks, r) : RankSet(ranks);
    case CollectiveOp::AllToAll:
        return p / ranks == r ? RankSet::Of(ranks, r) : RankSet(ranks);
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
        return p == r ? RankSet::All(ranks) : RankSet(ranks);
    case CollectiveOp::AllGather:
        return RankSet::Of(ranks, p);
    case CollectiveOp::AllToAll:
        return p % ranks == r ? RankSet::Of(ranks, p / ranks) : RankSet(ranks);
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
CollectiveHoldings::Snapshot(const CollectiveTransfer& t) const
{
    std::vector<RankSet> sent;
    sent.reserve(t.pieces.size());
    for (uint32_t p : t.pieces)
    {
        sent.push_back(m_held[static_cast<size_t>(t.from) * m_schedule.pieces + p]);
    }
    return sent;
}

std::string
CollectiveHoldings::Apply(const CollectiveTransfer& t, const std::vector<RankSet>& sent)
{
    for (size_t i = 0; i < t.pieces.size(); ++i)
    {
        RankSet& held = m_held[static_cast<size_t>(t.to) * m_schedule.pieces + t.pieces[i]];
        if (t.reduce ? held.Intersects(sent[i]) : held.Contains(sent[i]))
        {
            return fmt::format("rank {} got piece {} from rank {} at step {} holding {} over {}: "
                               "{}",
                               t.to, t.pieces[i], t.from, t.step, sent[i].ToString(),
                               held.ToString(),
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
