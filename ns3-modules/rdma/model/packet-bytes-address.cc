#include "ns3/packet-bytes-address.h"

#include "ns3/buffer.h"

namespace ns3
{

namespace
{

const void* FirstByte(const Packet& p);

/*
 * Names the private fields of Packet and Buffer: an explicit instantiation may take
 * their addresses as template arguments (access is not checked there, C++17
 * [temp.explicit]/12), and the friend it defines reads them.
 */
template <auto PacketBuffer, auto BufferData, auto DataBytes, auto BufferStart>
struct BufferFields
{
    static constexpr auto kBuffer = PacketBuffer;
    static constexpr auto kData = BufferData;
    static constexpr auto kBytes = DataBytes;
    static constexpr auto kStart = BufferStart;

    friend const void* FirstByte(const Packet& p)
    {
        return ((p.*kBuffer).*kData)->*kBytes + (p.*kBuffer).*kStart;
    }
};

template struct BufferFields<&Packet::m_buffer, &Buffer::m_data, &Buffer::Data::m_data,
                             &Buffer::m_start>;

} // namespace

const void*
PacketBytesAddress(const Packet& p)
{
    return FirstByte(p);
}

} // namespace ns3
