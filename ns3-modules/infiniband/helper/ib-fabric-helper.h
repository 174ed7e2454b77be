/*
 * Builds an InfiniBand subnet from a TopologySpec and plays its subnet
 * manager at set-up time: an IbPort per link end (the link's rate is the data
 * rate after encoding; IbLinkRate gives it for a speed and width), an IbHca per
 * host (LID h+1), an IbSwitch per switch node (LIDs after the hosts), and
 * linear forwarding tables with min-hop routes (on a fat tree these are the
 * up/down routes); among equal next hops a switch picks by DLID, spreading
 * destinations over the uplinks as OpenSM's min-hop does. Up/down routing (OpenSM's
 * updn) is the other choice: deadlock-free on any topology (rings, tori), the same
 * routes as min-hop on fat trees and leaf-spines.
 */
#ifndef FABEMU_IB_FABRIC_HELPER_H
#define FABEMU_IB_FABRIC_HELPER_H

#include "ns3/host-address.h"
#include "ns3/ib-hca.h"
#include "ns3/ib-subnet-manager.h"
#include "ns3/ib-switch.h"
#include "ns3/link-outages.h"
#include "ns3/object-factory.h"
#include "ns3/rdma-fabric.h"
#include "ns3/simulator.h"
#include "ns3/topology-spec.h"

#include <map>
#include <unordered_map>
#include <vector>

namespace ns3
{

class IbPcapWriter;

class IbFabricHelper : public RdmaFabric
{
  public:
    IbFabricHelper();
    ~IbFabricHelper() override;

    /// An attribute of every IbPort Install creates (its DataRate comes from the link).
    void SetPortAttribute(const std::string& name, const AttributeValue& value);
    /// An attribute of every IbHca Install creates, e.g. "ServiceLevel".
    void SetHcaAttribute(const std::string& name, const AttributeValue& value);
    /// An attribute of every IbSwitch Install creates, e.g. "SwitchingLatency".
    void SetSwitchAttribute(const std::string& name, const AttributeValue& value);

    enum class Routing
    {
        MinHop, ///< shortest paths (OpenSM's default); may close credit loops on rings and tori
        UpDown, ///< up-links then down-links only (TopologySpec::UpDownNextHops); deadlock-free
    };
    /// The routing engine of the subnet manager; call before Install.
    void SetRouting(Routing r) { m_routing = r; }
    /// LID Mask Control (0..7): each host answers to 2^lmc LIDs (base LID h+1 shifted
    /// left by lmc, plus 0..2^lmc-1); switches route each of them by its own next hop,
    /// and connections take them in turn, so flows to one host spread over equal paths.
    /// Call before Install.
    void SetLmc(uint8_t lmc);
    /// Hosts that real endpoints stand for (the emulator's gateways): Install gives
    /// each a bare port (GetPort) with its LID routed (GetLid) and no IbHca. Call
    /// before Install.
    void SetExternalHosts(std::vector<uint32_t> hosts) { m_external = std::move(hosts); }
    /**
     * \brief A partitioned run: node i of the topology (as TopologySpec::Nodes) belongs to
     * MPI rank \p rankOf[i] (PartitionByTier). Every rank installs the whole fabric, on
     * one ns-3 Node per topology node, whose id is its ports' event context; the links
     * between ranks carry packets and FCPs through RemotePortDevices, and only this rank's
     * ports start. Install throws std::invalid_argument for such a link without delay (no
     * lookahead) or where ns-3's mpi module is not built. Call before Install.
     */
    void SetPartition(std::vector<uint32_t> rankOf) { m_rankOf = std::move(rankOf); }
    void Install(const TopologySpec& spec);

    // RdmaFabric
    uint32_t GetNHosts() const override { return static_cast<uint32_t>(m_hostPorts.size()); }
    uint32_t GetHostIpv4(uint32_t host) const override { return HostIpv4(host); }
    Connection Connect(uint32_t a, uint32_t b) override;
    void Disconnect(const Connection& c) override;
    Time IdealFct(uint32_t a, uint32_t b, uint64_t bytes) const override;
    bool Reaches(uint32_t a, uint32_t b) const override { return m_spec.Reaches(a, b); }

    /// A connection whose packets carry service level \p sl.
    Connection Connect(uint32_t a, uint32_t b, uint8_t sl) override;

    /// Host \p host's simulated HCA; null for an external host.
    Ptr<IbHca> GetHca(uint32_t host) const { return m_hcas.at(host); }
    /// Host \p host's port on the fabric (its HCA's, or an external host's bare port).
    Ptr<IbPort> GetPort(uint32_t host) const { return m_hostPorts.at(host); }
    /// Host \p host's base LID.
    uint16_t GetLid(uint32_t host) const { return BaseLid(host); }
    const std::vector<Ptr<IbSwitch>>& GetSwitches() const { return m_switches; }
    const std::vector<Ptr<IbPort>>& GetPorts() const { return m_ports; }
    /// Both ports of link \p link (TopologySpec::Links' order) run at \p rate from now on
    /// (a degraded link); packets already on the wire keep theirs.
    void SetLinkRate(uint32_t link, DataRate rate);
    /// Both ports of link \p link drop a packet that a bit error hits, at \p ber per bit.
    void SetLinkBitErrorRate(uint32_t link, double ber);
    /**
     * \brief Link \p link goes down (\p up false) or comes back (a fault).
     *
     * While it is down both ports lose what arrives (credits still flow: the model's
     * flow-control packets travel outside the ports' receive path). The subnet manager's
     * sweep (IbSubnetManager::SweepInterval later) then loads every switch's forwarding
     * table with the routes of the links up at that moment; a host no route reaches has
     * no entry, and packets to it are dropped for no route until a sweep gives one back.
     */
    void SetLinkUp(uint32_t link, bool up);
    /// Packets lost on links while they were down (not in GetBitErrorDrops).
    uint64_t GetLinkDownDrops() const;
    /// The subnet manager's sweeps that loaded new tables after a link changed.
    uint32_t GetSweeps() const { return m_sm ? m_sm->GetSweeps() : 0; }
    /// Packets every port dropped for bit errors (VCRC).
    uint64_t GetBitErrorDrops() const;
    /// The bytes the live QPs have received in order (it changes whenever a flow moves, or
    /// a QP goes).
    uint64_t GetBytesReceived() const;
    /// What every QP's go-back-N did (packets sent again, timeouts), QPs already
    /// disconnected included.
    RdmaQueuePair::Recovery GetRecovery() const;
    /// Writes every packet host \p host's port sends or receives to the pcap file
    /// \p path (IbPcapWriter); the file is complete at DisablePcaps or when the helper goes.
    void EnablePcap(const std::string& path, uint32_t host);
    /// Completes and closes the pcap files EnablePcap opened.
    void DisablePcaps();

    /**
     * \brief A credit loop the fabric is stuck in, if any: a cycle of (port, VL) whose
     * head packets wait for credit, each for the buffer that packets queued at the next
     * one hold (IBA's credit deadlock; what up/down routing prevents).
     * \return the cycle as (index in GetPorts(), VL), in the order each waits for the
     *         next; empty when there is none
     */
    std::vector<std::pair<uint32_t, uint8_t>> FindCreditLoop() const;
    uint64_t TotalCreditStalls() const;
    uint64_t TotalOverflows() const;
    uint64_t TotalFcps() const;
    uint64_t TotalNoRouteDrops() const;
    uint64_t TotalFecnMarks() const;
    uint64_t TotalBecns() const;

  private:
    uint16_t BaseLid(uint32_t host) const { return static_cast<uint16_t>((host + 1) << m_lmc); }
    /// Every switch's linear forwarding table from \p spec's links that are up.
    void LoadForwardingTables(const TopologySpec& spec);
    /// The subnet manager's sweep after a link changed state.
    void Sweep();
    /// SetPartition's part of Install: nodes, contexts, the links between ranks.
    void JoinRanks(const TopologySpec& spec);
    /// Whether this process simulates node \p node of the topology.
    bool Local(uint32_t node) const
    {
        return m_rankOf.empty() || m_rankOf[node] == Simulator::GetSystemId();
    }

    uint8_t m_lmc{0};
    Routing m_routing{Routing::MinHop};
    uint32_t m_connections{0};
    TopologySpec m_spec;
    std::vector<uint32_t> m_external;
    std::vector<uint32_t> m_rankOf; ///< SetPartition's; empty: one rank
    std::vector<Ptr<IbHca>> m_hcas;
    std::vector<Ptr<IbPort>> m_hostPorts;
    std::vector<Ptr<IbSwitch>> m_switches;
    std::vector<uint32_t> m_switchNode;                     ///< each switch's node in m_spec
    std::vector<std::map<uint32_t, uint32_t>> m_portOfLink; ///< each switch's port by link
    Ptr<IbSubnetManager> m_sm;
    LinkOutages m_outages;
    std::vector<Ptr<IbPort>> m_ports;
    std::unordered_map<const RdmaQp*, uint32_t> m_qpHost;
    RdmaQueuePair::Recovery m_goneRecovery; ///< of QPs already disconnected
    std::vector<Ptr<IbPcapWriter>> m_pcaps;
    ObjectFactory m_portFactory;
    ObjectFactory m_hcaFactory;
    ObjectFactory m_switchFactory;
};

} // namespace ns3

#endif
