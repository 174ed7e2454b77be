/*
 * Builds a RoCEv2 fabric from a TopologySpec: a RoceNetDevice per link end,
 * a RoceSwitch on every switch node, a RoceNic on every host (HostIpv4: 10.0.0.1 up)
 * but the external ones, which real endpoints stand for and which get a bare port,
 * ECMP host routes, MMUs sized from their ports. Attributes of the objects it
 * creates come from their TypeId defaults (Config::SetDefault, scenarios), then
 * from the helper's own Set*Attribute calls, as ns-3's helpers do (ObjectFactory).
 */
#ifndef FABEMU_ROCE_FABRIC_HELPER_H
#define FABEMU_ROCE_FABRIC_HELPER_H

#include "ns3/link-outages.h"
#include "ns3/node-container.h"
#include "ns3/object-factory.h"
#include "ns3/rdma-fabric.h"
#include "ns3/roce-nic.h"
#include "ns3/roce-switch.h"
#include "ns3/topology-spec.h"

#include <map>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace ns3
{

class PcapWriter;

class RoceFabricHelper : public RdmaFabric
{
  public:
    RoceFabricHelper();
    ~RoceFabricHelper() override;

    /// An attribute of every RoceNetDevice (port) Install creates, e.g. "PfcEnabled".
    void SetDeviceAttribute(const std::string& name, const AttributeValue& value);
    /// An attribute of every RoceNic Install creates, e.g. "CongestionControl".
    void SetNicAttribute(const std::string& name, const AttributeValue& value);
    /// An attribute of every RoceSwitch Install creates, e.g. "EcmpSeed".
    void SetSwitchAttribute(const std::string& name, const AttributeValue& value);

    /// Throws std::invalid_argument when a switch cannot be built as configured
    /// (its buffer cannot hold the reserve and headroom of its ports).
    void Install(const TopologySpec& spec);
    /// Hosts that real endpoints stand for (the emulator's edges): Install gives each
    /// a bare port (GetPort) and no RoceNic, so nothing simulated answers for them,
    /// as ns-3's TapBridgeHelper leaves a ghost node's device to the tap. Call before Install.
    void SetExternalHosts(std::vector<uint32_t> hosts) { m_external = std::move(hosts); }
    /**
     * \brief A partitioned run: node i of the topology (as TopologySpec::Nodes) belongs to
     * MPI rank \p rankOf[i] (PartitionByTier). Every rank installs the whole fabric; the
     * cables between ranks carry their frames through ns-3's MpiInterface, and Install
     * throws std::invalid_argument for one without delay (no lookahead) or where ns-3's
     * mpi module is not built. Call before Install.
     */
    void SetPartition(std::vector<uint32_t> rankOf) { m_rankOf = std::move(rankOf); }

    // RdmaFabric
    uint32_t GetNHosts() const override { return m_hostNodes.GetN(); }
    uint32_t GetHostIpv4(uint32_t host) const override { return GetHostAddress(host).Get(); }
    /// Routes \p address (e.g. an endpoint VM's IPv6 link-local address) to host \p host
    /// on every switch, along the same equal-cost next hops as its IPv4 address.
    void AddHostRoute(uint32_t host, Ipv6Address address);

    /// Creates and connects a QP on host \p a and one on host \p b.
    using RdmaFabric::Connect; // with an SL: RoCE has no SLs; the QP's priority is the NIC's
    Connection Connect(uint32_t a, uint32_t b) override;
    void Disconnect(const Connection& c) override;
    Time IdealFct(uint32_t a, uint32_t b, uint64_t bytes) const override;
    bool Reaches(uint32_t a, uint32_t b) const override { return m_spec.Reaches(a, b); }

    Ptr<Node> GetHost(uint32_t i) const { return m_hostNodes.Get(i); }
    /// Host \p i's simulated NIC; null for an external host.
    Ptr<RoceNic> GetNic(uint32_t i) const { return m_nics.at(i); }
    /// Host \p i's port on the fabric (its NIC's device, or an external host's bare port).
    Ptr<RoceNetDevice> GetPort(uint32_t i) const { return m_hostPorts.at(i); }
    Ipv4Address GetHostAddress(uint32_t i) const;
    const std::vector<Ptr<RoceSwitch>>& GetSwitches() const { return m_switches; }
    /// Writes every frame host \p host's port sends or receives (PFC included) to the
    /// pcap file \p path; the file is complete at DisablePcaps or when the helper goes.
    void EnablePcap(const std::string& path, uint32_t host);
    /// Completes and closes the pcap files EnablePcap opened.
    void DisablePcaps();
    /// Every port in the fabric, host and switch.
    const std::vector<Ptr<RoceNetDevice>>& GetDevices() const { return m_devices; }
    /**
     * \brief A PFC deadlock the fabric is stuck in, if any: a cycle of switch egress
     * (port, priority) queues, each paused with frames waiting, each pause coming from
     * an ingress buffer whose frames wait in the next queue of the cycle.
     * \return the cycle as (index in GetDevices(), priority), in the order each waits
     *         for the next; empty when there is none
     */
    std::vector<std::pair<uint32_t, uint8_t>> FindPfcDeadlock() const;
    /// Both ends of link \p link (TopologySpec::Links' order) run at \p rate from now on
    /// (a degraded link); frames already on the wire keep theirs.
    void SetLinkRate(uint32_t link, DataRate rate);
    /// Both ends of link \p link drop a frame that a bit error hits, at \p ber per bit.
    void SetLinkBitErrorRate(uint32_t link, double ber);
    /**
     * \brief Link \p link goes down (\p up false) or comes back (a fault).
     *
     * While it is down both ends lose what arrives. Each switch at its ends sees the
     * change after its LinkDetectionTime (RoceSwitch; the longer of the two): then every
     * switch's ECMP routes are those of the links up at that moment (next hops over the
     * down link withdrawn, or given back). A host that no route reaches is dropped for
     * no_route until one does.
     */
    void SetLinkUp(uint32_t link, bool up);
    /// Frames lost on links while they were down (not in GetBitErrorDrops).
    uint64_t GetLinkDownDrops() const;
    /// How many times the routes changed after a link went down or came back.
    uint32_t GetReroutes() const { return m_reroutes; }
    /// Host \p host's NIC storms PFC pauses for \p duration from now (a fault).
    void StartPauseStorm(uint32_t host, Time duration);
    /// The PFC watchdog's triggers on every port, the switches' and the hosts'.
    uint64_t GetPfcWatchdogTriggers() const;
    /// Frames every port dropped for bit errors.
    uint64_t GetBitErrorDrops() const;
    /// The bytes the live QPs have received in order (it changes whenever a flow moves, or
    /// a QP goes).
    uint64_t GetBytesReceived() const;
    /// What every QP's go-back-N did (packets sent again, timeouts), QPs already
    /// disconnected included.
    RdmaQueuePair::Recovery GetRecovery() const;

    // Fabric-wide counters.
    uint64_t TotalDrops() const;
    uint64_t TotalPfcFrames() const;
    uint64_t TotalEcnMarks() const;
    uint64_t TotalCnps() const;
    /// Switch drops for lack of buffer (buffer full, headroom overflow): what PFC must prevent.
    uint64_t CongestionDrops() const;
    /// Switch drops by reason name (SwitchDropReasonName); reasons with none are left out.
    std::map<std::string, uint64_t> DropsByReason() const;

  private:
    /// The links of one shortest path, from the source host on.
    struct Path
    {
        std::vector<DataRate> rates;
        std::vector<Time> delays;
    };
    Path PathBetween(uint32_t a, uint32_t b) const;
    /// Every switch's routes to every host (and the IPv6 routes AddHostRoute added)
    /// along \p routed's next hops (the spec with its links up or down).
    void InstallRoutes(const TopologySpec& routed);
    /// Whether SetPartition puts \p link's two ends on different ranks.
    bool CrossesRanks(const TopologySpec::Link& link) const
    {
        return !m_rankOf.empty() && m_rankOf[link.a] != m_rankOf[link.b];
    }
    /// The cable for \p link: a RoceRemoteChannel where it crosses ranks.
    Ptr<RoceChannel> NewCable(const TopologySpec::Link& link) const;
    /// Where \p link crosses ranks, frames from the far rank reach \p dev.
    void ReceiveFromOtherRanks(Ptr<RoceNetDevice> dev, const TopologySpec::Link& link);
    /// The routes of the links up now (a link went down or came back).
    void Reroute();

    TopologySpec m_spec;
    std::unordered_map<const RdmaQp*, uint32_t> m_qpHost; ///< the host of each live QP
    RdmaQueuePair::Recovery m_goneRecovery;               ///< of QPs already disconnected
    NodeContainer m_hostNodes;
    NodeContainer m_switchNodes;
    std::vector<uint32_t> m_external;
    std::vector<uint32_t> m_rankOf; ///< SetPartition's; empty: one rank
    std::vector<Ptr<RoceNic>> m_nics;
    std::vector<Ptr<RoceNetDevice>> m_hostPorts;
    std::vector<Ptr<RoceSwitch>> m_switches;
    std::vector<uint32_t> m_switchNode;                      ///< each switch's node in m_spec
    std::vector<std::pair<uint32_t, Ipv6Address>> m_routes6; ///< AddHostRoute's, by host
    LinkOutages m_outages;
    uint32_t m_reroutes{0};
    std::vector<Ptr<RoceNetDevice>> m_devices;
    uint32_t m_connections{0};
    std::vector<Ptr<PcapWriter>> m_pcaps;
    ObjectFactory m_deviceFactory;
    ObjectFactory m_nicFactory;
    ObjectFactory m_switchFactory;
};

} // namespace ns3

#endif
