#include "ns3/tx-time-cache.h"

#include <doctest/doctest.h>

using namespace ns3;

TEST_CASE("a TxTimeCache answers what DataRate::CalculateBytesTxTime answers")
{
    // Each pair asked twice in a row (the second is answered from the cache), sizes of one
    // residue as frames have (1106, 86, 98 are all 2 mod 4), more sizes than entries so
    // that entries are replaced, and rates that change between calls of one size.
    const TxTimeCache cache;
    const std::vector<DataRate> rates{DataRate("100Gbps"), DataRate("400Gbps"), DataRate("25Gbps"),
                                      DataRate("1Mbps"), DataRate(123456789)};
    const std::vector<uint32_t> sizes{1106, 86, 98, 1106, 84, 9000, 1, 86, 0, 1106};
    for (int round = 0; round < 2; ++round)
    {
        for (const auto& rate : rates)
        {
            for (uint32_t bytes : sizes)
            {
                CAPTURE(rate.GetBitRate());
                CAPTURE(bytes);
                const Time want = rate.CalculateBytesTxTime(bytes);
                CHECK(cache.Get(rate, bytes) == want);
                CHECK(cache.Get(rate, bytes) == want);
            }
        }
    }
    // A pacer's rate moves between its frames of one size.
    for (uint64_t bps = 1'000'000'000; bps <= 100'000'000'000; bps += 7'000'000'000)
    {
        CHECK(cache.Get(DataRate(bps), 1086) == DataRate(bps).CalculateBytesTxTime(1086));
    }
    CHECK(cache.Get(DataRate("100Gbps"), 1086) == PicoSeconds(86880)); // 1086 bytes at 100 Gb/s
}

TEST_CASE("a TxTimeCache answers sizes it does not keep, and two rates in turn")
{
    const TxTimeCache cache;
    const DataRate fast("400Gbps");
    const DataRate slow("10Gbps");
    // Sizes past what an entry holds (65,535 bytes) are divided every time, never kept
    // as another size's entry.
    for (uint32_t bytes : {65535U, 65536U, 70000U, 65536U + 1106U, 1106U, 65535U})
    {
        CAPTURE(bytes);
        CHECK(cache.Get(fast, bytes) == fast.CalculateBytesTxTime(bytes));
        CHECK(cache.Get(fast, bytes) == fast.CalculateBytesTxTime(bytes));
    }
    // A rate asked between two others' answers empties the entries: never the other
    // rate's time.
    for (int i = 0; i < 3; ++i)
    {
        CHECK(cache.Get(fast, 1106) == fast.CalculateBytesTxTime(1106));
        CHECK(cache.Get(slow, 1106) == slow.CalculateBytesTxTime(1106));
        CHECK(cache.Get(slow, 86) == slow.CalculateBytesTxTime(86));
        CHECK(cache.Get(fast, 86) == fast.CalculateBytesTxTime(86));
    }
    // Within one cache line of its port (the header says 56 bytes).
    CHECK(sizeof(TxTimeCache) <= 56);
}
