/*
 * A PCIe root complex: root ports (PciePorts), host memory behind them as a
 * completer (a PcieMemoryTarget with its Latency and Bandwidth), and
 * peer-to-peer forwarding between root ports (also back down the port a TLP
 * came from, as ACS redirect needs). Requests are routed by address (host
 * memory's range, then each root port's ranges), completions by requester
 * ID. A TLP's ingress credits go back when it leaves its egress root port,
 * or for a write to host memory when the memory has taken it.
 *
 * Peer-to-peer TLPs are forwarded ForwardLatency after their first bit
 * arrived (cut-through, as PcieSwitch). With IntelP2p, a P2P write or
 * completion leaves split into TLPs of at most P2pTlpBytes (64): NCCL's
 * INTEL_P2P_OVERHEAD ("Intel CPU convert GPU P2P traffic into 64B PCI TLPs").
 *
 * With a second socket (SetSocketLink), requests for the other socket's
 * ranges and completions for its requesters cross a PcieSocketLink; what
 * arrives from it is routed like a TLP from a root port (to host memory or
 * down a root port) but returns no credits.
 */
#ifndef FABEMU_PCIE_ROOT_COMPLEX_H
#define FABEMU_PCIE_ROOT_COMPLEX_H

#include "ns3/nstime.h"
#include "ns3/object.h"
#include "ns3/pcie-memory-target.h"
#include "ns3/pcie-port.h"
#include "ns3/pcie-routing-table.h"
#include "ns3/pcie-socket-link.h"
#include "ns3/traced-callback.h"

#include <array>
#include <deque>
#include <vector>

namespace ns3
{

class PcieRootComplex : public Object
{
  public:
    static TypeId GetTypeId();
    PcieRootComplex();

    /// Adds a root port; returns its index (0, 1, ...).
    uint32_t AddRootPort(Ptr<PciePort> port);
    /// Requests for [base, base + size) go down root port \p port.
    void AddAddressRange(uint32_t port, uint64_t base, uint64_t size);
    /// Completions for requester IDs first..last go down root port \p port.
    void AddRequesterRange(uint32_t port, uint16_t first, uint16_t last);
    /// Host memory serves requests for [base, base + size).
    void SetHostMemory(Ptr<PcieMemoryTarget> memory, uint64_t base, uint64_t size);

    /// The other socket is on \p side of \p link; its ranges go there.
    void SetSocketLink(Ptr<PcieSocketLink> link, uint32_t side);
    void AddRemoteAddressRange(uint64_t base, uint64_t size);
    void AddRemoteRequesterRange(uint16_t first, uint16_t last);

    Ptr<PciePort> GetPort(uint32_t i) const { return m_ports[i].port; }
    uint32_t GetNPorts() const { return static_cast<uint32_t>(m_ports.size()); }
    Ptr<PcieMemoryTarget> GetHostMemory() const { return m_memory; }

    /// TLPs that arrived at any root port.
    uint64_t GetTlpsReceived() const { return m_received; }
    /// TLPs sent out of a root port peer-to-peer (after splitting).
    uint64_t GetP2pTlpsSent() const { return m_p2pSent; }
    uint64_t GetTlpsUnroutable() const { return m_unroutable; }
    /// TLPs that arrived from the other socket.
    uint64_t GetTlpsFromSocket() const { return m_fromSocket; }

    using TlpRxTracedCallback = void (*)(const PcieTlp& tlp, uint32_t port);
    using ForwardTracedCallback = void (*)(const PcieTlp& tlp, uint32_t in, uint32_t out);

  protected:
    void DoDispose() override;

  private:
    static constexpr int kHostMemory = -2;
    static constexpr int kRemote = -3;
    static constexpr uint32_t kFromRemote = 0xffffffff; ///< ingress "port" of the socket link
    struct Held
    {
        uint32_t in;
        bool release; ///< the last piece of the ingress TLP: its credits go back
        PcieTlp tlp;  ///< the ingress TLP
    };
    struct Port
    {
        Ptr<PciePort> port;
        std::array<std::deque<Held>, kPcieFcTypes> held;
    };

    void Receive(uint32_t in, const PcieTlp& tlp);
    void Forward(uint32_t in, uint32_t out, PcieTlp tlp);
    void Dequeued(uint32_t out, PcieFcType type);
    void Release(uint32_t in, PcieTlp tlp);
    void ReceiveRemote(const PcieTlp& tlp);
    void SendCompletion(const PcieTlp& cpl);

    Time m_latency;
    bool m_intelP2p;
    uint32_t m_p2pTlpBytes;

    std::vector<Port> m_ports;
    PcieRoutingTable m_table;
    Ptr<PcieMemoryTarget> m_memory;
    uint64_t m_received{0};
    uint64_t m_p2pSent{0};
    uint64_t m_unroutable{0};
    uint64_t m_fromSocket{0};
    Ptr<PcieSocketLink> m_socket;
    uint32_t m_side{0};
    TracedCallback<const PcieTlp&, uint32_t> m_rxTrace;
    TracedCallback<const PcieTlp&, uint32_t, uint32_t> m_forwardTrace;
    TracedCallback<const PcieTlp&, uint32_t> m_unroutableTrace;
};

} // namespace ns3

#endif
