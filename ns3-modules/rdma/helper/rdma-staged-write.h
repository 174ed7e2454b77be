/*
 * One RDMA WRITE staged through the NICs' host interfaces, the way a NIC's DMA
 * engine streams a message: the message is cut into chunks; the sender's NIC
 * fetches each chunk from memory (RdmaHostInterface::Fetch) and posts it as a
 * WRITE with immediate (the immediate is the chunk's index); the receiver's NIC
 * places each chunk in memory when its receive completion says it has arrived
 * (Place). At most ChunkWindow chunks are fetched and not yet acknowledged, so
 * a slow fabric (DCQCN, PFC, credits) holds the sender's DMA reads, and slow
 * reads hold the fabric. The WRITE is done when every chunk has been both
 * acknowledged and placed. A side without an interface reads or writes its
 * memory at once.
 */
#ifndef FABEMU_RDMA_STAGED_WRITE_H
#define FABEMU_RDMA_STAGED_WRITE_H

#include "ns3/rdma-fabric.h"
#include "ns3/rdma-host-interface.h"

#include <string>

namespace ns3
{

class RdmaStagedWrite : public SimpleRefCount<RdmaStagedWrite>
{
  public:
    /// One end of the transfer: its host interface (null: none) and the memory there.
    struct End
    {
        Ptr<RdmaHostInterface> nic;
        std::string memory{"host"};
    };

    /// \p done gets one completion: success once every byte is placed, or the first
    /// failed chunk's status.
    RdmaStagedWrite(const RdmaFabric::Connection& c, uint64_t bytes, End src, End dst,
                    Callback<void, const RdmaCompletion&> done);

    /// Starts fetching; call once.
    void Start();

  private:
    uint64_t ChunkBytes(uint64_t i) const;
    void Pump();
    void Fetched(uint64_t i);
    void Sent(const RdmaCompletion& c);
    void Arrived(const RdmaCompletion& c);
    void Placed();
    /// Finishes with success once every chunk is acknowledged and placed; whether it did.
    bool FinishIfDone();
    void Finish(RdmaCompletion::Status status);

    RdmaFabric::Connection m_connection;
    uint64_t m_bytes;
    End m_src;
    End m_dst;
    Callback<void, const RdmaCompletion&> m_done;
    uint64_t m_chunk{0};
    uint32_t m_window{0};
    uint64_t m_chunks{0};
    uint64_t m_nextFetch{0};
    uint64_t m_inWindow{0}; ///< fetched or fetching, not yet acknowledged
    uint64_t m_acked{0};
    uint64_t m_placed{0};
    uint64_t m_arrived{0};  ///< chunks received (SEND: they arrive in order)
    bool m_immediate{true}; ///< chunks go as WRITE with immediate; else as SENDs
    Time m_started;
    bool m_finished{false};
};

} // namespace ns3

#endif
