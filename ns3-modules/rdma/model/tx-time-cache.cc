#include "ns3/tx-time-cache.h"

namespace ns3
{

Time
TxTimeCache::Get(const DataRate& rate, uint32_t bytes) const
{
    const uint64_t bps = rate.GetBitRate();
    Entry& e = m_entries[bytes % m_entries.size()];
    if (e.bps != bps || e.bytes != bytes)
    {
        const Time t = rate.CalculateBytesTxTime(bytes);
        if (bps == 0)
        {
            return t;
        }
        e = {bps, bytes, t};
    }
    return e.time;
}

} // namespace ns3
