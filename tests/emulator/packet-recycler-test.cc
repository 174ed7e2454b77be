#include "emulator/edge/frame-buffers.h"
#include "emulator/edge/packet-recycler.h"

#include "ns3/flow-id-tag.h"

#include <doctest/doctest.h>

#include <numeric>
#include <vector>

using namespace fabemu;
using namespace ns3;

namespace
{

std::vector<uint8_t>
Bytes(Ptr<const Packet> p)
{
    std::vector<uint8_t> out(p->GetSize());
    p->CopyData(out.data(), static_cast<uint32_t>(out.size()));
    return out;
}

std::vector<uint8_t>
Frame(uint8_t first, size_t len)
{
    std::vector<uint8_t> f(len);
    std::iota(f.begin(), f.end(), first);
    return f;
}

} // namespace

TEST_CASE("the PacketRecycler writes a frame into a packet nobody holds, never into a held one")
{
    PacketRecycler recycler(2);
    const auto head1 = Frame(1, 16);
    const auto body1 = Frame(100, 1000);
    Ptr<Packet> a = recycler.Make(head1.data(), 16, body1.data(), 1000);
    std::vector<uint8_t> want = head1;
    want.insert(want.end(), body1.begin(), body1.end());
    CHECK(Bytes(a) == want);
    const Packet* aAddress = PeekPointer(a);

    const auto head2 = Frame(7, 16);
    const auto body2 = Frame(50, 900);
    Ptr<Packet> b = recycler.Make(head2.data(), 16, body2.data(), 900);
    CHECK(PeekPointer(b) != aAddress);
    CHECK(recycler.Made() == 2);

    // The ring comes back to a's slot while a is still held (in the fabric): a new packet.
    Ptr<Packet> c = recycler.Make(head2.data(), 16, body2.data(), 900);
    CHECK(PeekPointer(c) != aAddress);
    CHECK(Bytes(a) == want); // untouched
    CHECK(recycler.Made() == 3);
    CHECK(recycler.Reused() == 0);

    // b let go (delivered): its slot's packet is written again, with no tags left.
    b->AddPacketTag(FlowIdTag(5));
    b->AddByteTag(FlowIdTag(6));
    const Packet* bAddress = PeekPointer(b);
    b = nullptr;
    const auto body3 = Frame(9, 400);
    Ptr<Packet> d = recycler.Make(head1.data(), 16, body3.data(), 400);
    CHECK(PeekPointer(d) == bAddress);
    CHECK(recycler.Reused() == 1);
    std::vector<uint8_t> want3 = head1;
    want3.insert(want3.end(), body3.begin(), body3.end());
    CHECK(Bytes(d) == want3);
    CHECK(d->GetSize() == 416);
    FlowIdTag tag;
    CHECK(!d->PeekPacketTag(tag));
    CHECK(!d->FindFirstMatchingByteTag(tag));
}

TEST_CASE("the PacketRecycler writes the next frame into the packet it handed out last, once free")
{
    PacketRecycler recycler(4);
    const auto head = Frame(1, 16);
    const auto body = Frame(100, 1000);
    Ptr<Packet> a = recycler.Make(head.data(), 16, body.data(), 1000);
    const Packet* aAddress = PeekPointer(a);
    a = nullptr; // delivered before the next frame comes, as a frame at a time is
    // Not the ring's next slot (empty, so a new packet), but a's, still in the caches.
    Ptr<Packet> b = recycler.Make(head.data(), 16, body.data(), 900);
    CHECK(PeekPointer(b) == aAddress);
    CHECK(recycler.Made() == 1);
    CHECK(recycler.Reused() == 1);
    CHECK(b->GetSize() == 916);

    // While the last one is held, the ring moves on: b stays untouched.
    Ptr<Packet> c = recycler.Make(head.data(), 16, body.data(), 1000);
    CHECK(PeekPointer(c) != aAddress);
    CHECK(recycler.Made() == 2);
    CHECK(b->GetSize() == 916);
    // c is the last now; once it is free it is taken again, even though b's slot is
    // the ring's oldest.
    const Packet* cAddress = PeekPointer(c);
    c = nullptr;
    b = nullptr;
    Ptr<Packet> d = recycler.Make(head.data(), 16, body.data(), 1000);
    CHECK(PeekPointer(d) == cAddress);
    CHECK(recycler.Reused() == 2);
}

TEST_CASE("the PacketRecycler never writes over the bytes of a copy made of a packet it reuses")
{
    PacketRecycler recycler(1);
    const auto head = Frame(1, 16);
    const auto body = Frame(100, 1000);
    Ptr<Packet> a = recycler.Make(head.data(), 16, body.data(), 1000);
    const std::vector<uint8_t> old = Bytes(a);
    // A copy (as a pcap writer or a flooding switch makes) shares a's buffer; a let go.
    Ptr<Packet> copy = a->Copy();
    a = nullptr;
    // The slot's packet is nobody else's now, so it is reused; its buffer is the copy's too.
    const auto head2 = Frame(40, 16);
    const auto body2 = Frame(200, 1000);
    Ptr<Packet> b = recycler.Make(head2.data(), 16, body2.data(), 1000);
    CHECK(recycler.Reused() == 1);
    CHECK(Bytes(copy) == old);
    std::vector<uint8_t> want = head2;
    want.insert(want.end(), body2.begin(), body2.end());
    CHECK(Bytes(b) == want);

    // A longer frame than the buffer held before: written whole.
    b = nullptr;
    const auto body3 = Frame(3, 9000);
    Ptr<Packet> c = recycler.Make(head.data(), 16, body3.data(), 9000);
    CHECK(recycler.Reused() == 2);
    std::vector<uint8_t> want3 = head;
    want3.insert(want3.end(), body3.begin(), body3.end());
    CHECK(Bytes(c) == want3);
    CHECK(Bytes(copy) == old);
}

TEST_CASE("FrameBuffers gives back what was given, at the size asked")
{
    while (FrameBuffers::Kept() > 0)
    {
        (void)FrameBuffers::Take(1);
    }
    std::vector<uint8_t> a = FrameBuffers::Take(1500);
    CHECK(a.size() == 1500);
    const uint8_t* storage = a.data();
    FrameBuffers::Give(std::move(a));
    CHECK(FrameBuffers::Kept() == 1);
    std::vector<uint8_t> b = FrameBuffers::Take(1000);
    CHECK(b.size() == 1000);
    CHECK(b.data() == storage); // the same memory, no allocation
    CHECK(FrameBuffers::Kept() == 0);
    // The store is bounded.
    for (size_t i = 0; i < FrameBuffers::kMaxKept + 10; ++i)
    {
        FrameBuffers::Give(std::vector<uint8_t>(64));
    }
    CHECK(FrameBuffers::Kept() == FrameBuffers::kMaxKept);
}
