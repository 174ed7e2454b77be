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

/// A simulated frame of \p bytes: \p head of them, a zero payload of \p zeros, the rest.
Ptr<Packet>
FrameOf(const std::vector<uint8_t>& bytes, uint32_t head, uint32_t zeros)
{
    Ptr<Packet> p = Create<Packet>(zeros);
    const uint32_t tail = bytes.size() - head;
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

/// \p n bytes that differ from their neighbours, and from another seed's at every place.
std::vector<uint8_t>
Pattern(size_t n, uint8_t seed)
{
    std::vector<uint8_t> bytes(n);
    for (size_t i = 0; i < n; ++i)
    {
        bytes[i] = static_cast<uint8_t>(seed + 13 * i + 1);
    }
    return bytes;
}

/// A simulated frame: \p head bytes of headers, a zero payload of \p zeros, \p tail bytes.
Ptr<Packet>
Frame(uint32_t head, uint32_t zeros, uint32_t tail, uint8_t seed)
{
    return FrameOf(Pattern(head + tail, seed), head, zeros);
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
    FrameQueue::ReleaseSpares();
    FrameQueue q;
    Ptr<Packet> frame = Frame(58, 1024, 4, 3);
    const std::vector<uint8_t> want = AllBytes(frame);
    q.Push(frame);
    CHECK(q.GetCompacted() == 0);
    q.CompactBack();
    CHECK(q.GetCompacted() == 1);
    CHECK(q.FrontSize() == 58 + 1024 + 4);

    Ptr<Packet> back = q.Pop();
    CHECK(q.empty());
    CHECK(q.GetCompacted() == 0);
    CHECK(back != frame); // the caller still holds the Packet it queued: a new one
    CHECK(AllBytes(back) == want);
    CHECK(AllBytes(frame) == want);
    const PacketByteRuns runs = GetPacketByteRuns(*back);
    CHECK(runs.zeroSize == 1024); // the payload is still a zero area, never allocated
    CHECK(runs.headSize == 58);
    CHECK(runs.tailSize == 4);
}

TEST_CASE("The Packets of kept frames that nobody holds any more carry the frames that leave")
{
    FrameQueue::ReleaseSpares();
    FrameQueue q;
    Ptr<Packet> a = Frame(58, 1024, 4, 3);
    Ptr<Packet> b = Frame(58, 1024, 4, 77);
    const Packet* aObject = PeekPointer(a);
    const Packet* bObject = PeekPointer(b);
    const std::vector<uint8_t> wantA = AllBytes(a);
    const std::vector<uint8_t> wantB = AllBytes(b);
    q.Push(a);
    q.CompactBack();
    a = nullptr; // the arrival that handed it over lets go
    q.Push(b);
    q.CompactBack();
    b = nullptr;
    CHECK(wantA != wantB);

    Ptr<Packet> first = q.Pop(); // a's bytes, in the newest spare: b's Packet
    CHECK(PeekPointer(first) == bObject);
    CHECK(AllBytes(first) == wantA);
    Ptr<Packet> second = q.Pop();
    CHECK(PeekPointer(second) == aObject);
    CHECK(AllBytes(second) == wantB);
    CHECK(GetPacketByteRuns(*second).zeroSize == 1024);
}

TEST_CASE("A spare Packet is not written while anyone holds it, shares its buffer, or differs")
{
    FrameQueue::ReleaseSpares();
    FrameQueue q;
    // Held: the caller keeps its frame; the next to leave must not be written into it.
    Ptr<Packet> held = Frame(58, 1024, 4, 1);
    const std::vector<uint8_t> heldBytes = AllBytes(held);
    Ptr<Packet> other = Frame(58, 1024, 4, 2);
    const std::vector<uint8_t> otherBytes = AllBytes(other);
    q.Push(other);
    q.CompactBack();
    other = nullptr;
    q.Push(held);
    q.CompactBack(); // spares: other's Packet, then held's on top
    Ptr<Packet> out = q.Pop();
    CHECK(out != held);
    CHECK(AllBytes(out) == otherBytes);
    CHECK(AllBytes(held) == heldBytes);
    CHECK(AllBytes(q.Pop()) == heldBytes);

    // Shared: a copy of the frame shares its buffer with the spare.
    FrameQueue::ReleaseSpares();
    Ptr<Packet> shared = Frame(58, 1024, 4, 3);
    Ptr<Packet> copy = shared->Copy();
    const std::vector<uint8_t> copyBytes = AllBytes(copy);
    Ptr<Packet> next = Frame(58, 1024, 4, 4);
    const std::vector<uint8_t> nextBytes = AllBytes(next);
    q.Push(next);
    q.CompactBack();
    q.Push(shared);
    q.CompactBack();
    shared = nullptr;
    CHECK(AllBytes(q.Pop()) == nextBytes);
    CHECK(AllBytes(copy) == copyBytes);
    CHECK(AllBytes(q.Pop()) != nextBytes);

    // Another shape: a spare of 40 + 500 + 4 bytes cannot carry a 58 + 1024 + 4 frame.
    FrameQueue::ReleaseSpares();
    Ptr<Packet> big = Frame(58, 1024, 4, 5);
    const std::vector<uint8_t> bigBytes = AllBytes(big);
    Ptr<Packet> small = Frame(40, 500, 4, 6);
    q.Push(big);
    q.CompactBack();
    q.Push(small);
    q.CompactBack();
    small = nullptr;
    Ptr<Packet> leaving = q.Pop(); // (a new Packet, which may take the freed spare's place)
    CHECK(leaving->GetSize() == 58 + 1024 + 4);
    CHECK(AllBytes(leaving) == bigBytes);
    CHECK(GetPacketByteRuns(*leaving).zeroSize == 1024);
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
    for (const Ptr<Packet>& p :
         {tagged, byteTagged, realPayload, manyBytes, longTrailer, headersOnly, zerosOnly, routed})
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
    std::deque<uint16_t> froms; // each frame's from: the step that pushed it
    struct Flow
    {
        std::vector<uint8_t> bytes;
        uint32_t head;
    };

    std::vector<Flow> flows{{std::vector<uint8_t>(62, 1), 58},
                            {std::vector<uint8_t>(78, 2), 74},
                            {std::vector<uint8_t>(FrameQueue::kMaxCompactBytes, 3), 120}};
    uint32_t compactedSeen = 0;
    uint32_t maxDepth = 0;
    for (int step = 0; step < 20000; ++step)
    {
        // Grow to some hundreds of frames, then drain, twice over, with pops mixed in.
        const bool filling = (step / 5000) % 2 == 0;
        if (expect.empty() || u->GetValue() < (filling ? 0.7 : 0.3))
        {
            const std::size_t compactedBefore = q.GetCompacted();
            const uint32_t zeros = u->GetInteger(0, 4) == 0 ? 0 : u->GetInteger(1, 4096);
            Ptr<Packet> p;
            if (u->GetInteger(0, 1) == 0)
            {
                const uint32_t head = u->GetInteger(14, 100);
                const uint32_t tail = u->GetInteger(0, 8);
                p = Frame(head, zeros, tail, static_cast<uint8_t>(step));
            }
            else
            {
                // A frame of one of three flows: its last frame with a few bytes changed
                // (none, some, or most of them, so that some are coded whole).
                Flow& f = flows[u->GetInteger(0, flows.size() - 1)];
                const uint32_t changes = u->GetInteger(0, 3) == 0 ? u->GetInteger(0, f.bytes.size())
                                                                  : u->GetInteger(0, 8);
                for (uint32_t c = 0; c < changes; ++c)
                {
                    f.bytes[u->GetInteger(0, f.bytes.size() - 1)] =
                        static_cast<uint8_t>(u->GetInteger(0, 255));
                }
                p = FrameOf(f.bytes, f.head, zeros);
            }
            if (u->GetInteger(0, 9) == 0)
            {
                p->AddPacketTag(MarkTag());
            }
            expect.emplace_back(p, AllBytes(p));
            froms.push_back(static_cast<uint16_t>(step));
            q.Push(p, froms.back());
            if (u->GetInteger(0, 3) != 0) // a frame that left at once is not compacted
            {
                q.CompactBack();
                if (q.GetCompacted() > compactedBefore && u->GetInteger(0, 1) == 0)
                {
                    expect.back().first = nullptr; // nobody holds it: a spare to reuse
                }
            }
        }
        else
        {
            REQUIRE(q.FrontSize() == expect.front().second.size());
            REQUIRE(q.FrontFrom() == froms.front()); // kept beside the frame, whole or not
            froms.pop_front();
            const Ptr<Packet> queued = expect.front().first;
            const bool wasPacket = queued && !FrameQueue::IsCompactable(*queued);
            Ptr<Packet> p = q.Pop();
            REQUIRE(AllBytes(p) == expect.front().second);
            if (wasPacket)
            {
                CHECK(p == queued);
            }
            if (queued)
            {
                REQUIRE(AllBytes(queued) == expect.front().second); // held: never written
            }
            compactedSeen += p != queued;
            expect.pop_front();
        }
        maxDepth = std::max<uint32_t>(maxDepth, q.size());
        REQUIRE(q.size() == expect.size());
        if (step % 97 == 0)
        {
            CHECK(!q.Holds(0xffff)); // no step pushed it
            if (!froms.empty())
            {
                CHECK(q.Holds(froms[froms.size() / 2]));
            }
        }
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

TEST_CASE("Frames of a flow are kept as the bytes in which each differs from the one before")
{
    FrameQueue::ReleaseSpares();
    FrameQueue q;
    // Ethernet, VLAN, IPv4, UDP and BTH (58 bytes), 1,024 bytes of zeros, the ICRC.
    std::vector<uint8_t> bytes = Pattern(62, 0);
    std::vector<std::vector<uint8_t>> want;
    const int frames = 1000;
    for (int n = 0; n < frames; ++n)
    {
        if (n == 500)
        {
            // Another shape between them: kept whole, and the next one whole again.
            Ptr<Packet> other = Frame(74, 1024, 4, 9);
            want.push_back(AllBytes(other));
            q.Push(other);
            q.CompactBack();
        }
        bytes[24] = static_cast<uint8_t>(n >> 8); // the IPv4 checksum
        bytes[25] = static_cast<uint8_t>(n * 7);
        bytes[56] = static_cast<uint8_t>(n >> 8); // the PSN's low bytes
        bytes[57] = static_cast<uint8_t>(n);
        for (int i = 58; i < 62; ++i) // the ICRC
        {
            bytes[i] = static_cast<uint8_t>(n * (i + 5));
        }
        Ptr<Packet> p = FrameOf(bytes, 58, 1024);
        want.push_back(AllBytes(p));
        q.Push(p);
        q.CompactBack();
    }
    CHECK(q.GetCompacted() == frames + 1);
    // Whole, 62 + 62 + 78 bytes; the others an 8-byte bitmap and at most 8 changed bytes.
    CHECK(q.GetKeptBytes() <= 62 + 62 + 78 + (frames - 2) * (8 + 8));
    CHECK(q.GetKeptBytes() >= 62 + 62 + 78 + (frames - 2) * (8 + 5));
    for (const auto& w : want)
    {
        REQUIRE(AllBytes(q.Pop()) == w);
    }
    CHECK(q.GetKeptBytes() == 0);
    CHECK(q.empty());
}

TEST_CASE("After clear(), a frame of the same shape as those cleared comes back whole")
{
    FrameQueue::ReleaseSpares();
    FrameQueue q;
    // a leaves and b is cleared unsent: c, of their shape, must not be coded against b,
    // for Pop() would rebuild it on a, the last kept frame that left. b and c differ from
    // a in byte 10, c from b only in byte 40.
    std::vector<uint8_t> bytes = Pattern(62, 1);
    Ptr<Packet> a = FrameOf(bytes, 58, 1024);
    bytes[10] ^= 0xff;
    Ptr<Packet> b = FrameOf(bytes, 58, 1024);
    bytes[40] ^= 0xff;
    Ptr<Packet> c = FrameOf(bytes, 58, 1024);
    const auto wantA = AllBytes(a);
    const auto wantC = AllBytes(c);
    q.Push(a);
    q.CompactBack();
    q.Push(b);
    q.CompactBack();
    CHECK(q.GetCompacted() == 2);
    CHECK(AllBytes(q.Pop()) == wantA);
    q.clear();
    q.Push(c);
    q.CompactBack();
    CHECK(q.GetCompacted() == 1);
    CHECK(q.GetKeptBytes() == 62); // whole
    CHECK(AllBytes(q.Pop()) == wantC);
}
