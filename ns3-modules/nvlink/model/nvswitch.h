/*
 * An NVSwitch: ports (NvlinkPort each, one per bundle to a GPU), routing by
 * destination GPU, and an internal latency: a packet leaves Latency after it
 * has fully arrived. Its ingress credit goes back when it leaves the egress
 * port, so a busy egress backs up into the ingress buffer and then into the
 * sender: lossless, nothing dropped. Generations as presets (NvSwitchPorts):
 * gen1 18 ports, gen2 36, gen3 64, gen4 (Blackwell's NVLink Switch chip) 72.
 *
 * NVLS (gen3 on: NVLink SHARP): a Reduce packet is summed with the same bytes
 * of the other contributors, its ingress credit returned once it is in the sum;
 * the sum goes to its GPU when the last contribution is in, which holds its
 * credit until the sum has left. A Multicast packet
 * is copied to every GPU of its group, its ingress credit returned when the last
 * copy has left. What the switch makes costs NvlsEfficiency of the egress link's
 * rate (docs/nvlink.md, "NVLS").
 */
#ifndef FABEMU_NVSWITCH_H
#define FABEMU_NVSWITCH_H

#include "ns3/nvlink-port.h"
#include "ns3/object.h"
#include "ns3/traced-callback.h"

#include <deque>
#include <map>
#include <memory>
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
    /// Whether this generation sums and multicasts in the switch (NVLS: gen3 on).
    bool OffersNvls() const { return m_generation >= 3; }
    /// Multicast packets of transfer \p group go to these GPUs; until RemoveGroup.
    void AddGroup(uint64_t group, const std::vector<uint32_t>& gpus) { m_groups[group] = gpus; }
    void RemoveGroup(uint64_t group) { m_groups.erase(group); }
    /// Sums made (one per set of contributions) and multicast copies sent.
    uint64_t GetReduced() const { return m_reduced; }
    uint64_t GetMulticastCopies() const { return m_copies; }

    using ForwardTracedCallback = void (*)(const NvlinkPacket& p, uint32_t in, uint32_t out);
    using ReduceTracedCallback = void (*)(const NvlinkPacket& sum);

  protected:
    void DoDispose() override;

  private:
    /// Who gets an egress packet's ingress credit back when it leaves.
    struct Owner
    {
        uint32_t in;                      ///< kNone: nobody (a sum)
        std::shared_ptr<uint32_t> copies; ///< multicast: copies still queued
    };
    static constexpr uint32_t kNone = 0xFFFFFFFFu;

    void Received(const NvlinkPacket& p, Ptr<NvlinkPort> in);
    void Forward(NvlinkPacket p, uint32_t in);
    void Sum(const NvlinkPacket& p, uint32_t in);
    void Copy(const NvlinkPacket& p, uint32_t in);
    void Emit(NvlinkPacket p, uint32_t out, Owner owner);
    void Dequeued(Ptr<NvlinkPort> out);

    Time m_latency;
    uint32_t m_generation;
    double m_nvlsEfficiency;
    std::vector<Ptr<NvlinkPort>> m_ports;
    std::map<NvlinkPort*, uint32_t> m_index;
    std::map<uint32_t, uint32_t> m_route;    ///< GPU -> port
    std::vector<std::deque<Owner>> m_owners; ///< per egress, each queued packet's
    std::map<uint64_t, std::vector<uint32_t>> m_groups;
    std::map<std::pair<uint64_t, uint64_t>, uint32_t> m_sums; ///< (transfer, offset) -> summed
    uint64_t m_forwarded{0};
    uint64_t m_reduced{0};
    uint64_t m_copies{0};
    TracedCallback<const NvlinkPacket&, uint32_t, uint32_t> m_forwardTrace;
    TracedCallback<const NvlinkPacket&> m_reduceTrace;
};

} // namespace ns3

#endif
