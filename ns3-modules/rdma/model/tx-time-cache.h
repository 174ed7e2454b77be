/*
 * The serialisation time of a frame, remembered for the last few (rate, size) pairs.
 */
#ifndef FABEMU_TX_TIME_CACHE_H
#define FABEMU_TX_TIME_CACHE_H

#include "ns3/data-rate.h"
#include "ns3/nstime.h"

#include <array>
#include <cstddef>
#include <cstdint>

namespace ns3
{

/**
 * DataRate::CalculateBytesTxTime, remembered. It divides 128-bit numbers (int64x64_t),
 * some 500 instructions, and a port asks it at every frame, of a few sizes (data, ACKs,
 * pause and credit frames) at one rate. A port, or a pacer whose rate changes now and
 * then, keeps one of these: four sizes at the last rate asked, searched whole and
 * replaced in turn, so the answer is always the division's own. A new rate empties it.
 *
 * It fits in 56 bytes, within one cache line of its port: a large fabric's ports
 * outnumber the cache, and a frame's every line of port state apart is a miss.
 */
class TxTimeCache
{
  public:
    /// The time \p rate takes to send \p bytes: exactly rate.CalculateBytesTxTime(bytes).
    Time Get(const DataRate& rate, uint32_t bytes) const;

  private:
    static constexpr std::size_t kEntries = 4;

    mutable uint64_t m_bps = 0;                       ///< the rate the entries hold; 0: none yet
    mutable std::array<Time, kEntries> m_times;       ///< the time of m_bytes[i] at m_bps
    mutable std::array<uint16_t, kEntries> m_bytes{}; ///< 0: empty (0 bytes is never kept)
    mutable uint8_t m_next = 0;                       ///< the entry to replace next
};

} // namespace ns3

#endif // FABEMU_TX_TIME_CACHE_H
