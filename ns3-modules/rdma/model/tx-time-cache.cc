#include "ns3/tx-time-cache.h"

namespace ns3
{

Time
TxTimeCache::Get(const DataRate& rate, uint32_t bytes) const
{
    const uint64_t bps = rate.GetBitRate();
    if (bps == 0 || bytes == 0 || bytes > UINT16_MAX)
    {
        return rate.CalculateBytesTxTime(bytes); // never kept: 0 marks an empty entry
    }
    if (bps != m_bps)
    {
        m_bps = bps;
        m_bytes.fill(0);
    }
    for (std::size_t i = 0; i < kEntries; ++i)
    {
        if (m_bytes[i] == bytes)
        {
            return m_times[i];
        }
    }
    // Frame sizes share their residues (a RoCEv2 frame's wire bytes are 2 mod 4), so the
    // entries are searched whole and replaced in turn, not indexed by the size.
    const uint8_t i = m_next;
    m_next = static_cast<uint8_t>((m_next + 1) % kEntries);
    m_bytes[i] = static_cast<uint16_t>(bytes);
    m_times[i] = rate.CalculateBytesTxTime(bytes);
    return m_times[i];
}

} // namespace ns3
