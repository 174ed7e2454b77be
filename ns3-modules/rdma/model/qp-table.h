/*
 * A NIC's connections, one per queue pair: numbered from a first QPN, found by
 * QPN on every received packet, kept in a vector in QPN order for the send
 * scheduler's round robin, which goes on from the QPN after the last one served
 * (IndexFrom). So the order in which a NIC serves its QPs does not depend on which
 * idle QPs are still there: a partitioned run keeps the receiving QP of a flow whose
 * sender is on another rank, where one process would have destroyed it. The RoCEv2 NIC and
 * the InfiniBand HCA keep their own per-connection state (Conn, with a member
 * qp) in one.
 */
#ifndef FABEMU_QP_TABLE_H
#define FABEMU_QP_TABLE_H

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <unordered_map>
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
        const size_t idx = IndexAtOrAfter(c.qp->GetQpn());
        m_conns.insert(m_conns.begin() + static_cast<std::ptrdiff_t>(idx), std::move(c));
        Reindex(idx);
        return m_conns[idx];
    }
    /// The connection of \p qpn, or null (a QP already destroyed, a stray packet).
    Conn* Find(uint32_t qpn)
    {
        const auto it = m_byQpn.find(qpn);
        return it == m_byQpn.end() ? nullptr : &m_conns[it->second];
    }
    /// The connection of \p qpn, which must exist.
    Conn& At(uint32_t qpn) { return m_conns.at(m_byQpn.at(qpn)); }
    const Conn& At(uint32_t qpn) const { return m_conns.at(m_byQpn.at(qpn)); }
    /// Takes out the connection of \p qpn; the others keep their order.
    std::optional<Conn> Remove(uint32_t qpn)
    {
        const auto it = m_byQpn.find(qpn);
        if (it == m_byQpn.end())
        {
            return std::nullopt;
        }
        const size_t idx = it->second;
        m_byQpn.erase(it);
        Conn gone = std::move(m_conns[idx]);
        m_conns.erase(m_conns.begin() + static_cast<std::ptrdiff_t>(idx));
        Reindex(idx);
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
    void clear()
    {
        m_conns.clear();
        m_byQpn.clear();
    }

  private:
    size_t IndexAtOrAfter(uint32_t qpn) const
    {
        const auto it =
            std::lower_bound(m_conns.begin(), m_conns.end(), qpn,
                             [](const Conn& c, uint32_t q) { return c.qp->GetQpn() < q; });
        return static_cast<size_t>(it - m_conns.begin());
    }
    void Reindex(size_t from)
    {
        for (size_t i = from; i < m_conns.size(); ++i)
        {
            m_byQpn[m_conns[i].qp->GetQpn()] = i;
        }
    }

    uint32_t m_nextQpn;
    std::vector<Conn> m_conns;
    std::unordered_map<uint32_t, size_t> m_byQpn;
};

} // namespace ns3

#endif
