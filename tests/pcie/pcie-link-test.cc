// One PCIe link between two endpoints against the arithmetic of the spec:
// write efficiency from the framing, read throughput from tags and round
// trip, the credit loop, and replay under bit errors.
#include "ns3/boolean.h"
#include "ns3/double.h"
#include "ns3/pcie-helper.h"
#include "ns3/pcie-spec.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

#include <doctest/doctest.h>

#include <cmath>
#include <vector>

using namespace ns3;

namespace
{

/// What arrives at one port, in order.
struct Sink
{
    uint64_t tlps{0};
    uint64_t bytes{0};
    uint64_t firstBytes{0};
    Time first{Time::Max()};
    Time last;
    uint64_t nextSeq{0};
    uint64_t nextAddress{0};
    bool inOrder{true};

    void Rx(const PcieTlp& t)
    {
        if (t.seq != nextSeq || (t.kind == PcieTlp::Kind::MemWrite && t.address != nextAddress))
        {
            inOrder = false;
        }
        nextSeq = t.seq + 1;
        if (t.kind == PcieTlp::Kind::MemWrite)
        {
            nextAddress = t.address + t.payload;
        }
        if (tlps++ == 0)
        {
            first = Simulator::Now();
            firstBytes = t.payload;
        }
        bytes += t.payload;
        last = Simulator::Now();
    }
    /// Payload bytes per second from the first arrival to the last (steady state).
    double Rate() const { return (bytes - firstBytes) / (last - first).GetSeconds(); }
};

struct Done
{
    std::vector<PcieTransfer> transfers;
    void Add(const PcieTransfer& t) { transfers.push_back(t); }
};

PcieHelper
Helper(uint32_t gen, uint32_t width, uint32_t mps, Time delay)
{
    PcieHelper h;
    h.SetLinkAttribute("Generation", UintegerValue(gen));
    h.SetLinkAttribute("Width", UintegerValue(width));
    h.SetLinkAttribute("Delay", TimeValue(delay));
    h.SetPortAttribute("MaxPayloadSize", UintegerValue(mps));
    return h;
}

/// Wire time of \p bytes on a link of this generation and width.
double
Ns(uint32_t gen, uint32_t width, double bytes)
{
    return bytes * PcieBytePicoseconds(gen, width) / 1000.0;
}

} // namespace

TEST_CASE("a long DMA write stream runs at raw rate x encoding x MPS / (MPS + 20)")
{
    struct Case
    {
        uint32_t gen;
        uint32_t mps;
    };
    const std::vector<Case> cases = {{3, 128}, {3, 256}, {3, 512}, {4, 128}, {4, 256},
                                     {4, 512}, {5, 128}, {5, 256}, {5, 512}, {6, 256}};
    std::vector<double> rates;
    for (const auto& c : cases)
    {
        CAPTURE(c.gen);
        CAPTURE(c.mps);
        PcieHelper h = Helper(c.gen, 16, c.mps, NanoSeconds(2));
        auto pair = h.Install();
        REQUIRE(pair.Ok());
        Sink sink;
        Done done;
        pair.b->GetPort()->TraceConnectWithoutContext("TlpRx", MakeCallback(&Sink::Rx, &sink));
        pair.a->GetDma()->SetTransferCallback(MakeCallback(&Done::Add, &done));
        const uint64_t tlps = 3000;
        pair.a->GetDma()->Write(0, tlps * c.mps);
        const uint64_t events0 = Simulator::GetEventCount();
        Simulator::Run();
        const double eventsPerTlp = double(Simulator::GetEventCount() - events0) / tlps;
        // Expected: raw rate x encoding x MPS / (MPS + 12-byte header + 8 link bytes);
        // in flit mode (Gen6) x 236/256 and no per-TLP link bytes. The forward
        // direction carries no DLLPs: Acks and UpdateFCs for it go the other way.
        const double expected =
            PcieLinkBytesPerSecond(c.gen, 16) * c.mps / PcieTlpWireBytes(c.gen, 12, c.mps, false);
        MESSAGE("Gen", c.gen, " x16 MPS ", c.mps, ": ", sink.Rate() / 1e9, " GB/s, expected ",
                expected / 1e9, "; events per TLP ", eventsPerTlp);
        // 2 for the TLP, about 2 for the UpdateFC it frees, 2 per coalesced Ack (and its timer).
        CHECK(eventsPerTlp < 5.0);
        CHECK(sink.Rate() == doctest::Approx(expected).epsilon(0.01));
        CHECK(sink.tlps == tlps);
        CHECK(sink.inOrder);
        CHECK(pair.b->GetPort()->GetOverflows() == 0);
        REQUIRE(done.transfers.size() == 1);
        CHECK(done.transfers[0].bytes == tlps * c.mps);
        rates.push_back(sink.Rate());
        Simulator::Destroy();
    }
    CHECK(rates[1] > rates[0]); // Gen3: MPS 256 above MPS 128
    CHECK(rates[4] > rates[3]);
    CHECK(rates[7] > rates[6]);
}

TEST_CASE("reads with a few tags on a long link run at outstanding bytes / round trip")
{
    const uint32_t gen = 3, width = 16, mps = 256, mrrs = 512, tags = 8;
    const Time delay = MicroSeconds(1);
    const Time latency = NanoSeconds(100);
    PcieHelper h = Helper(gen, width, mps, delay);
    h.SetDmaAttribute("MaxReadRequestSize", UintegerValue(mrrs));
    h.SetDmaAttribute("Tags", UintegerValue(tags));
    h.SetMemoryAttribute("Latency", TimeValue(latency));
    auto pair = h.Install();
    REQUIRE(pair.Ok());
    Done done;
    pair.a->GetDma()->SetTransferCallback(MakeCallback(&Done::Add, &done));
    const uint64_t bytes = 2 << 20;
    const Time start = Simulator::Now();
    pair.a->GetDma()->Read(0, bytes);
    Simulator::Run();
    REQUIRE(done.transfers.size() == 1);
    const double seconds = (done.transfers[0].completed - start).GetSeconds();
    const double rate = bytes / seconds;
    // Round trip of one tag: the request on the wire (12 B header + 8), the
    // link, the memory's latency, both 256-byte completions (12 + 256 + 8
    // each), the link back.
    const double rttNs = Ns(gen, width, 20) + delay.GetNanoSeconds() + latency.GetNanoSeconds() +
                         2 * Ns(gen, width, 276) + delay.GetNanoSeconds();
    const double expected = tags * mrrs / (rttNs * 1e-9);
    MESSAGE("read: ", rate / 1e9, " GB/s, expected ", expected / 1e9, " (round trip ", rttNs,
            " ns)");
    CHECK(rate == doctest::Approx(expected).epsilon(0.02));
    CHECK(pair.a->GetDma()->GetReadRequestsSent() == bytes / mrrs);
    CHECK(pair.b->GetMemory()->GetCompletionsSent() == bytes / mps);
    CHECK(pair.a->GetDma()->GetTagsInUse() == 0);
    Simulator::Destroy();
}

TEST_CASE("completions split at the read completion boundary when the completer does so")
{
    PcieHelper h = Helper(4, 8, 256, NanoSeconds(2));
    h.SetMemoryAttribute("SplitAtRcb", BooleanValue(true));
    auto pair = h.Install();
    REQUIRE(pair.Ok());
    Done done;
    pair.a->GetDma()->SetTransferCallback(MakeCallback(&Done::Add, &done));
    pair.a->GetDma()->Read(32, 4096); // unaligned start: first completion is 32 bytes
    Simulator::Run();
    REQUIRE(done.transfers.size() == 1);
    CHECK(pair.b->GetMemory()->GetCompletionsSent() == 64 + 1);
    Simulator::Destroy();
}

TEST_CASE(
    "posted data credits below the bandwidth-delay product limit writes to credits x 16 / loop")
{
    const uint32_t gen = 4, width = 16, mps = 256, credits = 128;
    const Time delay = NanoSeconds(500);
    PcieHelper h = Helper(gen, width, mps, delay);
    h.SetPortAttribute("InitPD", UintegerValue(credits));
    auto pair = h.Install();
    REQUIRE(pair.Ok());
    Sink sink;
    std::vector<std::pair<PcieFcClass, Time>> starved;
    pair.b->GetPort()->TraceConnectWithoutContext("TlpRx", MakeCallback(&Sink::Rx, &sink));
    pair.a->GetPort()->TraceConnectWithoutContext(
        "CreditStarved", MakeBoundCallback(
                             +[](std::vector<std::pair<PcieFcClass, Time>>* v, PcieFcClass c,
                                 Time t) { v->emplace_back(c, t); },
                             &starved));
    pair.a->GetDma()->Write(0, 1 << 20);
    Simulator::Run();
    // Credit loop: a TLP on the wire, the link, the UpdateFC DLLP on the wire, the link back.
    const double loopNs =
        Ns(gen, width, 276) + delay.GetNanoSeconds() + Ns(gen, width, 8) + delay.GetNanoSeconds();
    const double expected = credits * 16.0 / (loopNs * 1e-9);
    const double bdp = PcieLinkBytesPerSecond(gen, width) * loopNs * 1e-9;
    MESSAGE("credit-limited: ", sink.Rate() / 1e9, " GB/s, expected ", expected / 1e9, "; window ",
            credits * 16, " B, bandwidth-delay product ", bdp, " B");
    REQUIRE(credits * 16.0 < bdp);
    CHECK(sink.Rate() == doctest::Approx(expected).epsilon(0.03));
    CHECK(pair.a->GetPort()->GetCreditStarvedTime(PcieFcClass::PD).IsStrictlyPositive());
    REQUIRE_FALSE(starved.empty());
    CHECK(starved.front().first == PcieFcClass::PD);
    CHECK(pair.b->GetPort()->GetOverflows() == 0);
    Simulator::Destroy();
}

TEST_CASE("at BER 1e-6 every TLP arrives once and in order, and throughput falls as go-back-N says")
{
    const uint32_t gen = 3, width = 16, mps = 256;
    const Time delay = NanoSeconds(100);
    const double ber = 1e-6;
    PcieHelper h = Helper(gen, width, mps, delay);
    h.SetLinkAttribute("BitErrorRate", DoubleValue(ber));
    auto pair = h.Install();
    REQUIRE(pair.Ok());
    PcieHelper::AssignStreams(pair, 7);
    Sink sink;
    Done done;
    pair.b->GetPort()->TraceConnectWithoutContext("TlpRx", MakeCallback(&Sink::Rx, &sink));
    pair.a->GetDma()->SetTransferCallback(MakeCallback(&Done::Add, &done));
    const uint64_t tlps = 50000;
    pair.a->GetDma()->Write(0, tlps * mps);
    Simulator::Run();
    Ptr<PciePort> tx = pair.a->GetPort();
    Ptr<PciePort> rx = pair.b->GetPort();
    CHECK(sink.tlps == tlps);
    CHECK(sink.inOrder);
    CHECK(rx->GetTlpsDelivered() == tlps);
    CHECK(rx->GetLcrcErrors() > 0);
    CHECK(tx->GetTlpsReplayed() > 0);
    CHECK(tx->GetNaksReceived() > 0);
    REQUIRE(done.transfers.size() == 1);
    // Go-back-N: each bad TLP wastes the link from its start until the Nak is
    // back and the TLP then on the wire is done: W = T + 2d + T_dllp + T/2 (mean).
    // Errors per delivered TLP: p / (1 - p), p = 1 - (1 - BER)^(276 * 8).
    const double t = Ns(gen, width, 276);
    const double w = t + 2 * delay.GetNanoSeconds() + Ns(gen, width, 8) + t / 2;
    // The arithmetic takes the errors this run drew (checked against p below),
    // so that the tolerance is the model's, not the Poisson noise of ~100 errors.
    const double p = -std::expm1(276 * 8 * std::log1p(-ber));
    const double errors = double(rx->GetLcrcErrors());
    const double ideal = PcieLinkBytesPerSecond(gen, width) * mps / 276.0;
    const double expected = ideal * t / (t + errors / tlps * w);
    const double transmissions = double(tx->GetTlpsSent() + tx->GetTlpsReplayed());
    CHECK(errors == doctest::Approx(p * transmissions).epsilon(4.0 / std::sqrt(p * transmissions)));
    // Each error replays what was sent while the Nak travelled: about W / T TLPs.
    CHECK(tx->GetTlpsReplayed() / errors == doctest::Approx(w / t).epsilon(0.1));
    MESSAGE("BER ", ber, ": ", sink.Rate() / 1e9, " GB/s, expected ", expected / 1e9,
            ", error-free ", ideal / 1e9, "; LCRC errors ", rx->GetLcrcErrors(), " (expected ",
            p * transmissions, "), replayed ", tx->GetTlpsReplayed(), ", timeouts ",
            tx->GetReplayTimeouts());
    CHECK(sink.Rate() < 0.99 * ideal);
    CHECK(sink.Rate() == doctest::Approx(expected).epsilon(0.005));
    Simulator::Destroy();
}

TEST_CASE("writes both ways share each direction with the other's Acks and UpdateFCs")
{
    const uint32_t gen = 4, width = 16, mps = 256, ackEvery = 8;
    PcieHelper h = Helper(gen, width, mps, NanoSeconds(2));
    h.SetPortAttribute("AckCoalesceTlps", UintegerValue(ackEvery));
    auto pair = h.Install();
    REQUIRE(pair.Ok());
    Sink ab;
    Sink ba;
    pair.b->GetPort()->TraceConnectWithoutContext("TlpRx", MakeCallback(&Sink::Rx, &ab));
    pair.a->GetPort()->TraceConnectWithoutContext("TlpRx", MakeCallback(&Sink::Rx, &ba));
    const uint64_t tlps = 3000;
    pair.a->GetDma()->Write(0, tlps * mps);
    pair.b->GetDma()->Write(0, tlps * mps);
    Simulator::Run();
    // Per TLP one way, the other way's DLLPs: one UpdateFC-P (they coalesce to
    // one per TLP time) and an Ack every AckCoalesceTlps: 8 + 8 / 8 bytes.
    const double dllpBytes = 8.0 + 8.0 / ackEvery;
    const double expected = PcieLinkBytesPerSecond(gen, width) * mps / (276.0 + dllpBytes);
    MESSAGE("both ways: ", ab.Rate() / 1e9, " and ", ba.Rate() / 1e9, " GB/s, expected ",
            expected / 1e9);
    CHECK(ab.Rate() == doctest::Approx(expected).epsilon(0.01));
    CHECK(ba.Rate() == doctest::Approx(expected).epsilon(0.01));
    CHECK(ab.tlps == tlps);
    CHECK(ba.tlps == tlps);
    Simulator::Destroy();
}

TEST_CASE("a memory slower than the link holds writes to its bandwidth through credits")
{
    PcieHelper h = Helper(5, 16, 256, NanoSeconds(2));
    h.SetMemoryAttribute("Bandwidth", DataRateValue(DataRate("100Gbps")));
    auto pair = h.Install();
    REQUIRE(pair.Ok());
    Sink sink;
    pair.b->GetPort()->TraceConnectWithoutContext("TlpRx", MakeCallback(&Sink::Rx, &sink));
    pair.a->GetDma()->Write(0, 4 << 20);
    Simulator::Run();
    MESSAGE("memory-bound: ", sink.Rate() / 1e9, " GB/s");
    CHECK(sink.Rate() == doctest::Approx(12.5e9).epsilon(0.01));
    CHECK(pair.a->GetPort()->GetCreditStarvedTime(PcieFcClass::PD).IsStrictlyPositive());
    CHECK(pair.b->GetPort()->GetOverflows() == 0);
    Simulator::Destroy();
}

TEST_CASE("no TLP leaves before the peer's InitFC, and completions do not pass a blocked write")
{
    // Posted credits for one TLP only at b, and a long link: the write after the
    // first waits a credit loop; a read completion queued behind it at a must wait too.
    PcieHelper h = Helper(3, 4, 256, NanoSeconds(200));
    h.SetPortAttribute("InitPH", UintegerValue(1));
    auto pair = h.Install();
    REQUIRE(pair.Ok());
    std::vector<std::pair<Time, PcieTlp::Kind>> sent;
    pair.a->GetPort()->TraceConnectWithoutContext(
        "TlpTx", MakeBoundCallback(
                     +[](std::vector<std::pair<Time, PcieTlp::Kind>>* v, const PcieTlp& t, bool) {
                         v->emplace_back(Simulator::Now(), t.kind);
                     },
                     &sent));
    pair.a->GetDma()->Write(0, 512); // two TLPs; the second waits for PH
    // b reads from a: a's completion arrives at a's queue after the second write.
    Simulator::Schedule(NanoSeconds(1), [&pair]() { pair.b->GetDma()->Read(0, 64); });
    Simulator::Run();
    REQUIRE(sent.size() == 3);
    CHECK(sent[0].first >= NanoSeconds(200)); // waited for the InitFC to cross the link
    CHECK(sent[0].second == PcieTlp::Kind::MemWrite);
    CHECK(sent[1].second == PcieTlp::Kind::MemWrite);
    CHECK(sent[2].second == PcieTlp::Kind::Completion);
    CHECK(sent[1].first - sent[0].first > NanoSeconds(400)); // a credit loop
    Simulator::Destroy();
}

TEST_CASE(
    "a very noisy link (BER 1e-4, a fifth of TLPs hit) still delivers every TLP once, in order")
{
    PcieHelper h = Helper(3, 16, 256, NanoSeconds(20));
    h.SetLinkAttribute("BitErrorRate", DoubleValue(1e-4));
    auto pair = h.Install();
    REQUIRE(pair.Ok());
    PcieHelper::AssignStreams(pair, 11);
    Sink sink;
    Done done;
    Done readDone;
    pair.b->GetPort()->TraceConnectWithoutContext("TlpRx", MakeCallback(&Sink::Rx, &sink));
    pair.a->GetDma()->SetTransferCallback(MakeCallback(&Done::Add, &done));
    pair.b->GetDma()->SetTransferCallback(MakeCallback(&Done::Add, &readDone));
    const uint64_t tlps = 2000;
    pair.a->GetDma()->Write(0, tlps * 256);
    pair.b->GetDma()->Read(0, 64 * 1024); // completions and Acks cross the same noise
    Simulator::Run();
    MESSAGE("BER 1e-4: LCRC errors ", pair.b->GetPort()->GetLcrcErrors(), ", replay timeouts ",
            pair.a->GetPort()->GetReplayTimeouts(), ", duplicates ",
            pair.b->GetPort()->GetDuplicates());
    CHECK(sink.tlps == tlps + 64 * 1024 / 256); // a's writes and the completions of b's read
    CHECK(sink.inOrder);
    CHECK(done.transfers.size() == 1);
    CHECK(readDone.transfers.size() == 1);
    CHECK(pair.b->GetPort()->GetLcrcErrors() > 100);
    CHECK(pair.b->GetPort()->GetOverflows() == 0);
    Simulator::Destroy();
}
