/*
 * A RoCEv2 host NIC: queue pairs on one RoceNetDevice.
 *
 * Transmit: round-robin over the QPs that have a packet and whose pacer
 * allows it (DCQCN sets each QP's rate); each QP has a priority (802.1Q PCP
 * and DSCP), and one frame at most waits in each priority queue of the
 * device, so a PFC pause of that priority holds its QPs back instead of
 * piling frames up. Each QP's data keeps the pace of its FlowPacer (its DCQCN
 * reaction point, or the line rate). ACKs, NAKs and CNPs are not paced; CNPs
 * go on their own priority (ns3::DcqcnNotificationPoint::CnpPriority).
 * Receive: frames go to their destination QP; with a congestion control, the
 * NIC's DcqcnNotificationPoint decides when a CE-marked data frame earns its
 * sender a CNP (with CongestionControl none the NIC sends none).
 */
#ifndef FABEMU_ROCE_NIC_H
#define FABEMU_ROCE_NIC_H

#include "ns3/dcqcn-notification-point.h"
#include "ns3/dcqcn-rate-control.h"
#include "ns3/flow-pacer.h"
#include "ns3/ipv4-address.h"
#include "ns3/mac48-address.h"
#include "ns3/qp-table.h"
#include "ns3/rdma-queue-pair.h"
#include "ns3/roce-net-device.h"
#include "ns3/roce-port-owner.h"
#include "ns3/traced-callback.h"

#include <deque>
#include <unordered_map>
#include <vector>

namespace ns3
{

class RoceNic : public Object, public RocePortOwner
{
  public:
    static TypeId GetTypeId();
    RoceNic();

    void Setup(Ptr<RoceNetDevice> device, Ipv4Address address);
    Ipv4Address GetAddress() const { return m_address; }
    Ptr<RoceNetDevice> GetDevice() const { return m_device; }

    /// Creates a QP on this NIC (attributes from its TypeId defaults).
    Ptr<RdmaQueuePair> CreateQp();
    /**
     * \brief Points \p qp at a remote QP: frames go to \p remoteIp / \p remoteMac
     * from UDP source port \p srcPort (the ECMP entropy of this connection).
     */
    void Connect(Ptr<RdmaQueuePair> qp, Ipv4Address remoteIp, Mac48Address remoteMac,
                 uint32_t remoteQpn, uint16_t srcPort);

    /// Sends \p qp's frames on priority \p priority (0..7) instead of the NIC's Priority.
    void SetQpPriority(Ptr<RdmaQueuePair> qp, uint8_t priority);

    /// Removes a QP (and its congestion control) from this NIC; frames for it are ignored.
    void DestroyQp(Ptr<RdmaQueuePair> qp);

    /// Congestion control of a QP, or null when CongestionControl is "none".
    Ptr<DcqcnRateControl> GetRateControl(Ptr<RdmaQueuePair> qp) const;

    uint64_t GetCnpsSent() const { return m_cnpsSent; }
    uint64_t GetCnpsReceived() const { return m_cnpsReceived; }
    uint64_t GetEcnMarkedReceived() const { return m_ceReceived; }
    uint64_t GetBytesReceived() const { return m_bytesReceived; }

  protected:
    void DoDispose() override;

  private:
    struct Conn
    {
        Ptr<RdmaQueuePair> qp;
        Ipv4Address remoteIp;
        Mac48Address remoteMac;
        uint16_t srcPort{0};
        Ptr<FlowPacer> pacer; ///< the QP's data pace (and DCQCN reaction point)
        uint8_t priority{0};
    };

    void TrySend();
    void Wake();
    void ScheduleTrySend(Time at);
    // RocePortOwner: its one port (index 0).
    void FrameDequeued(uint32_t port, Ptr<const Packet> frame, uint8_t prio,
                       uint16_t from) override;
    void FrameReceived(uint32_t port, Ptr<Packet> frame, const ParsedFrame& f) override;
    void SendCnp(Conn& c);
    /// A frame for \p p; only data frames are sent ECN-capable, and only if \p ecnCapable.
    Ptr<Packet> Frame(const Conn& c, const TransportPacket& p, uint8_t priority, uint8_t dscp,
                      bool ecnCapable) const;

    Ptr<RoceNetDevice> m_device;
    Ipv4Address m_address;
    QpTable<Conn> m_conns{0x11};
    uint32_t m_rrQpn{0}; ///< the round robin goes on from this QPN (QpTable::IndexFrom)
    std::deque<Ptr<Packet>> m_cnps;
    EventId m_wake;

    // Attributes
    uint8_t m_priority;
    uint8_t m_dscp;
    bool m_vlan;
    bool m_ecnCapable;
    bool m_computeIcrc;
    std::string m_cc;
    Ptr<DcqcnNotificationPoint> m_np;

    uint64_t m_cnpsSent{0};
    uint64_t m_cnpsReceived{0};
    uint64_t m_ceReceived{0};
    uint64_t m_bytesReceived{0};
    TracedCallback<uint32_t> m_cnpTxTrace; ///< (QP the CNP is about)
    TracedCallback<uint32_t> m_cnpRxTrace;
    TracedCallback<uint32_t, uint64_t> m_rateTrace; ///< (QP, new DCQCN rate in bit/s)
    void OnRate(uint32_t qpn, uint64_t oldRate, uint64_t newRate);
};

} // namespace ns3

#endif
