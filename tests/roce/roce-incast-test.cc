#include "lossless.h"

#include "ns3/boolean.h"
#include "ns3/config.h"
#include "ns3/roce-fabric-helper.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

#include <doctest/doctest.h>

#include <functional>
#include <string>
#include <zlib.h>

using namespace ns3;

namespace
{

struct IncastResult
{
    bool lossless{false};
    uint64_t drops{0};
    uint64_t pfcFrames{0};
    uint64_t bytesDelivered{0};
    uint64_t bytesPosted{0};
    int completed{0};
    int failed{0};
    Time lastCompletion;
};

/// n senders (h1..hn) each RDMA WRITE \p bytes into h0 over a star at 100 Gb/s;
/// \p beforeRun, if given, sees the fabric before the simulation runs.
IncastResult
RunIncast(uint32_t senders, uint64_t bytes,
          const std::function<void(RoceFabricHelper&)>& beforeRun = nullptr)
{
    RoceFabricHelper fabric;
    fabric.Install(
        TopologySpec::Star(senders + 1, LinkParams{DataRate("100Gbps"), MicroSeconds(1)}));
    IncastResult r;
    std::vector<Ptr<RdmaQueuePair>> receivers;
    std::vector<Ptr<RdmaQueuePair>> requesters;
    for (uint32_t s = 1; s <= senders; ++s)
    {
        const auto conn = fabric.Connect(s, 0);
        Ptr<RdmaQueuePair> tx = DynamicCast<RdmaQueuePair>(conn.requester);
        Ptr<RdmaQueuePair> rx = DynamicCast<RdmaQueuePair>(conn.responder);
        receivers.push_back(rx);
        requesters.push_back(tx);
        tx->SetCompletionCallback(MakeCallback(+[](IncastResult* res, const RdmaCompletion& c) {
                                      if (c.status == RdmaCompletion::Status::Success)
                                      {
                                          ++res->completed;
                                      }
                                      else
                                      {
                                          ++res->failed;
                                      }
                                      res->lastCompletion = Simulator::Now();
                                  }).Bind(&r));
        RdmaWorkRequest wr;
        wr.op = RdmaWorkRequest::Op::Write;
        wr.bytes = bytes;
        tx->PostSend(wr);
        r.bytesPosted += bytes;
    }
    if (beforeRun)
    {
        beforeRun(fabric);
    }
    Simulator::Stop(MilliSeconds(200));
    Simulator::Run();
    r.drops = fabric.TotalDrops();
    r.pfcFrames = fabric.TotalPfcFrames();
    for (const auto& rx : receivers)
    {
        r.bytesDelivered += rx->GetBytesReceived();
    }
    BooleanValue pfc;
    fabric.GetSwitches().at(0)->GetMmu()->GetAttribute("PfcEnabled", pfc);
    if (pfc.Get())
    {
        CheckLossless(fabric, requesters, receivers);
    }
    // Nothing left in any queue at the end.
    for (const auto& sw : fabric.GetSwitches())
    {
        CHECK(sw->GetMmu()->GetTotalUsed() == 0);
    }
    Simulator::Destroy();
    return r;
}

} // namespace

TEST_CASE("8:1 incast of 1 MB at 100 Gb/s with PFC: no drop, every byte, pauses sent")
{
    Config::Reset();
    const auto r = RunIncast(8, 1'000'000);
    MESSAGE("PFC on: drops=" << r.drops << " pfc_frames=" << r.pfcFrames
                             << " last_completion=" << r.lastCompletion.As(Time::US));
    CHECK(r.drops == 0);
    CHECK(r.completed == 8);
    CHECK(r.failed == 0);
    CHECK(r.bytesDelivered == r.bytesPosted);
    CHECK(r.pfcFrames > 0);
    // 8 MB through one 100 Gb/s port takes at least 640 us; PFC keeps it near that.
    CHECK(r.lastCompletion > MicroSeconds(640));
    CHECK(r.lastCompletion < MicroSeconds(1000));
}

TEST_CASE("8:1 incast with PFC off and a 1 MB buffer: drops, yet go-back-N delivers every byte")
{
    Config::Reset();
    Config::SetDefault("ns3::SwitchMmu::PfcEnabled", BooleanValue(false));
    Config::SetDefault("ns3::SwitchMmu::BufferSize", UintegerValue(1'000'000));
    const auto r = RunIncast(8, 1'000'000);
    MESSAGE("PFC off: drops=" << r.drops << " last_completion=" << r.lastCompletion.As(Time::US));
    CHECK(r.drops > 0);
    CHECK(r.pfcFrames == 0);
    CHECK(r.completed == 8);
    CHECK(r.bytesDelivered == r.bytesPosted);
    Config::Reset();
}

namespace
{

/// What left the switch in an incast: a CRC of every frame's bytes and send time, and
/// the most frames its ports held at once, and held as bytes.
struct Departures
{
    IncastResult result;
    uLong crc{crc32(0, nullptr, 0)};
    uint64_t frames{0};
    uint32_t maxWaiting{0};
    uint32_t maxCompacted{0};
};

Departures
RunTracedIncast(bool compact)
{
    Config::Reset();
    Config::SetDefault("ns3::RoceNetDevice::CompactWaitingFrames", BooleanValue(compact));
    Departures d;
    std::function<void()> sample; // every 5 us: the switch's waiting frames, kept as bytes
    Ptr<RoceSwitch> sw;
    d.result = RunIncast(8, 1'000'000, [&](RoceFabricHelper& fabric) {
        sw = fabric.GetSwitches().at(0);
        for (uint32_t i = 0; i < sw->GetNPorts(); ++i)
        {
            sw->GetPort(i)->TraceConnectWithoutContext(
                "Sniffer", MakeCallback(+[](Departures* out, Ptr<const Packet> p) {
                               std::vector<uint8_t> bytes(p->GetSize());
                               p->CopyData(bytes.data(), bytes.size());
                               const int64_t ps = Simulator::Now().GetPicoSeconds();
                               out->crc =
                                   crc32(out->crc, reinterpret_cast<const Bytef*>(&ps), sizeof ps);
                               out->crc = crc32(out->crc, bytes.data(), bytes.size());
                               ++out->frames;
                           }).Bind(&d));
        }
        sample = [&]() {
            uint32_t waiting = 0;
            uint32_t compacted = 0;
            for (uint32_t i = 0; i < sw->GetNPorts(); ++i)
            {
                for (uint8_t prio = 0; prio < 8; ++prio)
                {
                    waiting += sw->GetPort(i)->GetQueueFrames(prio);
                    compacted += sw->GetPort(i)->GetQueueCompacted(prio);
                }
            }
            d.maxWaiting = std::max(d.maxWaiting, waiting);
            d.maxCompacted = std::max(d.maxCompacted, compacted);
            if (Simulator::Now() < MilliSeconds(2))
            {
                Simulator::Schedule(MicroSeconds(5), sample);
            }
        };
        Simulator::Schedule(MicroSeconds(5), sample);
    });
    Config::Reset();
    return d;
}

} // namespace

TEST_CASE("frames that wait as bytes leave the switch as the same frames at the same times")
{
    const Departures kept = RunTracedIncast(true);
    const Departures packets = RunTracedIncast(false);
    MESSAGE("waiting at most " << kept.maxWaiting << " frames, " << kept.maxCompacted
                               << " of them as bytes; " << kept.frames << " frames sent");
    CHECK(kept.result.completed == 8);
    CHECK(kept.result.bytesDelivered == kept.result.bytesPosted);
    CHECK(kept.maxWaiting > 100); // PFC holds a deep queue toward h0
    CHECK(kept.maxCompacted > kept.maxWaiting / 2);
    CHECK(packets.maxCompacted == 0);
    CHECK(packets.maxWaiting == kept.maxWaiting);
    CHECK(kept.frames == packets.frames);
    CHECK(kept.crc == packets.crc); // every frame's bytes and send time
    CHECK(kept.result.lastCompletion == packets.result.lastCompletion);
    CHECK(kept.result.pfcFrames == packets.result.pfcFrames);
}
