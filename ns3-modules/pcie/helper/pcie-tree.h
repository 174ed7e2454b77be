/*
 * A PCIe tree as PcieHelper::InstallTree builds it: a root complex with host
 * memory ("mem"), switches under root ports, endpoints (GPUs, NICs, NVMe
 * drives) under switches or root ports, every element by name. With two
 * sockets, a second root complex with host memory "mem1", joined to the
 * first by a PcieSocketLink. Each endpoint
 * owns a window of the address space (its memory) and a requester ID (its bus).
 *
 * The transfer API moves bytes from any endpoint's DMA engine to or from any
 * memory (host memory or an endpoint's): a write is done when its last byte
 * has been taken by the destination memory, a read when its last completion
 * byte is back at the initiator. The callback gets a PcieTransfer (id, bytes,
 * started, completed): what a `dma` workload needs to become a flow.
 */
#ifndef FABEMU_PCIE_TREE_H
#define FABEMU_PCIE_TREE_H

#include "ns3/callback.h"
#include "ns3/object.h"
#include "ns3/pcie-endpoint.h"
#include "ns3/pcie-link.h"
#include "ns3/pcie-root-complex.h"
#include "ns3/pcie-switch.h"

#include <map>
#include <string>
#include <vector>

namespace ns3
{

enum class PcieDeviceKind : uint8_t
{
    Gpu,
    Nic,
    Nvme
};

/// What InstallTree builds: switches on root ports, devices under them or on root ports.
struct PcieTreeSpec
{
    /// 0: the helper's link attribute (Generation, Width).
    struct LinkSpec
    {
        uint32_t generation{0};
        uint32_t width{0};
    };
    struct Device
    {
        std::string name; ///< empty: gpu0, gpu1, nic0, nvme0, ... in order
        PcieDeviceKind kind{PcieDeviceKind::Gpu};
        LinkSpec link;
        uint32_t socket{0}; ///< root devices only: the socket whose root port it is on
    };
    struct Switch
    {
        std::string name; ///< empty: sw0, sw1, ...
        LinkSpec upstream;
        std::vector<Device> devices;
        uint32_t socket{0}; ///< the socket whose root port it is on
    };
    std::vector<Switch> switches;                ///< each on its own root port
    std::vector<Device> rootDevices;             ///< each on its own root port, after the switches
    uint64_t hostMemoryBytes{uint64_t(1) << 40}; ///< per socket: "mem" at 0, "mem1" after it
    uint32_t sockets{1}; ///< 2: a second root complex joined by a PcieSocketLink
    uint64_t deviceWindowBytes{uint64_t(1) << 36}; ///< each device's memory window
};

class PcieTree : public Object
{
  public:
    static TypeId GetTypeId();
    PcieTree();

    /// The base address of each device's window, and of host memory (0).
    static constexpr uint64_t kDeviceBase = uint64_t(1) << 44;

    Ptr<PcieRootComplex> GetRootComplex(uint32_t socket = 0) const
    {
        return socket == 0 ? m_rc : m_rc1;
    }
    Ptr<PcieSocketLink> GetSocketLink() const { return m_socketLink; }
    Ptr<PcieSwitch> GetSwitch(const std::string& name) const;
    Ptr<PcieEndpoint> GetEndpoint(const std::string& name) const;
    /// The link above an endpoint or a switch, by its name.
    Ptr<PcieLink> GetLink(const std::string& name) const;
    /// "mem" or an endpoint's name: its memory's base address (false if unknown).
    bool GetBase(const std::string& memory, uint64_t& base, uint64_t& size) const;
    std::vector<std::string> GetEndpointNames() const;

    /// "" if \p from is an endpoint, \p to a memory and [offset, offset + bytes) inside it.
    std::string CheckTransfer(const std::string& from, const std::string& to, uint64_t offset,
                              uint64_t bytes) const;
    /// DMA write by \p from (its engine with the fewest transfers in progress) into memory \p to at
    /// \p offset; 0 (and nothing done) if CheckTransfer fails. \p done gets the transfer when its
    /// last byte is in \p to.
    uint64_t Write(const std::string& from, const std::string& to, uint64_t offset, uint64_t bytes,
                   Callback<void, const PcieTransfer&> done);
    /// DMA read by \p from out of memory \p to; \p done when the last byte is back.
    uint64_t Read(const std::string& from, const std::string& to, uint64_t offset, uint64_t bytes,
                  Callback<void, const PcieTransfer&> done);

    /// Bytes of transfer \p id (as Write or Read by \p from returned it) that have arrived:
    /// taken by the destination memory (write) or back at \p from (read); 0 once it is
    /// done or if it is unknown.
    uint64_t GetDelivered(const std::string& from, uint64_t id) const;

    // Building (PcieHelper::InstallTree).
    void SetRootComplex(Ptr<PcieRootComplex> rc, Ptr<PcieMemoryTarget> host, uint64_t size);
    void SetSecondSocket(Ptr<PcieRootComplex> rc, Ptr<PcieMemoryTarget> host, uint64_t base,
                         uint64_t size, Ptr<PcieSocketLink> link);
    void AddSwitch(const std::string& name, Ptr<PcieSwitch> sw, Ptr<PcieLink> up);
    void AddEndpoint(const std::string& name, Ptr<PcieEndpoint> e, Ptr<PcieLink> up, uint64_t base,
                     uint64_t size);

  protected:
    void DoDispose() override;

  private:
    struct Pending
    {
        PcieTransfer t;
        uint64_t remaining;
        Callback<void, const PcieTransfer&> done;
        Ptr<PcieDmaEngine> dma;
    };
    static uint64_t Key(uint16_t requester, uint64_t id) { return uint64_t(requester) << 48 | id; }
    void Written(const PcieTlp& tlp, Time taken);
    void EngineDone(uint16_t requester, const PcieTransfer& t);
    void Report(uint64_t key, Time at);

    Ptr<PcieRootComplex> m_rc;
    Ptr<PcieMemoryTarget> m_host;
    Ptr<PcieRootComplex> m_rc1;
    Ptr<PcieMemoryTarget> m_host1;
    Ptr<PcieSocketLink> m_socketLink;
    uint64_t m_hostSize{0};
    std::map<std::string, Ptr<PcieSwitch>> m_switches;
    std::map<std::string, Ptr<PcieEndpoint>> m_endpoints;
    std::map<std::string, Ptr<PcieLink>> m_links;
    std::map<std::string, std::pair<uint64_t, uint64_t>> m_windows;
    std::vector<std::string> m_order;
    std::map<uint64_t, Pending> m_pending;
};

} // namespace ns3

#endif
