/*
 * The serialisation time of a frame, remembered for the last few (rate, size) pairs.
 */
#ifndef FABEMU_TX_TIME_CACHE_H
#define FABEMU_TX_TIME_CACHE_H

#include "ns3/data-rate.h"
#include "ns3/nstime.h"

#include <array>
#include <cstdint>

namespace ns3
{

/**
 * DataRate::CalculateBytesTxTime, remembered. It divides 128-bit numbers (int64x64_t),
 * some 500 instructions, and a port asks it at every frame, of a few sizes (data, ACKs,
 * pause and credit frames) at one rate. A port, or a pacer whose rate changes now and
 * then, keeps one of these: four (rate, size) entries, searched whole and replaced in
 * turn, so the answer is always the division's own.
 */
class TxTimeCache
{
  public:
    /// The time \p rate takes to send \p bytes: exactly rate.CalculateBytesTxTime(bytes).
    Time Get(const DataRate& rate, uint32_t bytes) const;

  private:
    struct Entry
    {
        uint64_t bps = 0; ///< 0: empty (a rate of 0 is never cached)
        uint32_t bytes = 0;
        Time time;
    };

    mutable std::array<Entry, 4> m_entries;
    mutable uint8_t m_next = 0; ///< the entry to replace next
};

} // namespace ns3

#endif // FABEMU_TX_TIME_CACHE_H
