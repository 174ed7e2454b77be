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
constexpr uint32_t kFirstBytes = 512;

/// How many Packets of kept frames a thread holds on to, to be the frames that leave.
constexpr std::size_t kSpares = 64;

/**
 * The Packets of frames kept as bytes, newest last. When a frame is kept as bytes its
 * Packet is still held by whoever handed it over (the arrival, the switch); once they let
 * go, it is the spare's alone, and the next frame to leave takes it and has its bytes
 * written in (OverwritePacketBytes): no Packet is freed and built again at every hop.
 */
thread_local std::vector<Ptr<Packet>> t_spares;

/// How many bits are set in each byte (without the POPCNT instruction, which the build
/// does not assume: GCC's __builtin_popcount would call libgcc).
constexpr std::array<uint8_t, 256> kBitsSet = [] {
    std::array<uint8_t, 256> t{};
    for (uint32_t i = 1; i < 256; ++i)
    {
        t[i] = static_cast<uint8_t>(t[i / 2] + (i & 1));
    }
    return t;
}();

/**
 * Codes the \p words 8-byte words of \p bytes against \p before: a bitmap of a byte per
 * word, bit i set when byte i of the word differs, then the bytes that differ, in order.
 * Writes it to \p out and returns its length.
 */
uint32_t
CodeDifferences(const uint8_t* bytes, const uint8_t* before, uint32_t words, uint8_t* out)
{
    constexpr uint64_t kLow7 = 0x7f7f7f7f7f7f7f7full;
    constexpr uint64_t kHigh = 0x8080808080808080ull;
    uint32_t k = words;
    for (uint32_t w = 0; w < words; ++w)
    {
        uint64_t a;
        uint64_t b;
        std::memcpy(&a, bytes + 8 * w, 8);
        std::memcpy(&b, before + 8 * w, 8);
        const uint64_t x = a ^ b;
        if (x == 0) // most words are the same as the frame's before
        {
            out[w] = 0;
            continue;
        }
        // The high bit of each byte of x that is not zero, then those 8 bits gathered into
        // one byte: byte i of the word (little-endian) to bit i.
        const uint64_t high = (((x & kLow7) + kLow7) | x) & kHigh;
        const auto bits = static_cast<uint8_t>(((high >> 7) * 0x0102040810204080ull) >> 56);
        out[w] = bits;
        for (uint32_t m = bits; m != 0; m &= m - 1)
        {
            out[k++] = bytes[8 * w + static_cast<uint32_t>(__builtin_ctz(m))];
        }
    }
    return k;
}

/// Writes the \p changed bytes over \p bytes where the bitmap \p map (CodeDifferences)
/// says they go.
void
ApplyDifferences(const uint8_t* map, uint32_t words, const uint8_t* changed, uint8_t* bytes)
{
    for (uint32_t w = 0; w < words; ++w)
    {
        for (uint32_t bits = map[w]; bits != 0; bits &= bits - 1)
        {
            bytes[8 * w + static_cast<uint32_t>(__builtin_ctz(bits))] = *changed++;
        }
    }
}

static_assert(FrameQueue::kMaxCompactBytes <= ByteHeader::kMax);
static_assert(FrameQueue::kMaxCompactBytes % 8 == 0); // a frame's bytes are whole words
static_assert(FrameQueue::kMaxCompactTrailer < 128);  // a trailer's length takes 7 bits
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "CodeDifferences reads words");
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
FrameQueue::Push(Ptr<Packet> frame, uint16_t from)
{
    Entry e;
    e.size = frame->GetSize();
    e.from = from;
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
    const uint32_t n = runs.headSize + runs.tailSize;
    const uint32_t words = (n + 7) / 8;
    std::array<uint8_t, kMaxCompactBytes> bytes; // zeros after the frame's, to a word's end
    std::memcpy(bytes.data(), runs.head, runs.headSize);
    std::memcpy(bytes.data() + runs.headSize, runs.tail, runs.tailSize);
    std::memset(bytes.data() + n, 0, words * 8 - n);
    if (!m_bytes)
    {
        m_bytes = std::make_unique<Bytes>();
    }
    Image& newest = m_bytes->newest;
    e.head = static_cast<uint8_t>(runs.headSize);
    e.tail = static_cast<uint8_t>(runs.tailSize);
    e.delta = newest.valid && newest.head == e.head && newest.tail == e.tail;
    if (e.delta)
    {
        std::array<uint8_t, kMaxCompactBytes / 8 + kMaxCompactBytes> coded;
        const uint32_t k = CodeDifferences(bytes.data(), newest.bytes.data(), words, coded.data());
        e.delta = k < n ? 1 : 0;
        if (e.delta)
        {
            Reserve(k);
            PutBytes(coded.data(), k);
        }
    }
    if (!e.delta)
    {
        Reserve(n);
        PutBytes(bytes.data(), n);
    }
    std::memcpy(newest.bytes.data(), bytes.data(), words * 8);
    newest.head = e.head;
    newest.tail = e.tail;
    newest.valid = true;
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
    Bytes& b = *m_bytes;
    if (b.capacity - b.used >= n)
    {
        return;
    }
    uint32_t capacity = std::max(kFirstBytes, b.capacity + b.capacity / 2);
    while (capacity - b.used < n)
    {
        capacity += capacity / 2;
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
    uint32_t end = b.first + b.used;
    if (end >= b.capacity)
    {
        end -= b.capacity;
    }
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
    b.first += n;
    if (b.first >= b.capacity)
    {
        b.first -= b.capacity;
    }
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
        Image& popped = m_bytes->popped;
        const uint32_t n = e.head + e.tail;
        if (e.delta)
        {
            // The frame kept as bytes that left before this one is the one it was coded
            // against.
            std::array<uint8_t, kMaxCompactBytes / 8> map;
            const uint32_t words = (n + 7) / 8;
            TakeBytes(map.data(), words);
            uint32_t k = 0;
            for (uint32_t w = 0; w < words; ++w)
            {
                k += kBitsSet[map[w]];
            }
            std::array<uint8_t, kMaxCompactBytes> changed;
            TakeBytes(changed.data(), k);
            ApplyDifferences(map.data(), words, changed.data(), popped.bytes.data());
        }
        else
        {
            TakeBytes(popped.bytes.data(), n);
            popped.head = e.head;
            popped.tail = e.tail;
        }
        const uint8_t* bytes = popped.bytes.data();
        const uint32_t zeros = e.size - e.head - e.tail;
        if (!t_spares.empty())
        {
            // The newest spare, if nobody else holds it and it has this frame's shape.
            Ptr<Packet> spare = t_spares.back();
            t_spares.pop_back();
            if (spare->GetReferenceCount() == 1 &&
                OverwritePacketBytes(*spare, bytes, e.head, zeros, bytes + e.head, e.tail))
            {
                frame = spare;
            }
        }
        if (!frame)
        {
            frame = Create<Packet>(zeros);
            if (e.tail > 0)
            {
                frame->AddTrailer(ByteTrailer(bytes + e.head, e.tail));
            }
            if (e.head > 0)
            {
                frame->AddHeader(ByteHeader(bytes, e.head));
            }
        }
        --m_bytes->compacted;
    }
    m_entries.pop_front();
    return frame;
}

bool
FrameQueue::Holds(uint16_t from) const
{
    return std::any_of(m_entries.begin(), m_entries.end(),
                       [from](const Entry& e) { return e.from == from; });
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
        m_bytes->newest.valid = false; // the next frame kept is coded whole
    }
}

} // namespace ns3
