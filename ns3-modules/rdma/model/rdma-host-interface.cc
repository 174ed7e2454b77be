#include "ns3/rdma-host-interface.h"

#include "ns3/uinteger.h"

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(RdmaHostInterface);

TypeId
RdmaHostInterface::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::RdmaHostInterface")
            .SetParent<Object>()
            .SetGroupName("Rdma")
            .AddAttribute("ChunkBytes",
                          "A staged WRITE moves through memory in pieces of this many bytes: "
                          "each is fetched, then sent as one WRITE with immediate",
                          UintegerValue(64 * 1024),
                          MakeUintegerAccessor(&RdmaHostInterface::m_chunkBytes),
                          MakeUintegerChecker<uint64_t>(256, uint64_t{1} << 30))
            .AddAttribute("ChunkWindow",
                          "Chunks fetched from memory but not yet acknowledged by the peer: the "
                          "NIC's buffer for a staged WRITE, which lets fabric pacing hold its "
                          "DMA reads",
                          UintegerValue(16),
                          MakeUintegerAccessor(&RdmaHostInterface::m_chunkWindow),
                          MakeUintegerChecker<uint32_t>(1, 4096));
    return tid;
}

} // namespace ns3
