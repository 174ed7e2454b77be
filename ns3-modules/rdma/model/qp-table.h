/*
 * A NIC's connections, one per queue pair: numbered from a first QPN, found by
 * QPN on every received packet, kept in a vector in QPN order for the send
 * scheduler's round robin, which goes on from the QPN after the last one served
 * (IndexFrom). So the order in which a NIC serves its QPs does not depend on which
 * idle QPs are still there: a partitioned run keeps the receiving QP of a flow whose
 * sender is on another rank, where one process would have destroyed it. The RoCEv2 NIC and
 * the InfiniBand HCA keep their own per-connection state (Conn, with a member
 * qp) in one.
 *
 * Each entry keeps its QPN beside the Conn: the binary search reads the entries alone,
 * not the queue pairs they point to. In a large fabric a NIC's queue pairs are out of
 * the caches by its next frame, and the search's probes fell on ones the frame was
 * not for.
 */
#ifndef FABEMU_QP_TABLE_H
#define FABEMU_QP_TABLE_H

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

namespace ns3
{

template <typename Conn>
class QpTable
{
  public:
    explicit QpTable(uint32_t firstQpn) : m_nextQpn(firstQpn) {}

    /// The QPN for the next queue pair.
    uint32_t NextQpn() { return m_nextQpn++; }
    /// Adds a connection; its qp carries its QPN already.
    Conn& Add(Conn c)
    {
        const uint32_t qpn = c.qp->GetQpn();
        const size_t idx = IndexAtOrAfter(qpn);
        m_conns.insert(m_conns.begin() + static_cast<std::ptrdiff_t>(idx),
                       Entry{std::move(c), qpn});
        return m_conns[idx];
    }
    /// The connection of \p qpn, or null (a QP already destroyed, a stray packet).
    Conn* Find(uint32_t qpn)
    {
        const size_t idx = IndexOf(qpn);
        return idx == m_conns.size() ? nullptr : &m_conns[idx];
    }
    /// The connection of \p qpn, which must exist.
    Conn& At(uint32_t qpn) { return m_conns.at(IndexOf(qpn)); }
    const Conn& At(uint32_t qpn) const { return m_conns.at(IndexOf(qpn)); }
    /// Takes out the connection of \p qpn; the others keep their order.
    std::optional<Conn> Remove(uint32_t qpn)
    {
        const size_t idx = IndexOf(qpn);
        if (idx == m_conns.size())
        {
            return std::nullopt;
        }
        Conn gone = std::move(static_cast<Conn&>(m_conns[idx]));
        m_conns.erase(m_conns.begin() + static_cast<std::ptrdiff_t>(idx));
        return gone;
    }
    /// Where a round robin that last served QPN \p qpn - 1 goes on: the first connection
    /// of QPN \p qpn or above, else the first (it wraps).
    size_t IndexFrom(uint32_t qpn) const
    {
        const size_t idx = IndexAtOrAfter(qpn);
        return idx == m_conns.size() ? 0 : idx;
    }

    size_t size() const { return m_conns.size(); }
    bool empty() const { return m_conns.empty(); }
    Conn& operator[](size_t i) { return m_conns[i]; }
    auto begin() { return m_conns.begin(); }
    auto end() { return m_conns.end(); }
    void clear() { m_conns.clear(); }

  private:
    /// A Conn and its queue pair's QPN, read without the queue pair. To the table's
    /// users (operator[], begin, end) an entry is its Conn.
    struct Entry : Conn
    {
        uint32_t qpn;
    };

    size_t IndexAtOrAfter(uint32_t qpn) const
    {
        const auto it = std::lower_bound(m_conns.begin(), m_conns.end(), qpn,
                                         [](const Entry& e, uint32_t q) { return e.qpn < q; });
        return static_cast<size_t>(it - m_conns.begin());
    }
    /// The index of \p qpn's connection; size() when there is none.
    size_t IndexOf(uint32_t qpn) const
    {
        const size_t idx = IndexAtOrAfter(qpn);
        return idx < m_conns.size() && m_conns[idx].qpn == qpn ? idx : m_conns.size();
    }

    uint32_t m_nextQpn;
    std::vector<Entry> m_conns; ///< in QPN order: found by binary search
};

} // namespace ns3

#endif
