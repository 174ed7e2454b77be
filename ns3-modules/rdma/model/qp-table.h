/*
 * A NIC's connections, one per queue pair: numbered from a first QPN, found by
 * QPN on every received packet, kept in a vector for the send scheduler's
 * round robin, removed by moving the last one into the gap. The RoCEv2 NIC and
 * the InfiniBand HCA keep their own per-connection state (Conn, with a member
 * qp) in one.
 */
#ifndef FABEMU_QP_TABLE_H
#define FABEMU_QP_TABLE_H

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
        m_byQpn[c.qp->GetQpn()] = m_conns.size();
        m_conns.push_back(std::move(c));
        return m_conns.back();
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
    /// Takes out the connection of \p qpn (the last one moves into its place).
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
        if (idx + 1 != m_conns.size())
        {
            m_conns[idx] = std::move(m_conns.back());
            m_byQpn[m_conns[idx].qp->GetQpn()] = idx;
        }
        m_conns.pop_back();
        return gone;
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
    uint32_t m_nextQpn;
    std::vector<Conn> m_conns;
    std::unordered_map<uint32_t, size_t> m_byQpn;
};

} // namespace ns3

#endif
