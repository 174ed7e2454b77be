/*
 * One end of an NVLink connection: a transmit queue serialised at the
 * bundle's rate, credit-based flow control (the peer advertises
 * BufferPackets; a credit returns when the peer's owner has consumed the
 * packet), and link-level replay: a packet that fails its CRC is Nak'ed and
 * the sender goes back to it (go-back-N); acknowledgements ride on the credit
 * returns. Control messages take the propagation delay and no wire time (they
 * ride in the reverse direction's headers, which HeaderBytes accounts for).
 * Packets are delivered once and in order, whatever the bit-error rate.
 */
#ifndef FABEMU_NVLINK_PORT_H
#define FABEMU_NVLINK_PORT_H

#include "ns3/callback.h"
#include "ns3/nstime.h"
#include "ns3/nvlink-packet.h"
#include "ns3/object.h"
#include "ns3/random-variable-stream.h"
#include "ns3/traced-callback.h"

#include <deque>

namespace ns3
{

class NvlinkLink;

class NvlinkPort : public Object
{
  public:
    static TypeId GetTypeId();
    NvlinkPort();

    /// Called by NvlinkLink::Connect.
    void Attach(Ptr<NvlinkLink> link, Ptr<NvlinkPort> peer);
    Ptr<NvlinkLink> GetLink() const;
    uint32_t GetBufferPackets() const { return m_bufferPackets; }

    /// Queues \p p for sending (the owner keeps its own queue short: SetDequeuedCallback).
    void Enqueue(const NvlinkPacket& p);
    size_t GetQueued() const { return m_queue.size(); }
    /// A packet arrived in order: (packet, this port). The owner calls Release() once it
    /// has consumed it.
    void SetReceiveCallback(Callback<void, const NvlinkPacket&, Ptr<NvlinkPort>> cb)
    {
        m_receive = cb;
    }
    /// A new packet left the queue for the wire (replays do not count).
    void SetDequeuedCallback(Callback<void, Ptr<NvlinkPort>> cb) { m_dequeued = cb; }
    /// The oldest delivered packet not yet released is consumed: its credit goes back.
    void Release();
    /// Assigns the random stream for bit errors; returns the streams used (1).
    int64_t AssignStreams(int64_t stream);

    uint64_t GetPacketsSent() const { return m_sent; }
    uint64_t GetPacketsReplayed() const { return m_replayed; }
    uint64_t GetCrcErrors() const { return m_crcErrors; }
    uint64_t GetPacketsDelivered() const { return m_delivered; }
    uint64_t GetPayloadBytesSent() const { return m_payloadBytes; }
    double GetWireBytes() const { return m_wireBytes; }
    /// Packets that arrived with no buffer for them (never, if flow control works).
    uint64_t GetOverflows() const { return m_overflows; }
    /// Time the head of the queue waited for a credit, summed.
    Time GetCreditStarvedTime() const { return m_starvedTotal; }

    using PacketTxTracedCallback = void (*)(const NvlinkPacket& p, bool replay);
    using PacketTracedCallback = void (*)(const NvlinkPacket& p);
    using ReplayTracedCallback = void (*)(uint64_t fromSeq, uint32_t packets);
    using StarvedTracedCallback = void (*)(Time duration);

  protected:
    void DoDispose() override;

  private:
    void TrySend();
    void Send(const NvlinkPacket& p, bool replay);
    void TxDone();
    void Receive(NvlinkPacket p, bool corrupted);
    void ReceiveCredit(uint64_t deliveredBelow);
    void ReceiveNak(uint64_t seq);
    void Starve(bool starved);

    uint32_t m_bufferPackets;
    Ptr<NvlinkLink> m_link;
    Ptr<NvlinkPort> m_peer;
    Ptr<UniformRandomVariable> m_rng;
    Callback<void, const NvlinkPacket&, Ptr<NvlinkPort>> m_receive;
    Callback<void, Ptr<NvlinkPort>> m_dequeued;

    // Sender.
    std::deque<NvlinkPacket> m_queue;  ///< not yet sent
    std::deque<NvlinkPacket> m_replay; ///< sent, not yet acknowledged, by sequence number
    size_t m_nextReplay{0};            ///< index in m_replay of the next to send again
    uint64_t m_nextSeq{0};
    uint32_t m_credits{0};
    bool m_busy{false};
    Time m_starvedSince{Time::Max()};
    Time m_starvedTotal;
    // Receiver.
    uint64_t m_expected{0};   ///< next in-order sequence number
    uint64_t m_unreleased{0}; ///< delivered, not yet released
    uint64_t m_held{0};       ///< buffer in use: delivered and not released

    uint64_t m_sent{0};
    uint64_t m_replayed{0};
    uint64_t m_crcErrors{0};
    uint64_t m_delivered{0};
    uint64_t m_payloadBytes{0};
    double m_wireBytes{0};
    uint64_t m_overflows{0};

    TracedCallback<const NvlinkPacket&, bool> m_txTrace;
    TracedCallback<const NvlinkPacket&> m_rxTrace;
    TracedCallback<const NvlinkPacket&> m_crcTrace;
    TracedCallback<uint64_t, uint32_t> m_replayTrace;
    TracedCallback<Time> m_starvedTrace;
};

} // namespace ns3

#endif
