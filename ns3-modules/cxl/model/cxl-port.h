/*
 * One end of a CxlLink. It packs queued CXL.mem messages into flits and sends
 * a flit whenever the link is free and a message waits, so at light load a
 * flit leaves part-filled and at heavy load the slots fill:
 * - a header slot holds up to CxlHeadersPerSlot of one class, taken in order
 *   from the queue's head;
 * - the data slots of those messages follow, and may run on into the next
 *   flits (all-data flits);
 * - the peer receives a message with the flit that carries its last slot,
 *   once the whole flit is in and its CRC checked (Delay after it left).
 * Requests (M2S Req, RwD) need a credit of the receiver's (the link's
 * RequestCredits; 0: none counted), back a link delay after delivery. A flit
 * that a bit error hits goes again after the retry request's round trip
 * (link-layer retry).
 * CXL.io TLPs (a device's DMA) travel in flits of their own: the ARB/MUX
 * interleaves the two protocols flit by flit, in turn when both have work.
 */
#ifndef FABEMU_CXL_PORT_H
#define FABEMU_CXL_PORT_H

#include "ns3/callback.h"
#include "ns3/cxl-message.h"
#include "ns3/object.h"
#include "ns3/random-variable-stream.h"
#include "ns3/traced-callback.h"

#include <deque>
#include <vector>

namespace ns3
{

class CxlLink;

class CxlPort : public Object
{
  public:
    static TypeId GetTypeId();
    CxlPort();
    ~CxlPort() override;

    /// Called by CxlLink::Connect: the flit format and delay are read from \p link here.
    void Attach(Ptr<const CxlLink> link, Ptr<CxlPort> peer);

    /// Queues \p m for the peer.
    void Enqueue(const CxlMessage& m);
    /// What receives the messages the peer sent.
    void SetReceiveCallback(Callback<void, const CxlMessage&> cb) { m_receive = cb; }

    uint64_t GetFlitsSent() const { return m_flits; }
    /// Slots of the flits sent that carried a header or data.
    uint64_t GetSlotsUsed() const { return m_slotsUsed; }
    /// Messages waiting for a slot.
    size_t GetQueued() const { return m_queue.size() + m_io.size(); }
    /// Flits sent that carried CXL.io.
    uint64_t GetIoFlitsSent() const { return m_ioFlits; }
    /// Flits sent again after a CRC error.
    uint64_t GetReplays() const { return m_replays; }
    /// Fixes the bit-error draws; returns how many streams it used.
    int64_t AssignStreams(int64_t stream)
    {
        m_error->SetStream(stream);
        return 1;
    }

    using FlitTracedCallback = void (*)(uint32_t slotsUsed, uint32_t messagesDone);
    using MessageTracedCallback = void (*)(const CxlMessage& m);
    using ReplayTracedCallback = void (*)(uint32_t messagesDone);

  protected:
    void DoDispose() override;

  private:
    struct Pending
    {
        CxlMessage message;
        uint32_t slots; ///< data slots still to send
    };
    void SendFlit();
    /// Up to \p room slots of the message at \p q's head; a message whose last slot goes
    /// is done (and leaves \p q). Returns the slots taken.
    static uint32_t TakeSlots(std::deque<Pending>& q, uint32_t room, std::vector<CxlMessage>& done);
    /// Fills up to \p slots slots with .mem headers and data; returns the slots used.
    uint32_t FillMem(uint32_t slots, std::vector<CxlMessage>& done);
    /// Fills up to \p slots slots with CXL.io TLPs; returns the slots used.
    uint32_t FillIo(uint32_t slots, std::vector<CxlMessage>& done);
    void FlitSent();
    /// Sends the flit that ends \p done (again, after a CRC error).
    void Transmit(const std::vector<CxlMessage>& done);
    bool NeedsCredit(CxlMessageType t) const;
    bool HasCredit(CxlMessageType t) const;
    void CreditBack();
    void Deliver(const std::vector<CxlMessage>& done);

    Ptr<CxlPort> m_peer;
    uint32_t m_slots{0}; ///< of a flit, read from the link when attached
    Time m_flitTime;
    Time m_delay;
    Callback<void, const CxlMessage&> m_receive;
    std::deque<CxlMessage> m_queue;
    std::deque<Pending> m_data; ///< headers sent, data slots not all sent
    std::deque<Pending> m_io;   ///< CXL.io TLPs, with the slots each has left
    bool m_ioTurn{false};       ///< the next flit goes to CXL.io when both wait
    bool m_busy{false};
    uint64_t m_flits{0};
    uint64_t m_slotsUsed{0};
    uint64_t m_ioFlits{0};
    uint32_t m_creditLimit{0};
    uint32_t m_credits{0};
    double m_errorProbability{0}; ///< of one flit
    Ptr<UniformRandomVariable> m_error;
    uint64_t m_replays{0};
    TracedCallback<uint32_t> m_replayTrace;

    TracedCallback<uint32_t, uint32_t> m_flitTrace;
    TracedCallback<const CxlMessage&> m_rxTrace;
};

} // namespace ns3

#endif
