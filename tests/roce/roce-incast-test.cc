#include "lossless.h"

#include "ns3/boolean.h"
#include "ns3/config.h"
#include "ns3/roce-fabric-helper.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

#include <doctest/doctest.h>

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

/// n senders (h1..hn) each RDMA WRITE \p bytes into h0 over a star at 100 Gb/s.
IncastResult
RunIncast(uint32_t senders, uint64_t bytes)
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
