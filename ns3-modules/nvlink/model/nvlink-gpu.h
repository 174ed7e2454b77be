/*
 * A GPU's NVLink side: its ports (a bundle each, to an NVSwitch or to a peer
 * GPU), the ports that reach each other GPU, and transfers. A transfer is cut
 * into packets of the link's MaxPayload; each port pulls the next packet of
 * an active transfer it can carry whenever its queue runs low, so traffic is
 * striped over every port toward the destination in proportion to their
 * rates. Arriving packets are consumed at once (HBM keeps up) and counted per
 * transfer; the transfer is done when its last byte is in.
 */
#ifndef FABEMU_NVLINK_GPU_H
#define FABEMU_NVLINK_GPU_H

#include "ns3/callback.h"
#include "ns3/nvlink-port.h"
#include "ns3/object.h"

#include <map>
#include <vector>

namespace ns3
{

/// One transfer as its receiver saw it.
struct NvlinkTransfer
{
    uint32_t src{0};
    uint32_t dst{0};
    uint64_t id{0};
    uint64_t bytes{0};
    Time started;
    Time completed;
};

class NvlinkGpu : public Object
{
  public:
    static TypeId GetTypeId();

    void SetId(uint32_t id) { m_id = id; }
    uint32_t GetId() const { return m_id; }
    /// Adds a port; returns its index.
    uint32_t AddPort(Ptr<NvlinkPort> port);
    Ptr<NvlinkPort> GetPort(uint32_t i) const { return m_ports[i]; }
    uint32_t GetNPorts() const { return static_cast<uint32_t>(m_ports.size()); }
    /// Port \p port reaches GPU \p gpu (through a switch or directly).
    void AddRoute(uint32_t gpu, uint32_t port);
    bool Reaches(uint32_t gpu) const;
    /// The ports that reach GPU \p gpu (empty: none).
    std::vector<uint32_t> GetRoute(uint32_t gpu) const;

    /// Sends \p bytes to GPU \p dst; returns the transfer's id (0: \p dst unreachable).
    uint64_t Send(uint32_t dst, uint64_t bytes);
    /// One share of an NVLS transfer: \p bytes from \p offset on, all through port \p port.
    struct Part
    {
        uint32_t port;
        uint64_t offset;
        uint64_t bytes;
    };
    /**
     * \brief Sends an NVLS transfer of \p bytes in all, with id \p transfer: Reduce
     * packets toward \p dst (the switch sums them with the other \p fanout - 1 GPUs'
     * and sends the sum on), or Multicast packets (the switch copies them to its group
     * \p transfer). Each part goes through its own port, so that every GPU cutting a
     * reduction the same way meets the others' same bytes in the same switch.
     */
    void SendParts(NvlinkKind kind, uint32_t dst, uint64_t transfer, uint64_t bytes,
                   uint32_t fanout, const std::vector<Part>& parts);
    /// A transfer to this GPU has all its bytes (called on the receiver).
    void SetReceivedCallback(Callback<void, const NvlinkTransfer&> cb) { m_received = cb; }
    /// Bytes of transfer \p id from \p src received so far.
    uint64_t GetReceived(uint32_t src, uint64_t id) const;
    /// When transfer \p id started at its sender (called by the receiver's owner).
    Time GetStarted(uint64_t id) const;

  protected:
    void DoDispose() override;

  private:
    struct Outgoing
    {
        uint32_t dst;
        uint64_t bytes;   ///< of this part
        uint64_t next{0}; ///< bytes already cut into packets
        Time started;
        NvlinkKind kind{NvlinkKind::Unicast};
        uint64_t transfer{0}; ///< the id its packets carry
        uint64_t total{0};    ///< the whole transfer's bytes
        uint64_t offset{0};   ///< where this part starts in it
        uint32_t fanout{0};
        int64_t port{-1}; ///< the only port it may take; -1: any toward dst
    };
    void Refill(Ptr<NvlinkPort> port);
    void Received(const NvlinkPacket& p, Ptr<NvlinkPort> port);

    uint32_t m_id{0};
    uint32_t m_queueDepth;
    std::vector<Ptr<NvlinkPort>> m_ports;
    std::map<NvlinkPort*, uint32_t> m_index;
    std::map<uint32_t, std::vector<uint32_t>> m_routes; ///< GPU -> ports
    std::map<uint64_t, Outgoing> m_out;                 ///< not yet fully cut, by id
    std::map<uint64_t, Time> m_started;                 ///< every transfer sent, by id
    uint64_t m_nextId{1};
    uint64_t m_turn{0};                                     ///< round robin among transfers
    std::map<std::pair<uint32_t, uint64_t>, uint64_t> m_in; ///< (src, id) -> bytes received
    Callback<void, const NvlinkTransfer&> m_received;
};

} // namespace ns3

#endif
