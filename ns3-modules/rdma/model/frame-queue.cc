#include "ns3/frame-queue.h"

#include "ns3/byte-header.h"
#include "ns3/byte-trailer.h"
#include "ns3/packet-bytes-address.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <vector>

namespace ns3
{

namespace
{

/// The first room of a queue's ring of bytes: some eight frames' headers.
constexpr uint32_t kFirstBytes = 512; // a power of two

/// How many Packets of kept frames a thread holds on to, to be the frames that leave.
constexpr std::size_t kSpares = 64;

/**
 * The Packets of frames kept as bytes, newest last. When a frame is kept as bytes its
 * Packet is still held by whoever handed it over (the arrival, the switch); once they let
 * go, it is the spare's alone, and the next frame to leave takes it and has its bytes
 * written in (OverwritePacketBytes): no Packet is freed and built again at every hop.
 */
thread_local std::vector<Ptr<Packet>> t_spares;

static_assert(FrameQueue::kMaxCompactBytes <= ByteHeader::kMax);
static_assert(FrameQueue::kMaxCompactTrailer <= ByteTrailer::kMax);

} // namespace

bool
FrameQueue::IsCompactable(const Packet& frame)
{
    return IsPlainPacket(frame) && Fits(GetPacketByteRuns(frame));
}

bool
FrameQueue::Fits(const PacketByteRuns& runs)
{
    const uint32_t real = runs.headSize + runs.tailSize;
    return runs.zeroSize > 0 && real > 0 && real <= kMaxCompactBytes &&
           runs.tailSize <= kMaxCompactTrailer;
}

void
FrameQueue::Push(Ptr<Packet> frame)
{
    Entry e;
    e.size = frame->GetSize();
    e.packet = std::move(frame);
    m_entries.push_back(std::move(e));
}

void
FrameQueue::CompactBack()
{
    if (m_entries.empty())
    {
        return;
    }
    Entry& e = m_entries.back();
    if (!e.packet || !IsPlainPacket(*e.packet))
    {
        return;
    }
    const PacketByteRuns runs = GetPacketByteRuns(*e.packet); // read once, for both
    if (!Fits(runs))
    {
        return;
    }
    Reserve(runs.headSize + runs.tailSize);
    PutBytes(runs.head, runs.headSize);
    PutBytes(runs.tail, runs.tailSize);
    e.head = static_cast<uint16_t>(runs.headSize);
    e.tail = static_cast<uint16_t>(runs.tailSize);
    if (t_spares.size() < kSpares)
    {
        t_spares.push_back(e.packet);
    }
    e.packet = nullptr;
    ++m_bytes->compacted;
}

void
FrameQueue::Reserve(uint32_t n)
{
    if (!m_bytes)
    {
        m_bytes = std::make_unique<Bytes>();
    }
    Bytes& b = *m_bytes;
    if (b.capacity - b.used >= n)
    {
        return;
    }
    uint32_t capacity = std::max(kFirstBytes, 2 * b.capacity);
    while (capacity - b.used < n)
    {
        capacity *= 2;
    }
    std::unique_ptr<uint8_t[]> bigger(new uint8_t[capacity]); // (left uninitialised)
    const uint32_t used = b.used;
    if (used > 0)
    {
        TakeBytes(bigger.get(), used);
    }
    b.ring = std::move(bigger);
    b.capacity = capacity;
    b.first = 0;
    b.used = used;
}

void
FrameQueue::PutBytes(const uint8_t* bytes, uint32_t n)
{
    Bytes& b = *m_bytes;
    const uint32_t end = (b.first + b.used) & (b.capacity - 1);
    const uint32_t first = std::min(n, b.capacity - end);
    std::memcpy(b.ring.get() + end, bytes, first);
    std::memcpy(b.ring.get(), bytes + first, n - first);
    b.used += n;
}

void
FrameQueue::TakeBytes(uint8_t* out, uint32_t n)
{
    Bytes& b = *m_bytes;
    const uint32_t first = std::min(n, b.capacity - b.first);
    std::memcpy(out, b.ring.get() + b.first, first);
    std::memcpy(out + first, b.ring.get(), n - first);
    b.first = (b.first + n) & (b.capacity - 1);
    b.used -= n;
}

Ptr<Packet>
FrameQueue::Pop()
{
    Entry& e = m_entries.front();
    Ptr<Packet> frame;
    if (e.packet)
    {
        frame = std::move(e.packet);
    }
    else
    {
        std::array<uint8_t, kMaxCompactBytes> bytes;
        TakeBytes(bytes.data(), e.head + e.tail);
        const uint32_t zeros = e.size - e.head - e.tail;
        if (!t_spares.empty())
        {
            // The newest spare, if nobody else holds it and it has this frame's shape.
            Ptr<Packet> spare = t_spares.back();
            t_spares.pop_back();
            if (spare->GetReferenceCount() == 1 &&
                OverwritePacketBytes(*spare, bytes.data(), e.head, zeros, bytes.data() + e.head,
                                     e.tail))
            {
                frame = spare;
            }
        }
        if (!frame)
        {
            frame = Create<Packet>(zeros);
            if (e.tail > 0)
            {
                frame->AddTrailer(ByteTrailer(bytes.data() + e.head, e.tail));
            }
            if (e.head > 0)
            {
                frame->AddHeader(ByteHeader(bytes.data(), e.head));
            }
        }
        --m_bytes->compacted;
    }
    m_entries.pop_front();
    return frame;
}

void
FrameQueue::ReleaseSpares()
{
    t_spares.clear();
}

void
FrameQueue::clear()
{
    m_entries.clear();
    if (m_bytes)
    {
        m_bytes->first = 0;
        m_bytes->used = 0;
        m_bytes->compacted = 0;
    }
}

} // namespace ns3
