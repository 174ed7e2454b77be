#include "emulator/edge/packet-recycler.h"

#include "ns3/abort.h"
#include "ns3/header.h"

namespace fabemu
{

namespace
{

/// A frame's bytes, in two pieces, copied into a packet by one AddHeader (ns-3's one way
/// to write into a buffer in place; each call costs some 400 instructions besides the
/// copy); never read back as a header.
class RawBytes : public ns3::Header
{
  public:
    RawBytes(const uint8_t* head, uint32_t headLen, const uint8_t* body, uint32_t bodyLen)
        : m_head(head),
          m_body(body),
          m_headLen(headLen),
          m_bodyLen(bodyLen)
    {
    }

    static ns3::TypeId GetTypeId()
    {
        static ns3::TypeId tid =
            ns3::TypeId("fabemu::RawBytes").SetParent<ns3::Header>().SetGroupName("Fabemu");
        return tid;
    }

    ns3::TypeId GetInstanceTypeId() const override { return GetTypeId(); }

    uint32_t GetSerializedSize() const override { return m_headLen + m_bodyLen; }

    void Serialize(ns3::Buffer::Iterator start) const override
    {
        start.Write(m_head, m_headLen);
        start.Write(m_body, m_bodyLen);
    }

    uint32_t Deserialize(ns3::Buffer::Iterator) override
    {
        NS_ABORT_MSG("fabemu::RawBytes is written, never read");
        return 0;
    }

    void Print(std::ostream& os) const override { os << GetSerializedSize() << " bytes"; }

  private:
    const uint8_t* m_head;
    const uint8_t* m_body;
    uint32_t m_headLen;
    uint32_t m_bodyLen;
};

} // namespace

PacketRecycler::PacketRecycler(std::size_t ring) : m_ring(ring)
{
    NS_ABORT_MSG_IF(ring == 0, "PacketRecycler: a ring of no packets");
}

bool
PacketRecycler::Free(const ns3::Ptr<ns3::Packet>& slot)
{
    return slot && slot->GetReferenceCount() == 1;
}

ns3::Ptr<ns3::Packet>
PacketRecycler::Make(const uint8_t* head, uint32_t headLen, const uint8_t* body, uint32_t bodyLen)
{
    // The packet handed out last is the one still in the caches. When the fabric is
    // done with it already (a frame at a time, it is), it takes this frame too; only
    // while it is held does the ring move on, to the oldest packet.
    if (!Free(m_ring[m_last]))
    {
        m_last = m_next;
        m_next = (m_next + 1) % m_ring.size();
    }
    ns3::Ptr<ns3::Packet>& slot = m_ring[m_last];
    if (Free(slot))
    {
        // Nobody else holds it: empty it and write the frame into the same buffer.
        slot->RemoveAtStart(slot->GetSize());
        slot->RemoveAllPacketTags();
        slot->RemoveAllByteTags();
        ++m_reused;
    }
    else
    {
        slot = ns3::Create<ns3::Packet>();
        ++m_made;
    }
    slot->AddHeader(RawBytes(head, headLen, body, bodyLen));
    return slot;
}

} // namespace fabemu
