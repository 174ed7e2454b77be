/*
 * A NIC's host interface: how its DMA engine reaches the server's memory. An
 * RDMA WRITE whose sender or receiver has one is staged through it in chunks
 * (RdmaStagedWrite): each chunk is fetched from memory before it goes on the
 * wire, and placed in memory after it has arrived. The PCIe module implements
 * it (PcieNicInterface); a host without one reads and writes its memory at
 * once, as every NIC did before.
 */
#ifndef FABEMU_RDMA_HOST_INTERFACE_H
#define FABEMU_RDMA_HOST_INTERFACE_H

#include "ns3/callback.h"
#include "ns3/nstime.h"
#include "ns3/object.h"

#include <cstdint>
#include <string>

namespace ns3
{

class RdmaHostInterface : public Object
{
  public:
    static TypeId GetTypeId();

    /// "" if \p memory ("host", "gpuK") can be read and written through this interface,
    /// else why not.
    virtual std::string CheckMemory(const std::string& memory) const = 0;
    /// DMA-reads [offset, offset + bytes) of \p memory into the NIC; \p done once the NIC
    /// holds every byte.
    virtual void Fetch(const std::string& memory, uint64_t offset, uint64_t bytes,
                       Callback<void> done) = 0;
    /// DMA-writes \p bytes the NIC has received to [offset, offset + bytes) of \p memory;
    /// \p done once the memory has taken the last byte.
    virtual void Place(const std::string& memory, uint64_t offset, uint64_t bytes,
                       Callback<void> done) = 0;

    /// What staging adds to a WRITE's latency on an idle interface: the first chunk
    /// fetched from \p memory and the last placed in it (0: no estimate).
    virtual Time GetStagingLatency(const std::string& memory) const
    {
        (void)memory;
        return Time(0);
    }

    /// The size of the pieces a message is staged in (ChunkBytes).
    uint64_t GetChunkBytes() const { return m_chunkBytes; }
    /// How many chunks may be fetched but not yet acknowledged (ChunkWindow).
    uint32_t GetChunkWindow() const { return m_chunkWindow; }

  private:
    uint64_t m_chunkBytes{0};
    uint32_t m_chunkWindow{0};
};

} // namespace ns3

#endif
