/*
 * A PCIe switch: one upstream port and downstream ports, each a PciePort
 * whose advertised credits (its Init* attributes) are its ingress buffer per
 * credit class. Requests are routed by address (each downstream port owns
 * the ranges of what sits below it; anything else goes upstream), completions
 * by requester ID. A TLP's ingress credits go back when it leaves the egress
 * port, so a blocked egress backs up into the ingress buffer and then the
 * link before it.
 *
 * Cut-through: a TLP's first bit leaves Latency after its first bit arrived
 * (Latency is the datasheets' port-to-port figure). The model learns of a TLP
 * when its last bit is in, so it forwards it max(0, Latency - its ingress
 * wire time) later: one TLP through one switch takes Latency + one
 * serialisation + the two links' propagation delays.
 *
 * ACS P2P redirect (AcsRedirect): a TLP from one downstream port to another
 * goes upstream instead, to the root complex, which routes it back down.
 */
#ifndef FABEMU_PCIE_SWITCH_H
#define FABEMU_PCIE_SWITCH_H

#include "ns3/nstime.h"
#include "ns3/object.h"
#include "ns3/pcie-port.h"
#include "ns3/pcie-routing-table.h"
#include "ns3/traced-callback.h"

#include <array>
#include <deque>
#include <vector>

namespace ns3
{

class PcieSwitch : public Object
{
  public:
    static TypeId GetTypeId();
    PcieSwitch();

    static constexpr uint32_t kUpstream = 0;
    /// The upstream port is port 0.
    void SetUpstreamPort(Ptr<PciePort> port);
    /// Adds a downstream port; returns its index (1, 2, ...).
    uint32_t AddDownstreamPort(Ptr<PciePort> port);
    /// Requests for [base, base + size) go down port \p port.
    void AddAddressRange(uint32_t port, uint64_t base, uint64_t size);
    /// Completions for requester IDs first..last go down port \p port.
    void AddRequesterRange(uint32_t port, uint16_t first, uint16_t last);

    Ptr<PciePort> GetPort(uint32_t i) const { return m_ports[i].port; }
    uint32_t GetNPorts() const { return static_cast<uint32_t>(m_ports.size()); }
    Time GetLatency() const { return m_latency; }

    uint64_t GetTlpsForwarded() const { return m_forwarded; }
    /// Peer-to-peer TLPs sent upstream by ACS redirect.
    uint64_t GetTlpsRedirected() const { return m_redirected; }
    /// TLPs no port claims (dropped, credits returned).
    uint64_t GetTlpsUnroutable() const { return m_unroutable; }

    using ForwardTracedCallback = void (*)(const PcieTlp& tlp, uint32_t in, uint32_t out);
    using UnroutableTracedCallback = void (*)(const PcieTlp& tlp, uint32_t in);

  protected:
    void DoDispose() override;

  private:
    struct Held
    {
        uint32_t in;
        PcieTlp tlp;
    };
    struct Port
    {
        Ptr<PciePort> port;
        std::array<std::deque<Held>, kPcieFcTypes> held; ///< TLPs queued for egress, by type
    };

    void Wire(uint32_t i);
    void Receive(uint32_t in, const PcieTlp& tlp);
    void Forward(uint32_t in, uint32_t out, PcieTlp tlp);
    void Dequeued(uint32_t out, PcieFcType type);

    Time m_latency;
    bool m_acsRedirect;

    std::vector<Port> m_ports;
    PcieRoutingTable m_table;
    uint64_t m_forwarded{0};
    uint64_t m_redirected{0};
    uint64_t m_unroutable{0};
    TracedCallback<const PcieTlp&, uint32_t, uint32_t> m_forwardTrace;
    TracedCallback<const PcieTlp&, uint32_t> m_unroutableTrace;
};

} // namespace ns3

#endif
