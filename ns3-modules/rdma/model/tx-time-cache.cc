#include "ns3/tx-time-cache.h"

namespace ns3
{

Time
TxTimeCache::Get(const DataRate& rate, uint32_t bytes) const
{
    const uint64_t bps = rate.GetBitRate();
    if (bps == 0)
    {
        return rate.CalculateBytesTxTime(bytes); // never cached: 0 marks an empty entry
    }
    for (const Entry& e : m_entries)
    {
        if (e.bps == bps && e.bytes == bytes)
        {
            return e.time;
        }
    }
    // Frame sizes share their residues (a RoCEv2 frame's wire bytes are 2 mod 4), so the
    // entries are searched whole and replaced in turn, not indexed by the size.
    Entry& e = m_entries[m_next];
    m_next = (m_next + 1) % m_entries.size();
    e = {bps, bytes, rate.CalculateBytesTxTime(bytes)};
    return e.time;
}

} // namespace ns3
