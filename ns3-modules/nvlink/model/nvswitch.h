/*
 * An NVSwitch: ports (NvlinkPort each, one per bundle to a GPU), routing by
 * destination GPU, and an internal latency: a packet leaves Latency after it
 * has fully arrived. Its ingress credit goes back when it leaves the egress
 * port, so a busy egress backs up into the ingress buffer and then into the
 * sender: lossless, nothing dropped. Generations as presets (NvSwitchPorts):
 * gen1 18 ports, gen2 36, gen3 64, gen4 (Blackwell's NVLink Switch chip) 72. Multicast and
 * in-switch reduction (NVLS) are not modelled yet (docs/nvlink.md).
 */
#ifndef FABEMU_NVSWITCH_H
#define FABEMU_NVSWITCH_H

#include "ns3/nvlink-port.h"
#include "ns3/object.h"
#include "ns3/traced-callback.h"

#include <deque>
#include <map>
#include <vector>

namespace ns3
{

/// Ports of an NVSwitch of \p generation (1: DGX-2's 18, 2: 36, 3: HGX H100's 64, 4: 72);
/// 0 if unknown.
uint32_t NvSwitchPorts(uint32_t generation);

class NvSwitch : public Object
{
  public:
    static TypeId GetTypeId();

    /// Adds \p port and routes packets for \p gpu out of it; returns its index.
    uint32_t AddPort(Ptr<NvlinkPort> port, uint32_t gpu);
    Ptr<NvlinkPort> GetPort(uint32_t i) const { return m_ports[i]; }
    uint32_t GetNPorts() const { return static_cast<uint32_t>(m_ports.size()); }
    /// "" or why the switch cannot have this many ports.
    std::string Check() const;
    uint64_t GetForwarded() const { return m_forwarded; }

    using ForwardTracedCallback = void (*)(const NvlinkPacket& p, uint32_t in, uint32_t out);

  protected:
    void DoDispose() override;

  private:
    void Received(const NvlinkPacket& p, Ptr<NvlinkPort> in);
    void Forward(NvlinkPacket p, uint32_t in);
    void Dequeued(Ptr<NvlinkPort> out);

    Time m_latency;
    uint32_t m_generation;
    std::vector<Ptr<NvlinkPort>> m_ports;
    std::map<NvlinkPort*, uint32_t> m_index;
    std::map<uint32_t, uint32_t> m_route;       ///< GPU -> port
    std::vector<std::deque<uint32_t>> m_owners; ///< per egress: the ingress of each queued packet
    uint64_t m_forwarded{0};
    TracedCallback<const NvlinkPacket&, uint32_t, uint32_t> m_forwardTrace;
};

} // namespace ns3

#endif
