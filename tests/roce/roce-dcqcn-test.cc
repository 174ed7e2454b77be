#include "lossless.h"

#include "ns3/boolean.h"
#include "ns3/config.h"
#include "ns3/dcqcn-rate-control.h"
#include "ns3/roce-fabric-helper.h"
#include "ns3/roce-packet.h"
#include "ns3/simulator.h"
#include "ns3/string.h"
#include "ns3/uinteger.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <numeric>

using namespace ns3;

namespace
{

double
Jain(const std::vector<double>& x)
{
    const double sum = std::accumulate(x.begin(), x.end(), 0.0);
    double sq = 0;
    for (double v : x)
    {
        sq += v * v;
    }
    return sum * sum / (x.size() * sq);
}

void
UseDcqcn()
{
    Config::Reset();
    DcqcnRateControl::ApplyPreset("paper");
    Config::SetDefault("ns3::RoceNic::CongestionControl", StringValue("ns3::DcqcnRateControl"));
    // DCQCN paper's marking: Kmin 5 KB, Kmax 200 KB, Pmax 1% (the SwitchMmu defaults).
}

struct Flows
{
    RoceFabricHelper fabric;
    std::vector<Ptr<RdmaQueuePair>> tx;
    std::vector<Ptr<RdmaQueuePair>> rx;
    std::map<uint16_t, uint64_t> wireBytes; ///< by UDP source port: what crossed the bottleneck

    void OnArrival(Ptr<const Packet> frame)
    {
        const auto f = PeekFrame(frame);
        if (f.kind == FrameKind::Roce && f.payloadLength > 0)
        {
            wireBytes[f.srcPort] += RoceNetDevice::WireBytes(frame->GetSize());
        }
    }

    int completed{0};
    Time lastCompletion;

    /// \p n senders h1..hn each WRITE \p bytes into h0 over a star at \p rate;
    /// sender i starts at starts[i].
    Flows(uint32_t n, DataRate rate, const std::vector<Time>& starts,
          uint64_t bytes = 4'000'000'000ULL) // longer than any run
    {
        fabric.Install(TopologySpec::Star(n + 1, LinkParams{rate, MicroSeconds(1)}));
        for (uint32_t s = 1; s <= n; ++s)
        {
            const auto conn = fabric.Connect(s, 0);
            Ptr<RdmaQueuePair> a = DynamicCast<RdmaQueuePair>(conn.requester);
            Ptr<RdmaQueuePair> b = DynamicCast<RdmaQueuePair>(conn.responder);
            tx.push_back(a);
            rx.push_back(b);
            a->SetCompletionCallback(MakeCallback(&Flows::Done, this));
            RdmaWorkRequest wr;
            wr.op = RdmaWorkRequest::Op::Write;
            wr.bytes = bytes;
            Simulator::Schedule(starts[s - 1], &RdmaQueuePair::PostSend, a, wr);
        }
        // h0's port is the far end of the bottleneck: count what reaches it.
        fabric.GetNic(0)->GetDevice()->TraceConnectWithoutContext(
            "MacRx", MakeCallback(&Flows::OnArrival, this));
    }
    ~Flows() { Simulator::Destroy(); }

    void Done(const RdmaCompletion& c)
    {
        completed += c.status == RdmaCompletion::Status::Success;
        lastCompletion = Simulator::Now();
    }

    /// Wire bytes per flow so far, in the order the flows were connected.
    std::vector<uint64_t> Received() const
    {
        std::vector<uint64_t> v;
        for (uint16_t port = 49152; port < 49152 + rx.size(); ++port)
        {
            auto it = wireBytes.find(port);
            v.push_back(it == wireBytes.end() ? 0 : it->second);
        }
        return v;
    }
};

/// Throughput of each flow on the bottleneck link between \p from and \p to, Gb/s.
std::vector<double>
Throughput(Flows& f, Time from, Time to)
{
    std::vector<uint64_t> start;
    Simulator::Schedule(from, [&]() { start = f.Received(); });
    Simulator::Stop(to);
    Simulator::Run();
    const auto end = f.Received();
    std::vector<double> gbps;
    for (size_t i = 0; i < end.size(); ++i)
    {
        gbps.push_back((end[i] - start[i]) * 8.0 / (to - from).GetSeconds() / 1e9);
    }
    return gbps;
}

} // namespace

TEST_CASE("DCQCN: two long flows on a 40 Gb/s bottleneck converge to 20 Gb/s each")
{
    UseDcqcn();
    Flows f(2, DataRate("40Gbps"), {Time(0), MilliSeconds(1)});
    const auto g = Throughput(f, MilliSeconds(25), MilliSeconds(50));
    MESSAGE("flows " << g[0] << " and " << g[1] << " Gb/s, Jain " << Jain(g) << ", CNPs "
                     << f.fabric.TotalCnps() << ", marks " << f.fabric.TotalEcnMarks()
                     << ", pauses " << f.fabric.TotalPfcFrames());
    // The tolerance: 20 +/- 2 Gb/s each, over the second half of a 50 ms run.
    CHECK(std::abs(g[0] - 20) <= 2);
    CHECK(std::abs(g[1] - 20) <= 2);
    CHECK(Jain(g) >= 0.99);
    // The paper (SIGCOMM'15, section 5): DCQCN keeps the bottleneck at >= 90 % of its
    // rate. Wire bytes, as the link carries them.
    CHECK(g[0] + g[1] >= 0.9 * 40);
    CHECK(f.fabric.TotalCnps() > 0);
    CheckLossless(f.fabric, f.tx, f.rx);
}

TEST_CASE("DCQCN: a third flow joining brings all three to C/3")
{
    // The third flow joins at 50 ms. The DCQCN draft has it reach ~13 Gb/s "well
    // within 100 ms"; here it gets there in 40-50 ms, so the 50 ms after that are measured.
    UseDcqcn();
    Flows f(3, DataRate("40Gbps"), {Time(0), MilliSeconds(1), MilliSeconds(50)});
    const auto g = Throughput(f, MilliSeconds(100), MilliSeconds(150));
    MESSAGE("flows " << g[0] << ", " << g[1] << ", " << g[2] << " Gb/s");
    for (double v : g)
    {
        CHECK(std::abs(v - 40.0 / 3) <= 0.15 * 40.0 / 3); // C/3 +/- 15%
    }
    CheckLossless(f.fabric, f.tx, f.rx);
}

namespace
{

struct IncastFigures
{
    uint64_t pauses{0};
    uint64_t p95QueueBytes{0};
    uint64_t drops{0};
    int completed{0};
    Time lastCompletion;
};

/// 8 senders x \p bytes into h0 at 100 Gb/s; the queue toward h0 is sampled every microsecond.
IncastFigures
Incast(uint64_t bytes)
{
    Flows f(8, DataRate("100Gbps"), std::vector<Time>(8, Time(0)), bytes);
    Ptr<SwitchMmu> mmu = f.fabric.GetSwitches().at(0)->GetMmu();
    std::vector<uint64_t> samples;
    std::function<void()> sample = [&]() {
        if (f.completed < 8)
        {
            samples.push_back(mmu->GetEgressBytes(0, 3)); // port 0 faces h0; RDMA is priority 3
            Simulator::Schedule(MicroSeconds(1), sample);
        }
    };
    Simulator::ScheduleNow(sample);
    Simulator::Stop(MilliSeconds(100));
    Simulator::Run();
    IncastFigures r;
    r.pauses = f.fabric.TotalPfcFrames();
    r.drops = f.fabric.TotalDrops();
    r.completed = f.completed;
    CheckLossless(f.fabric, f.tx, f.rx);
    r.lastCompletion = f.lastCompletion;
    std::sort(samples.begin(), samples.end());
    r.p95QueueBytes = samples.empty() ? 0 : samples[samples.size() * 95 / 100];
    return r;
}

} // namespace

TEST_CASE("DCQCN cuts the pause frames of an 8:1 incast tenfold and keeps the queue under Kmax")
{
    const uint64_t bytes = 10'000'000;
    Config::Reset();
    const auto off = Incast(bytes);
    UseDcqcn();
    const auto on = Incast(bytes);
    MESSAGE("DCQCN off: pauses " << off.pauses << ", p95 queue " << off.p95QueueBytes
                                 << " B; on: pauses " << on.pauses << ", p95 queue "
                                 << on.p95QueueBytes << " B; done at "
                                 << off.lastCompletion.As(Time::MS) << " and "
                                 << on.lastCompletion.As(Time::MS));
    CHECK(off.completed == 8);
    CHECK(on.completed == 8);
    CHECK(off.drops + on.drops == 0);
    CHECK(off.pauses >= 10);
    CHECK(on.pauses * 10 <= off.pauses);
    CHECK(on.p95QueueBytes < 200 * 1024); // Kmax of the paper's parameters
    // Not a DCQCN virtue but a guard against starvation: the paper's parameters,
    // tuned for 40 Gb/s, cut hard and recover slowly at 100 Gb/s (measured 2.2x).
    CHECK(on.lastCompletion < off.lastCompletion * 3);
}
