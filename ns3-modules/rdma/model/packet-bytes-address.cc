#include "ns3/packet-bytes-address.h"

#include "ns3/buffer.h"

#include <cstring>

namespace ns3
{

namespace
{

const void* FirstByte(const Packet& p);
PacketByteRuns ByteRuns(const Packet& p);
bool BufferUnshared(const Packet& p);
bool MetadataEnabled();
bool NothingButBytes(const Packet& p);

/*
 * Names the private fields of Packet and Buffer: an explicit instantiation may take
 * their addresses as template arguments (access is not checked there, C++17
 * [temp.explicit]/12), and the friends it defines read them. ns-3's Buffer keeps the
 * bytes before the zero area at [start, zeroAreaStart) of its data, and those after it
 * right behind them, from zeroAreaStart on (Buffer::CopyData reads them so); its data
 * is shared between copies, counted in the data's count.
 */
template <auto PacketBuffer, auto BufferData, auto DataBytes, auto DataCount, auto BufferStart,
          auto ZeroStart, auto ZeroEnd, auto BufferEnd>
struct BufferFields
{
    static constexpr auto kBuffer = PacketBuffer;
    static constexpr auto kData = BufferData;
    static constexpr auto kBytes = DataBytes;
    static constexpr auto kCount = DataCount;
    static constexpr auto kStart = BufferStart;
    static constexpr auto kZeroStart = ZeroStart;
    static constexpr auto kZeroEnd = ZeroEnd;
    static constexpr auto kEnd = BufferEnd;

    // (A friend defined here may not have local variables: GCC 12 rejects them.)
    static PacketByteRuns Read(const Packet& p)
    {
        const Buffer& b = p.*kBuffer;
        const uint8_t* data = (b.*kData)->*kBytes;
        PacketByteRuns runs;
        runs.head = data + b.*kStart;
        runs.headSize = b.*kZeroStart - b.*kStart;
        runs.zeroSize = b.*kZeroEnd - b.*kZeroStart;
        runs.tail = data + b.*kZeroStart;
        runs.tailSize = b.*kEnd - b.*kZeroEnd;
        return runs;
    }

    friend const void* FirstByte(const Packet& p)
    {
        return ((p.*kBuffer).*kData)->*kBytes + (p.*kBuffer).*kStart;
    }

    friend PacketByteRuns ByteRuns(const Packet& p) { return Read(p); }

    friend bool BufferUnshared(const Packet& p) { return ((p.*kBuffer).*kData)->*kCount == 1; }
};

template struct BufferFields<&Packet::m_buffer, &Buffer::m_data, &Buffer::Data::m_data,
                             &Buffer::Data::m_count, &Buffer::m_start, &Buffer::m_zeroAreaStart,
                             &Buffer::m_zeroAreaEnd, &Buffer::m_end>;

/// PacketMetadata's private switch, named the same way.
template <bool* Enabled>
struct MetadataSwitch
{
    static constexpr bool* kEnabled = Enabled;

    friend bool MetadataEnabled() { return *kEnabled; }
};

template struct MetadataSwitch<&PacketMetadata::m_enable>;

/// A packet's tag lists and Nix vector, named the same way: empty lists hold no data.
template <auto PacketTags, auto TagsHead, auto PacketByteTags, auto ByteTagsData, auto Nix>
struct PacketExtras
{
    static constexpr auto kTags = PacketTags;
    static constexpr auto kTagsHead = TagsHead;
    static constexpr auto kByteTags = PacketByteTags;
    static constexpr auto kByteTagsData = ByteTagsData;
    static constexpr auto kNix = Nix;

    friend bool NothingButBytes(const Packet& p)
    {
        return (p.*kTags).*kTagsHead == nullptr && (p.*kByteTags).*kByteTagsData == nullptr &&
               PeekPointer(p.*kNix) == nullptr;
    }
};

template struct PacketExtras<&Packet::m_packetTagList, &PacketTagList::m_next,
                             &Packet::m_byteTagList, &ByteTagList::m_data, &Packet::m_nixVector>;

} // namespace

const void*
PacketBytesAddress(const Packet& p)
{
    return FirstByte(p);
}

PacketByteRuns
GetPacketByteRuns(const Packet& p)
{
    return ByteRuns(p);
}

bool
IsPacketMetadataEnabled()
{
    return MetadataEnabled();
}

bool
IsPlainPacket(const Packet& p)
{
    return !MetadataEnabled() && NothingButBytes(p);
}

bool
OverwritePacketBytes(Packet& p, const uint8_t* head, uint32_t headSize, uint32_t zeroSize,
                     const uint8_t* tail, uint32_t tailSize)
{
    const PacketByteRuns runs = ByteRuns(p);
    if (runs.headSize != headSize || runs.zeroSize != zeroSize || runs.tailSize != tailSize ||
        !IsPlainPacket(p) || !BufferUnshared(p))
    {
        return false;
    }
    // The runs point into the buffer's own data, which nothing else reads: writable.
    std::memcpy(const_cast<uint8_t*>(runs.head), head, headSize);
    std::memcpy(const_cast<uint8_t*>(runs.tail), tail, tailSize);
    return true;
}

} // namespace ns3
