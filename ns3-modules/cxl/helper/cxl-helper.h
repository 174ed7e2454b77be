/*
 * Builds CXL memory systems: a host's load/store client joined by a CXL link
 * to a Type-3 memory expander, with every part's attributes set beforehand
 * as ns-3 helpers do.
 */
#ifndef FABEMU_CXL_HELPER_H
#define FABEMU_CXL_HELPER_H

#include "ns3/cxl-cpu.h"
#include "ns3/cxl-dma-engine.h"
#include "ns3/cxl-fabric-manager.h"
#include "ns3/cxl-link.h"
#include "ns3/cxl-memory-client.h"
#include "ns3/cxl-memory-expander.h"
#include "ns3/cxl-switch.h"
#include "ns3/object-factory.h"

#include <string>
#include <vector>

namespace ns3
{

class CxlHelper
{
  public:
    CxlHelper();

    void SetLinkAttribute(const std::string& name, const AttributeValue& value);
    void SetExpanderAttribute(const std::string& name, const AttributeValue& value);
    void SetClientAttribute(const std::string& name, const AttributeValue& value);
    void SetSwitchAttribute(const std::string& name, const AttributeValue& value);

    /// A client, its link and the expander at its other end.
    struct Direct
    {
        Ptr<CxlMemoryClient> client;
        Ptr<CxlLink> link;
        Ptr<CxlMemoryExpander> expander;
        std::string error; ///< why nothing was built ("" when built)
        bool Ok() const { return error.empty(); }
    };

    /// One host attached directly (no switch) to one expander.
    Direct InstallDirect() const;

    /// Hosts that pool one multi-logical-device expander through a switch.
    struct Pool
    {
        std::vector<Ptr<CxlMemoryClient>> clients;
        std::vector<Ptr<CxlLink>> hostLinks; ///< host i to the switch
        Ptr<CxlSwitch> cxlSwitch;
        Ptr<CxlLink> deviceLink; ///< the switch to the expander
        Ptr<CxlMemoryExpander> expander;
        std::string error;
        bool Ok() const { return error.empty(); }
    };

    /// \p hosts hosts, each bound by the fabric manager to its own logical device of one
    /// expander behind a switch; every link has the link attributes.
    Pool InstallPool(uint32_t hosts) const;

    /// A CPU root port shared by an expander and a GPU below one switch: the expander's
    /// CXL.mem and the GPU's CXL.io DMA cross the same link to the host.
    struct SharedPort
    {
        Ptr<CxlCpu> cpu;
        Ptr<CxlLink> rootLink;                 ///< the root port to the switch: the shared link
        std::vector<Ptr<CxlLink>> deviceLinks; ///< the switch to the expander, to the GPU
        Ptr<CxlSwitch> cxlSwitch;
        Ptr<CxlMemoryExpander> expander;
        Ptr<CxlDmaEngine> gpu;
        std::string error;
        bool Ok() const { return error.empty(); }
    };

    /// Builds a SharedPort; clients attach with cpu->Attach(client, 0).
    SharedPort InstallSharedPort() const;

    /// Servers with CXL memory: each CPU with its expanders on root ports, and the CPUs of
    /// the pool's servers on one switch in front of a multi-logical-device expander.
    struct Servers
    {
        std::vector<Ptr<CxlCpu>> cpus;
        /// By server, expander k (cxlK) and the link to it (on the CPU's root port k).
        std::vector<std::vector<Ptr<CxlMemoryExpander>>> expanders;
        std::vector<std::vector<Ptr<CxlLink>>> links;
        /// By server and expander, where a device shares the root port (a CXL switch on
        /// it, links[h][k] its link to the CPU): the switch's link to the expander, the
        /// switch, and the device's end of its link (for a CxlDmaEngine); null elsewhere.
        std::vector<std::vector<Ptr<CxlLink>>> expanderLinks;
        std::vector<std::vector<Ptr<CxlLink>>> deviceLinks;
        std::vector<std::vector<Ptr<CxlSwitch>>> portSwitches;
        std::vector<std::vector<Ptr<CxlPort>>> devicePorts;
        Ptr<CxlSwitch> poolSwitch; ///< null without a pool
        Ptr<CxlMemoryExpander> pool;
        Ptr<CxlLink> poolLink;                   ///< the switch to the pool's expander
        std::vector<Ptr<CxlLink>> poolHostLinks; ///< each pool host's root port to the switch
        std::vector<uint32_t> poolRootPort; ///< by server: its root port to the switch, or kLocal
        /// A multi-level pool (CXL 3.x): the switches the pool's hosts sit on, each linked
        /// to the pool's switch, and the fabric manager that routes between them.
        std::vector<Ptr<CxlSwitch>> leafSwitches;
        std::vector<Ptr<CxlLink>> fabricLinks; ///< leaf switch k to the pool's switch
        Ptr<CxlFabricManager> manager;
        std::string error;
        bool Ok() const { return error.empty(); }
        /// Every link of the servers and the pool.
        std::vector<Ptr<CxlLink>> AllLinks() const;
        /// Disposes all it built (its parts point at each other).
        void Dispose();
    };

    /**
     * \brief \p servers servers with \p expanders expanders each; the servers in \p pool
     * (each bound to its own logical device, in order) share one more expander through a
     * switch when \p hasPool. With \p leaves (CXL 3.x), the pool's servers sit on
     * switches of their own, leaf k holding the servers \p leaves[k] lists, each leaf
     * linked to the pool's switch; a fabric manager gives the edge ports their IDs and
     * routes by them. Expander k with \p shared[k] sits under a CXL switch on its root
     * port beside a device (a GPU's DMA over CXL.io), as InstallSharedPort builds it.
     */
    Servers InstallServers(uint32_t servers, uint32_t expanders, bool hasPool,
                           const std::vector<uint32_t>& pool,
                           const std::vector<std::vector<uint32_t>>& leaves = {},
                           const std::vector<bool>& shared = {}) const;

    /// The idle latency of one read through \p d, summed from its parts: the host's round
    /// trip, the link's delay both ways, one request flit and the two flits a line's
    /// header and data take back, the controller, one line's DRAM time and the DRAM's
    /// latency.
    static Time IdleReadLatency(const Direct& d);
    /// The same for any path: \p host (the client's HostLatency), then the links of
    /// \p path and \p switchLatency (each way) for each switch between them, to \p memory.
    static Time IdleReadLatency(Time host, const std::vector<Ptr<CxlLink>>& path,
                                Time switchLatency, Ptr<CxlMemoryExpander> memory, bool rowHit);

  private:
    /// InstallServers' multi-level pool: the leaf switches, their links to the pool's
    /// switch, the pool's hosts on them, and the fabric manager's IDs and bindings.
    std::string AddLeaves(Servers& out, const std::vector<uint32_t>& pool,
                          const std::vector<std::vector<uint32_t>>& leaves) const;

    ObjectFactory m_link;
    ObjectFactory m_expander;
    ObjectFactory m_client;
    ObjectFactory m_switch;
};

} // namespace ns3

#endif
