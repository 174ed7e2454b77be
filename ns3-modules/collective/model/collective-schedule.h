/*
 * What a collective does, as transfers between ranks: the operation's buffer cut
 * into pieces, each transfer carrying some pieces from one rank to another (summed
 * into what the receiver holds, or copied over it) once the transfers it needs
 * have arrived. Built per operation and algorithm the way NCCL and MPI run them
 * (ring, halving-doubling, direct, hierarchical), with what every rank holds at the
 * start and must hold at the end, so that an execution can prove each byte went
 * where the algorithm says, once. Piece p belongs to rank p mod ranks (the rank that
 * ends holding it after a reduce-scatter, or starts with it before an all-gather).
 */
#ifndef FABEMU_COLLECTIVE_SCHEDULE_H
#define FABEMU_COLLECTIVE_SCHEDULE_H

#include <cstdint>
#include <string>
#include <vector>

namespace ns3
{

enum class CollectiveOp : uint8_t
{
    AllReduce,
    ReduceScatter,
    AllGather,
    AllToAll,
    Broadcast, ///< from the first rank (the root) to every other
    Reduce,    ///< every rank's data summed into the first rank (the root)
    SendRecv,  ///< from the first of 2 ranks to the second
};

enum class CollectiveAlgorithm : uint8_t
{
    Ring,
    HalvingDoubling, ///< recursive halving then doubling (Rabenseifner); ranks a power of 2
    Direct,          ///< every rank to every other at once (all-to-all)
    /// All-reduce on GPUs of several servers: reduce-scatter inside each server, an
    /// all-reduce of each share among the servers (one ring per rail), all-gather inside,
    /// the buffer pipelined through the three phases in chunks.
    Hierarchical,
    /// All-reduce on NCCL's double binary tree: two trees, each reducing half the
    /// buffer to its root and broadcasting it back, pipelined in chunks; a rank that is
    /// a leaf of one tree is inside the other.
    Tree,
    /// NVLS (NVLink SHARP), on the GPUs of one server's NVSwitches: for each chunk, the
    /// switch sums every rank's copy of a rank's piece and hands the sum to it
    /// (reduce-scatter), which multicasts it through the switch to every rank
    /// (all-gather); chunks pipelined.
    Nvls,
};

/// How a transfer travels.
enum class CollectiveVia : uint8_t
{
    Rank,            ///< from one rank to another
    SwitchReduce,    ///< the switch sums the pieces of every rank of `group`, the sum to `to`
    SwitchMulticast, ///< the switch copies `from`'s pieces to every rank of `group`
};

/**
 * \brief Double binary tree over \p ranks ranks: parent[t][r] of rank r in tree t (t = 0,
 * 1), -1 at the root. Tree 0 is the in-order binary tree over 1..n (rank r is node
 * r+1; node v's parent is v +- lowbit(v), the largest power of 2 not above n the root),
 * so the even ranks are its leaves; tree 1 is tree 0 shifted by one rank, so they are
 * inside it: NCCL's double binary tree.
 */
std::vector<std::vector<int64_t>> CollectiveTrees(uint32_t ranks);

/**
 * \brief Where the ranks sit, for the algorithms that follow servers and rails. Empty:
 * every rank on a server of its own (hosts), or all on one.
 */
struct CollectiveLayout
{
    /// The ranks of each server, in the order of their GPUs (GPU k's NIC is on rail k).
    std::vector<std::vector<uint32_t>> servers;
    /// Hierarchical: the chunks the buffer is pipelined in (fewer when the bytes do not
    /// cut into that many).
    uint32_t chunks{8};
    /// Ranks of one server whose own links do not join every pair (dgx-1's NVLink cube
    /// mesh; PCIe carries the rest): direct[a][b] says whether a link joins rank a to
    /// rank b. Empty: every pair alike.
    std::vector<std::vector<bool>> direct;

    /// At least 2 servers with the same number of ranks each: the rails line up.
    bool Uniform() const;
    /// The ranks per server when Uniform(), else 1.
    uint32_t RanksPerServer() const;
};

/**
 * \brief The rings a ring algorithm runs, one per channel, each an order of the ranks
 * (each sends to the next). One ring in rank order, except on a Uniform() layout with
 * several ranks per server: one channel per rail, NCCL's rail-following rings. Channel
 * c goes through each server's GPUs from the c-th on, and crosses to the next server
 * on a rail, every other server in reverse so that both ends of each crossing are the
 * same GPU index (the same rail). With an odd number of servers the ring's last
 * crossing changes rails. On one server whose links join only some pairs (\p
 * layout.direct), rings that follow the links, as NCCL searches them: cycles through
 * every rank that share no link, each also run backwards (a link carries both ways), or
 * where no such cycle exists one ring that leaves the links fewest times (the ranks in
 * order if the search runs out of its bound first). \p channels: at most this many (the
 * rails, or the rings found), fewer if asked.
 */
std::vector<std::vector<uint32_t>> CollectiveRingOrders(uint32_t ranks,
                                                        const CollectiveLayout& layout,
                                                        uint32_t channels);

/// The channels (rings) or chunks (hierarchical) \p bytes are cut into: the largest
/// count up to \p want for which they cut into equal pieces, count x \p ranks of them.
uint32_t CollectiveSplit(uint64_t bytes, uint32_t ranks, uint32_t want);

/**
 * \brief What \p algorithm cuts \p op of \p bytes into, as the schedule and the
 * analytical mode both take it: ring channels (one per rank of a server on a Uniform()
 * layout, one per ring that follows a server's links where \p layout.direct is set), a chain's
 * pieces per rank (8), hierarchical's chunks (\p layout.chunks), the tree's chunks per tree (16);
 * each fewer where the bytes do not cut so. 1 otherwise.
 */
uint32_t CollectiveSplitOf(CollectiveOp op, CollectiveAlgorithm algorithm, uint32_t ranks,
                           uint64_t bytes, const CollectiveLayout& layout);

/// "all-reduce", "reduce-scatter", "all-gather", "all-to-all", "broadcast", "reduce",
/// "send-recv".
const char* CollectiveOpName(CollectiveOp op);
/// "ring", "halving-doubling", "direct", "hierarchical", "tree", "nvls".
const char* CollectiveAlgorithmName(CollectiveAlgorithm a);
/// Every name CollectiveOpName gives, in order; ParseCollectiveOp reads them back.
std::vector<std::string> CollectiveOpNames();
std::vector<std::string> CollectiveAlgorithmNames();
bool ParseCollectiveOp(const std::string& name, CollectiveOp& op);
bool ParseCollectiveAlgorithm(const std::string& name, CollectiveAlgorithm& a);
/// What \p op runs when nothing else is asked: direct for all-to-all and send-recv, else
/// ring.
CollectiveAlgorithm CollectiveDefaultAlgorithm(CollectiveOp op);

/**
 * \brief nccl-tests' bus bandwidth factor: busBw = algBw * factor (2(n-1)/n for
 * all-reduce; (n-1)/n for reduce-scatter, all-gather and all-to-all; 1 for broadcast,
 * reduce and send-recv).
 */
double CollectiveBusBwFactor(CollectiveOp op, uint32_t ranks);

/**
 * \brief Throws std::invalid_argument, in words, where \p op cannot run with \p algorithm
 * on \p ranks ranks and \p bytes: fewer than 2 ranks, bytes not a multiple of the ranks
 * (pieces are equal; nothing is padded), halving-doubling on a rank count not a power of
 * 2, hierarchical on a \p layout that is not Uniform() or for another operation than
 * all-reduce, tree on an odd number of bytes (its two trees take half each), send-recv
 * on other than 2 ranks, or an algorithm the operation does not have.
 */
void CheckCollective(CollectiveOp op, CollectiveAlgorithm algorithm, uint32_t ranks, uint64_t bytes,
                     const CollectiveLayout& layout = {});

/// The ranks whose data a piece holds, summed: one bit per rank.
class RankSet
{
  public:
    RankSet() = default;
    explicit RankSet(uint32_t ranks);
    static RankSet Of(uint32_t ranks, uint32_t rank);
    static RankSet All(uint32_t ranks);
    bool Empty() const;
    bool Intersects(const RankSet& o) const;
    bool Contains(const RankSet& o) const;
    void Add(const RankSet& o);
    bool operator==(const RankSet& o) const { return m_words == o.m_words; }
    /// "{0,2,3}".
    std::string ToString() const;

  private:
    std::vector<uint64_t> m_words;
};

/**
 * \brief One transfer: \p pieces of the buffer from rank \p from to rank \p to; or, in
 * the switch (NVLS), summed from the ranks of \p group into \p to, or copied from \p from
 * to the ranks of \p group (\p from's own copy comes back to it; only the others'
 * holdings change).
 */
struct CollectiveTransfer
{
    uint32_t from{0};
    uint32_t to{0};
    CollectiveVia via{CollectiveVia::Rank};
    std::vector<uint32_t> group; ///< SwitchReduce: the ranks summed; SwitchMulticast: receivers
    std::vector<uint32_t> pieces;
    uint64_t bytes{0};
    bool reduce{false};          ///< summed into the receiver's pieces; else copied over them
    uint32_t step{0};            ///< the algorithm's step (results and traces name it)
    std::vector<uint32_t> after; ///< transfers that must have arrived (and been reduced) first
};

/**
 * \brief The transfers of one collective of \p bytes over \p ranks ranks, and what
 * each rank holds of each piece at the start and must hold at the end.
 */
class CollectiveSchedule
{
  public:
    /// Builds it on ranks placed as \p layout says; throws where CheckCollective does.
    static CollectiveSchedule Build(CollectiveOp op, CollectiveAlgorithm algorithm, uint32_t ranks,
                                    uint64_t bytes, const CollectiveLayout& layout = {});

    CollectiveOp op{CollectiveOp::AllReduce};
    CollectiveAlgorithm algorithm{CollectiveAlgorithm::Ring};
    uint32_t ranks{0};
    uint64_t bytes{0};      ///< the operation's size, as nccl-tests gives it
    uint32_t pieces{0};     ///< how many equal pieces the buffer is cut into
    uint32_t split{1};      ///< ring: channels; hierarchical, nvls: chunks; else 1
    uint64_t pieceBytes{0}; ///< bytes of each
    uint32_t steps{0};
    std::vector<CollectiveTransfer> transfers;

    /// What rank \p r holds of piece \p p before the first transfer (empty: nothing).
    RankSet Initial(uint32_t r, uint32_t p) const;
    /// What rank \p r must hold of piece \p p at the end; empty when nothing is required.
    RankSet Goal(uint32_t r, uint32_t p) const;
};

/**
 * \brief What every rank holds while a schedule runs: transfers apply their pieces as
 * they arrive, and Check says whether the end matches the goal.
 */
class CollectiveHoldings
{
  public:
    explicit CollectiveHoldings(const CollectiveSchedule& s);
    /**
     * \brief What the sender of transfer \p t holds of its pieces now (it is being sent);
     * for a sum in the switch, what its ranks hold together. \p wrong, if given, gets why
     * such a sum is wrong (some ranks in it twice), else "".
     */
    std::vector<RankSet> Snapshot(const CollectiveTransfer& t, std::string* wrong = nullptr) const;
    /**
     * \brief Transfer \p t arrived with \p sent (its Snapshot when sent) at its rank, or
     * at each rank of a multicast's group but its sender. Returns "" or
     * why it is wrong: a reduced piece already holding some of the same ranks (counted
     * twice), or a copied piece bringing nothing new (a duplicate).
     */
    std::string Apply(const CollectiveTransfer& t, const std::vector<RankSet>& sent);
    /// "" when every rank holds what the goal says; else the first rank and piece that does not.
    std::string Check() const;

  private:
    const CollectiveSchedule& m_schedule;
    std::vector<RankSet> m_held; ///< by rank * pieces + piece
};

} // namespace ns3

#endif
