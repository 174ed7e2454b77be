/*
 * The link between two CPU sockets (UPI, Infinity Fabric) as a PCIe tree
 * sees it: each direction serialises TLPs (header + payload bytes, no PCIe
 * framing) at Bandwidth, one after the other, and delivers them Latency
 * later to the root complex on the other side. No credits: the receiving
 * side's buffer is unbounded; the sending root complex returns a TLP's
 * ingress credits when it has left on this link, which is what throttles
 * the PCIe side.
 */
#ifndef FABEMU_PCIE_SOCKET_LINK_H
#define FABEMU_PCIE_SOCKET_LINK_H

#include "ns3/callback.h"
#include "ns3/data-rate.h"
#include "ns3/nstime.h"
#include "ns3/object.h"
#include "ns3/pcie-tlp.h"
#include "ns3/traced-callback.h"

#include <array>

namespace ns3
{

class PcieSocketLink : public Object
{
  public:
    static TypeId GetTypeId();
    PcieSocketLink();

    /// Side 0 and 1: where TLPs sent by the other side arrive.
    void SetReceiveCallback(uint32_t side, Callback<void, const PcieTlp&> cb);
    /// Sends \p tlp from \p side; returns when its last byte has left.
    Time Send(uint32_t side, const PcieTlp& tlp);

    uint64_t GetTlpsSent(uint32_t side) const { return m_sent[side]; }

    using TlpTracedCallback = void (*)(const PcieTlp& tlp, uint32_t side);

  protected:
    void DoDispose() override;

  private:
    void Deliver(uint32_t side, PcieTlp tlp);

    DataRate m_bandwidth;
    Time m_latency;
    std::array<Time, 2> m_busyUntil{};
    std::array<uint64_t, 2> m_sent{};
    std::array<Callback<void, const PcieTlp&>, 2> m_receive;
    TracedCallback<const PcieTlp&, uint32_t> m_txTrace;
};

} // namespace ns3

#endif
