/*
 * An InfiniBand host channel adapter: queue pairs of the shared RDMA
 * transport behind one IbPort. Each QP sends on the VL its service level maps
 * to; the HCA keeps at most one packet waiting per VL, so a QP feels credit
 * back-pressure at once. IB congestion control (IBA annex A10): a packet
 * arriving with FECN makes this HCA send a CNP (BECN) to its source; a
 * source raises the flow's CCTI by CctiIncrease per BECN (up to CctiLimit),
 * lowers it by one every CctiTimer, and spaces the flow's packets by the
 * table's inter-packet delay, CCTI x CctStep. Packets are LRH + BTH (+ extension headers) +
 * payload + ICRC + VCRC; the CRC fields are present (sizes and credits are
 * exact) but not computed.
 */
#ifndef FABEMU_IB_HCA_H
#define FABEMU_IB_HCA_H

#include "ns3/event-id.h"
#include "ns3/ib-port.h"
#include "ns3/object.h"
#include "ns3/qp-table.h"
#include "ns3/rdma-queue-pair.h"
#include "ns3/traced-callback.h"

#include <array>
#include <deque>
#include <unordered_map>
#include <vector>

namespace ns3
{

class IbHca : public Object
{
  public:
    static TypeId GetTypeId();
    IbHca();

    void Setup(Ptr<IbPort> port, uint16_t lid);
    Ptr<IbPort> GetPort() const { return m_port; }
    uint16_t GetLid() const { return m_lid; }

    Ptr<RdmaQueuePair> CreateQp();
    /// Connects \p qp to \p remoteQpn at \p remoteLid; its packets carry \p sl.
    void Connect(Ptr<RdmaQueuePair> qp, uint16_t remoteLid, uint32_t remoteQpn, uint8_t sl);
    void DestroyQp(Ptr<RdmaQueuePair> qp);
    /// The HCA port's SL-to-VL table (IBA 7.6.6): packets of \p sl go out on \p vl.
    /// Unset entries map SL to SL modulo the port's data VLs.
    void SetSl2Vl(uint8_t sl, uint8_t vl);
    uint8_t VlOf(uint8_t sl) const;
    /// Bytes of \p p on the wire: LRH, the GRH if this HCA sends one, transport, ICRC, VCRC.
    uint32_t WireBytes(const TransportPacket& p) const;
    uint64_t GetUnknownQpDrops() const { return m_unknownQp; }
    uint64_t GetCnpsSent() const { return m_cnpsSent; }
    uint64_t GetBecnsReceived() const { return m_becns; }
    /// The congestion control table index of \p qp's flow (0: not throttled).
    uint32_t GetCcti(Ptr<RdmaQueuePair> qp) const;

  protected:
    void DoDispose() override;

  private:
    struct Conn
    {
        Ptr<RdmaQueuePair> qp;
        uint16_t remoteLid{0};
        uint8_t sl{0};
        uint32_t ccti{0}; ///< IB CC: index into the congestion control table
        Time nextSend;    ///< paced by the table's inter-packet delay
    };
    void OnCctiTimer();
    void SendCnp(const Conn& c);
    void Wake();
    void Dequeued(uint8_t vl);
    void TrySend();
    Ptr<Packet> Build(const Conn& c, const TransportPacket& p) const;
    void Receive(Ptr<IbPort> port, Ptr<Packet> p, uint8_t vl, Time tail);
    void Deliver(Ptr<Packet> p, uint8_t vl);

    uint8_t m_defaultSl;
    uint32_t m_cctiIncrease;
    uint32_t m_cctiLimit;
    Time m_cctiTimer;
    Time m_cctStep;
    EventId m_timer;
    EventId m_wakeAt;
    std::deque<std::pair<Ptr<Packet>, uint8_t>> m_cnps;
    uint64_t m_cnpsSent{0};
    uint64_t m_becns{0};
    TracedCallback<uint32_t, uint32_t> m_cctiTrace; ///< QPN, new CCTI
    TracedCallback<uint32_t> m_becnTrace;           ///< QPN
    Ptr<IbPort> m_port;
    uint16_t m_lid{0};
    bool m_useGrh{false};
    std::array<int8_t, 16> m_sl2vl{-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1};
    QpTable<Conn> m_conns{17};
    uint32_t m_rrQpn{0}; ///< the round robin goes on from this QPN (QpTable::IndexFrom)
    bool m_sendScheduled{false};
    uint64_t m_unknownQp{0};
};

} // namespace ns3

#endif
