// FrameQueue keeps waiting simulated frames as their bytes and gives back the same frames.
#include "ns3/byte-header.h"
#include "ns3/byte-trailer.h"
#include "ns3/frame-queue.h"
#include "ns3/nix-vector.h"
#include "ns3/packet-bytes-address.h"
#include "ns3/packet.h"
#include "ns3/random-variable-stream.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <deque>
#include <vector>

using namespace ns3;

namespace
{

/// A simulated frame: \p head bytes of headers, a zero payload of \p zeros, \p tail bytes.
Ptr<Packet>
Frame(uint32_t head, uint32_t zeros, uint32_t tail, uint8_t seed)
{
    Ptr<Packet> p = Create<Packet>(zeros);
    std::vector<uint8_t> bytes(head + tail);
    for (size_t i = 0; i < bytes.size(); ++i)
    {
        bytes[i] = static_cast<uint8_t>(seed + 13 * i + 1);
    }
    for (uint32_t at = 0; at < tail; at += ByteTrailer::kMax) // appended in turn
    {
        const uint32_t n = std::min<uint32_t>(ByteTrailer::kMax, tail - at);
        p->AddTrailer(ByteTrailer(bytes.data() + head + at, n));
    }
    if (head > 0)
    {
        p->AddHeader(ByteHeader(bytes.data(), head));
    }
    return p;
}

/// Every byte of \p p as the Packet API copies it.
std::vector<uint8_t>
AllBytes(Ptr<const Packet> p)
{
    std::vector<uint8_t> out(p->GetSize());
    REQUIRE(p->CopyData(out.data(), p->GetSize()) == p->GetSize());
    return out;
}

/// A tag, to mark a frame that must stay a Packet.
class MarkTag : public Tag
{
  public:
    static TypeId GetTypeId()
    {
        static TypeId tid = TypeId("FrameQueueTestMarkTag").SetParent<Tag>();
        return tid;
    }

    TypeId GetInstanceTypeId() const override { return GetTypeId(); }

    uint32_t GetSerializedSize() const override { return 1; }

    void Serialize(TagBuffer i) const override { i.WriteU8(7); }

    void Deserialize(TagBuffer i) override { i.ReadU8(); }

    void Print(std::ostream& os) const override { os << "mark"; }
};

} // namespace

TEST_CASE("A waiting simulated frame is kept as its bytes and comes back the same")
{
    FrameQueue q;
    Ptr<Packet> frame = Frame(58, 1024, 4, 3);
    const std::vector<uint8_t> want = AllBytes(frame);
    q.Push(frame);
    CHECK(frame->GetReferenceCount() == 2); // the caller's and the queue's
    CHECK(q.GetCompacted() == 0);
    q.CompactBack();
    CHECK(q.GetCompacted() == 1);
    CHECK(frame->GetReferenceCount() == 1); // the queue let go of the Packet
    CHECK(q.FrontSize() == 58 + 1024 + 4);

    Ptr<Packet> back = q.Pop();
    CHECK(q.empty());
    CHECK(q.GetCompacted() == 0);
    CHECK(back != frame);
    CHECK(AllBytes(back) == want);
    const PacketByteRuns runs = GetPacketByteRuns(*back);
    CHECK(runs.zeroSize == 1024); // the payload is still a zero area, never allocated
    CHECK(runs.headSize == 58);
    CHECK(runs.tailSize == 4);
}

TEST_CASE("Frames that could lose something by it stay Packets")
{
    Ptr<Packet> tagged = Frame(40, 500, 4, 1);
    tagged->AddPacketTag(MarkTag());
    Ptr<Packet> byteTagged = Frame(40, 500, 4, 2);
    byteTagged->AddByteTag(MarkTag());
    std::vector<uint8_t> payload(1000, 0x5a);
    Ptr<Packet> realPayload = Create<Packet>(payload.data(), payload.size()); // a VM's frame
    realPayload->AddHeader(ByteHeader(payload.data(), 40));
    Ptr<Packet> manyBytes = Frame(FrameQueue::kMaxCompactBytes - 3, 500, 4, 4);
    Ptr<Packet> longTrailer = Frame(20, 500, FrameQueue::kMaxCompactTrailer + 1, 5);
    Ptr<Packet> headersOnly = Frame(60, 0, 0, 6); // an ACK: no zero area to save
    Ptr<Packet> zerosOnly = Create<Packet>(500);  // nothing real to keep
    Ptr<Packet> routed = Frame(40, 500, 4, 8);
    routed->SetNixVector(Create<NixVector>());

    CHECK_FALSE(IsPacketMetadataEnabled());
    CHECK(IsPlainPacket(*Frame(40, 500, 4, 9)));
    CHECK_FALSE(IsPlainPacket(*tagged));
    CHECK_FALSE(IsPlainPacket(*byteTagged));
    CHECK_FALSE(IsPlainPacket(*routed));
    CHECK(FrameQueue::IsCompactable(*Frame(FrameQueue::kMaxCompactBytes - 4, 500, 4, 7)));
    for (const Ptr<Packet>& p : {tagged, byteTagged, realPayload, manyBytes, longTrailer,
                                 headersOnly, zerosOnly, routed})
    {
        CHECK_FALSE(FrameQueue::IsCompactable(*p));
        FrameQueue q;
        q.Push(p);
        q.CompactBack();
        CHECK(q.GetCompacted() == 0);
        CHECK(q.Pop() == p); // the same Packet, tags and all
    }
}

TEST_CASE("Kept and unkept frames leave in their order, across the ring's wrap and growth")
{
    Ptr<UniformRandomVariable> u = CreateObject<UniformRandomVariable>();
    u->SetStream(11);
    FrameQueue q;
    std::deque<std::pair<Ptr<Packet>, std::vector<uint8_t>>> expect;
    uint32_t compactedSeen = 0;
    uint32_t maxDepth = 0;
    for (int step = 0; step < 20000; ++step)
    {
        // Grow to some hundreds of frames, then drain, twice over, with pops mixed in.
        const bool filling = (step / 5000) % 2 == 0;
        if (expect.empty() || u->GetValue() < (filling ? 0.7 : 0.3))
        {
            const uint32_t head = u->GetInteger(14, 100);
            const uint32_t tail = u->GetInteger(0, 8);
            const uint32_t zeros = u->GetInteger(0, 4) == 0 ? 0 : u->GetInteger(1, 4096);
            Ptr<Packet> p = Frame(head, zeros, tail, static_cast<uint8_t>(step));
            if (u->GetInteger(0, 9) == 0)
            {
                p->AddPacketTag(MarkTag());
            }
            expect.emplace_back(p, AllBytes(p));
            q.Push(p);
            if (u->GetInteger(0, 3) != 0) // a frame that left at once is not compacted
            {
                q.CompactBack();
            }
        }
        else
        {
            REQUIRE(q.FrontSize() == expect.front().second.size());
            const bool wasPacket = FrameQueue::IsCompactable(*expect.front().first) == false;
            Ptr<Packet> p = q.Pop();
            REQUIRE(AllBytes(p) == expect.front().second);
            if (wasPacket)
            {
                CHECK(p == expect.front().first);
            }
            compactedSeen += p != expect.front().first;
            expect.pop_front();
        }
        maxDepth = std::max<uint32_t>(maxDepth, q.size());
        REQUIRE(q.size() == expect.size());
    }
    CHECK(maxDepth > 200); // deep enough that the ring grew several times
    CHECK(compactedSeen > 5000);
    q.clear();
    CHECK(q.empty());
    CHECK(q.GetCompacted() == 0);
    q.Push(Frame(30, 100, 4, 9));
    q.CompactBack();
    CHECK(AllBytes(q.Pop()) == AllBytes(Frame(30, 100, 4, 9)));
}
