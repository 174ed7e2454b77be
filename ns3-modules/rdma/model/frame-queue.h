/*
 * A port's FIFO of frames, which keeps a waiting simulated frame as its bytes.
 */
#ifndef FABEMU_FRAME_QUEUE_H
#define FABEMU_FRAME_QUEUE_H

#include "ns3/packet-bytes-address.h"
#include "ns3/packet.h"
#include "ns3/ptr.h"
#include "ns3/ring-queue.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>

namespace ns3
{

/**
 * \brief A FIFO of frames in which a waiting simulated frame costs its real bytes, not a
 * Packet.
 *
 * A simulated frame is a few dozen bytes of headers, a payload that is a zero area of
 * ns-3's buffer (never allocated) and a trailer (the ICRC). As an ns3::Packet it takes
 * three heap blocks, some 260 bytes with the allocator's rounding, most of them the
 * Packet object itself. In a fabric whose queues are held by PFC, tens of thousands of
 * frames wait at once, and those blocks are most of the run's memory and of the cold
 * memory each hop reads.
 *
 * CompactBack() keeps the newest frame as its header and trailer bytes, in a ring of
 * bytes, and the zero payload's length; Pop() builds it again as a Packet with the same
 * bytes, the same size and the same zero area. Frames that wait together mostly differ
 * in a few bytes (a sequence number, a checksum, the ICRC), so a frame of the same shape
 * as the one kept before it is kept as the bytes that differ from that one: a bitmap of
 * which bytes differ, then those bytes. The ring is read in the order it was written, so
 * Pop() always has the frame before at hand.
 *
 * A frame stays a Packet when keeping it as bytes could lose something: tags, a Nix
 * vector, metadata (Packet::EnablePrinting), a payload of real bytes (an emulated
 * endpoint's frame: copying it twice would cost what the emulator's datapath saves), or
 * more than kMaxCompactBytes of real bytes. A compacted frame comes back as a new Packet
 * object: whoever kept a pointer to the one that was queued keeps that one, unchanged by
 * what the port does to the frame later (ECN marking at dequeue, for one).
 */
class FrameQueue
{
  public:
    /// A frame with more real bytes than this stays a Packet.
    static constexpr uint32_t kMaxCompactBytes = 128;
    /// A frame with more trailer bytes than this stays a Packet (ByteTrailer's room).
    static constexpr uint32_t kMaxCompactTrailer = 16;

    /// Appends \p frame as it is, with \p from: the caller's number for where the frame
    /// came from, kept beside it at no cost in memory (a switch: the port it came in by).
    void Push(Ptr<Packet> frame, uint16_t from = 0);
    /**
     * Keeps the newest frame as its bytes, if it is a Packet that may be kept so (see the
     * class). The queue then no longer holds that Packet. A port calls it once it has
     * tried to send, and only behind a few waiting frames (RoceNetDevice's
     * CompactionDepth), so a frame that leaves at once or soon is never copied.
     */
    void CompactBack();
    /// Removes the oldest frame and returns it as a Packet. The queue must not be empty.
    Ptr<Packet> Pop();
    /// The size in bytes of the oldest frame. The queue must not be empty.
    uint32_t FrontSize() const { return m_entries.front().size; }
    /// The oldest frame's \p from (Push). The queue must not be empty.
    uint16_t FrontFrom() const { return m_entries.front().from; }
    /// Whether a waiting frame was pushed with \p from.
    bool Holds(uint16_t from) const;

    bool empty() const { return m_entries.empty(); }

    std::size_t size() const { return m_entries.size(); }

    /// Empties the queue; the room stays.
    void clear();

    /// How many of the queued frames are kept as bytes.
    std::size_t GetCompacted() const { return m_bytes ? m_bytes->compacted : 0; }

    /// How many bytes the frames kept as bytes take in the ring (not its room).
    std::size_t GetKeptBytes() const { return m_bytes ? m_bytes->used : 0; }

    /// Whether \p frame would be kept as bytes by CompactBack().
    static bool IsCompactable(const Packet& frame);

    /// Lets go of this thread's spare Packets (the Packets of frames kept as bytes, kept
    /// to carry the next frames that leave; at most 64).
    static void ReleaseSpares();

  private:
    /// Whether a plain frame of these byte runs is kept as bytes (see the class).
    static bool Fits(const PacketByteRuns& runs);

    /// 16 bytes: the Packet's pointer, then what fills the rest of the word.
    struct Entry
    {
        Entry() : tail(0), delta(0) {}

        Ptr<Packet> packet; ///< null when the frame is kept as bytes
        uint32_t size = 0;  ///< the frame's size in bytes
        uint16_t from = 0;  ///< the caller's (Push)
        uint8_t head = 0;   ///< real bytes before the zero payload
        uint8_t tail : 7;   ///< real bytes after it (at most kMaxCompactTrailer)
        uint8_t delta : 1;  ///< kept as its differences from the frame kept before it
    };
    static_assert(sizeof(Entry) == 16, "an entry fills two words");

    /// A frame's real bytes, head then tail, and their shape.
    struct Image
    {
        std::array<uint8_t, kMaxCompactBytes> bytes;
        uint8_t head = 0;
        uint8_t tail = 0;
        bool valid = false;
    };

    /// Appends \p n bytes to the ring of bytes, which has room for them.
    void PutBytes(const uint8_t* bytes, uint32_t n);
    /// Copies \p n bytes from the front of the ring of bytes to \p out and drops them.
    void TakeBytes(uint8_t* out, uint32_t n);
    /// Makes room for \p n more bytes (grown by half, the bytes kept in order);
    /// m_bytes must exist.
    void Reserve(uint32_t n);

    /// The frames kept as bytes: their bytes, oldest first, in a ring.
    struct Bytes
    {
        std::unique_ptr<uint8_t[]> ring;
        uint32_t capacity = 0; ///< 0 until the first frame
        uint32_t first = 0;    ///< where the oldest byte is
        uint32_t used = 0;
        uint32_t compacted = 0; ///< how many frames
        Image newest;           ///< the frame last kept: the next is coded against it
        Image popped;           ///< the frame kept as bytes that last left
    };

    RingQueue<Entry> m_entries;
    /// Made for the first frame kept as bytes: most queues never hold one, a port has
    /// eight, and a large fabric some hundred thousand (8 bytes each until then).
    std::unique_ptr<Bytes> m_bytes;
};

} // namespace ns3

#endif // FABEMU_FRAME_QUEUE_H
