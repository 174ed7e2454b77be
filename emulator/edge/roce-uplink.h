/*
 * A real endpoint's way into the RoCEv2 model, on the bare port that
 * RoceFabricHelper gives an external host. Frames from the endpoint are tagged
 * with 802.1Q (the fabric reads their priority from the PCP) and queued on the
 * port; frames the fabric delivers are untagged again. While the edge holds
 * frames the endpoint is not reading, the uplink pauses the lossless priority
 * (PFC, when the port has it on) and renews the pause until it is told to resume.
 *
 * DCQCN on the endpoint's behalf (rxe has none), with the model's own parts: as
 * notification point a DcqcnNotificationPoint decides when a CE-marked RoCEv2
 * frame to the endpoint earns its sender a CNP; as reaction point each of the
 * endpoint's flows has a FlowPacer with its DcqcnRateControl, which CNPs for
 * that flow (consumed here) cut. A flow is (destination IPv4, destination QP):
 * the CNP carries the QP the marked frame was sent to, so both ends of a flow
 * are edges of this emulator. IPv4 only.
 */
#ifndef FABEMU_ROCE_UPLINK_H
#define FABEMU_ROCE_UPLINK_H

#include "emulator/edge/edge-uplink.h"
#include "emulator/edge/packet-recycler.h"

#include "ns3/dcqcn-notification-point.h"
#include "ns3/event-id.h"
#include "ns3/flow-pacer.h"
#include "ns3/roce-net-device.h"

#include <deque>
#include <functional>
#include <map>
#include <utility>

namespace fabemu
{

class RoceUplink : public EdgeUplink
{
  public:
    /// \param port the external host's bare port (RoceFabricHelper::GetPort)
    /// \param rocePriority the lossless priority RoCEv2 frames travel on
    RoceUplink(ns3::Ptr<ns3::RoceNetDevice> port, uint8_t rocePriority);
    ~RoceUplink() override;

    /// DCQCN for the endpoint's flows, each starting at \p lineRate; set before the run.
    void EnableDcqcn(ns3::DataRate lineRate);
    /// Called on the simulation thread with (destination IPv4 in host order, destination
    /// QP, bit/s) whenever the DCQCN rate of one of the endpoint's flows changes, first
    /// with its starting rate. Set before the simulation runs.
    using RateObserver = std::function<void(uint32_t, uint32_t, uint64_t)>;
    void SetRateObserver(RateObserver observer) { m_rateObserver = std::move(observer); }

    void Send(uint8_t* frame, size_t len, const ns3::ParsedFrame& f, uint8_t prio) override;
    void SetDeliver(std::function<void(std::vector<uint8_t>)> deliver) override
    {
        m_deliver = std::move(deliver);
    }
    uint32_t Context() const override { return m_context; }
    void HoldFabric(bool hold) override;
    void Stop() override;
    void AddCounters(EdgeCounters& c) const override;

  private:
    struct Flow
    {
        ns3::Ptr<ns3::FlowPacer> pacer;
        std::deque<ns3::Ptr<ns3::Packet>> queue;
        uint64_t queuedBytes{0};
        ns3::EventId release;
    };
    using FlowKey = std::pair<uint32_t, uint32_t>; ///< IPv4 (host order), destination QP

    void FromFabric(ns3::Ptr<ns3::RoceNetDevice>, ns3::Ptr<ns3::Packet> frame,
                    const ns3::ParsedFrame& f);
    Flow& FlowOf(uint32_t dstIpv4, uint32_t destQp);
    void Pace(Flow& flow);
    void OnFlowRate(uint32_t dstIpv4, uint32_t destQp, uint64_t before, uint64_t now);
    void SendCnp(const ns3::ParsedFrame& f, const std::vector<uint8_t>& marked);
    void RefreshPause();

    ns3::Ptr<ns3::RoceNetDevice> m_port;
    uint8_t m_rocePriority;
    uint32_t m_context;
    bool m_portPfc{false}; ///< the port honours and may send PFC
    std::function<void(std::vector<uint8_t>)> m_deliver;
    ns3::DataRate m_lineRate;
    ns3::Ptr<ns3::DcqcnNotificationPoint> m_np; ///< null: no DCQCN
    std::map<FlowKey, Flow> m_flows;            ///< reaction point: the endpoint's flows
    RateObserver m_rateObserver;
    bool m_pausing{false};
    ns3::EventId m_pauseRefresh;
    EdgeCounters m_counters;  ///< the DCQCN and PFC ones, and drops
    PacketRecycler m_packets; ///< the packets of frames from the endpoint
};

} // namespace fabemu

#endif
