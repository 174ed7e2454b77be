/*
 * A CXL 2.0 switch for memory pooling: upstream ports toward hosts,
 * downstream ports toward (multi-logical-device) expanders, and the binding
 * a fabric manager makes of one logical device to each host. A host's M2S
 * messages go, after Latency, to the downstream port of its bound device,
 * stamped with that logical device; S2M messages go back to the host the
 * (port, logical device) is bound to. A device without logical devices (a GPU
 * whose DMA is CXL.io) is bound whole to a host (BindDevice); its TLPs go up
 * to that host. Queues are those of the ports; the
 * hosts' outstanding limits keep them bounded (credits between the switch and
 * its ports are not modelled).
 *
 * CXL 3.x port-based routing joins switches into a multi-level fabric: fabric
 * ports link switches, every edge port (to a host or a device) has a 12-bit port
 * ID, and a CxlFabricManager programs each switch's routes (port ID -> port) and
 * the bindings at the edges. A host's message enters with its logical device and
 * the two edge ports' IDs stamped on it and crosses each switch by its
 * destination ID.
 */
#ifndef FABEMU_CXL_SWITCH_H
#define FABEMU_CXL_SWITCH_H

#include "ns3/cxl-port.h"
#include "ns3/nstime.h"
#include "ns3/object.h"

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace ns3
{

class CxlSwitch : public Object
{
  public:
    static TypeId GetTypeId();
    CxlSwitch();
    ~CxlSwitch() override;

    /// A new port toward a host, and its index among upstream ports.
    Ptr<CxlPort> AddUpstreamPort();
    /// A new port toward a device, and its index among downstream ports.
    Ptr<CxlPort> AddDownstreamPort();
    /// A new port toward another switch (port-based routing).
    Ptr<CxlPort> AddFabricPort();
    uint32_t GetNUpstreamPorts() const { return m_up.size(); }
    uint32_t GetNDownstreamPorts() const { return m_down.size(); }
    Ptr<CxlPort> GetUpstreamPort(uint32_t i) const { return m_up.at(i); }
    Ptr<CxlPort> GetDownstreamPort(uint32_t i) const { return m_down.at(i); }

    /// Port-based routing: messages for edge port ID \p pid leave by \p port, one of this
    /// switch's.
    void SetRoute(uint16_t pid, Ptr<CxlPort> port);
    /**
     * \brief Port-based routing at a host's edge: upstream port \p host (edge port ID
     * \p hostPid) reaches logical device \p ld of the device whose edge port ID is
     * \p devicePid.
     */
    std::string BindRemote(uint32_t host, uint16_t hostPid, uint16_t devicePid, uint32_t ld);
    /// Port-based routing at a device's edge: logical device \p ld of downstream port
    /// \p device (edge port ID \p devicePid) answers the host whose edge port ID is \p hostPid.
    std::string SetOwner(uint32_t device, uint16_t devicePid, uint32_t ld, uint16_t hostPid);
    /// Whether upstream port \p host is bound (here or across the fabric).
    bool IsHostBound(uint32_t host) const;
    /// Whether logical device \p ld of downstream port \p device has its host.
    bool IsDeviceBound(uint32_t device, uint32_t ld) const;

    /**
     * \brief The fabric manager's binding: upstream port \p host reaches logical device
     * \p ld of the device on downstream port \p device.
     * \return "" or why not (a port that does not exist, a host already bound, a logical
     * device bound to another host).
     */
    std::string Bind(uint32_t host, uint32_t device, uint32_t ld);
    /// The device on downstream port \p device sends its CXL.io (DMA) up to \p host.
    std::string BindDevice(uint32_t host, uint32_t device);

    using ForwardTracedCallback = void (*)(const CxlMessage& m, uint32_t upstream,
                                           uint32_t downstream);
    using RouteTracedCallback = void (*)(const CxlMessage& m);

  protected:
    void DoDispose() override;

  private:
    void FromHost(uint32_t host, const CxlMessage& m);
    void FromDevice(uint32_t device, const CxlMessage& m);
    /// Port-based routing: \p m leaves by its destination ID's port.
    void Route(const CxlMessage& m);

    /// A host's binding across the fabric.
    struct Remote
    {
        uint16_t hostPid{0};
        uint16_t devicePid{0};
        uint32_t ld{0};
    };

    Time m_latency;
    std::vector<Ptr<CxlPort>> m_up;
    std::vector<Ptr<CxlPort>> m_down;
    std::map<uint32_t, std::pair<uint32_t, uint32_t>> m_hostBinding; ///< host -> (device, ld)
    std::map<std::pair<uint32_t, uint32_t>, uint32_t> m_ldOwner;     ///< (device, ld) -> host
    std::map<uint32_t, uint32_t> m_ioHost;                           ///< device -> host (CXL.io)
    std::vector<Ptr<CxlPort>> m_fabric;
    std::map<uint16_t, Ptr<CxlPort>> m_routes; ///< edge port ID -> port
    std::map<uint32_t, Remote> m_remote;       ///< host -> its binding
    /// (device, ld) -> (the device's edge port ID, its host's)
    std::map<std::pair<uint32_t, uint32_t>, std::pair<uint16_t, uint16_t>> m_remoteOwner;
    TracedCallback<const CxlMessage&, uint32_t, uint32_t> m_forwardTrace;
    TracedCallback<const CxlMessage&> m_routeTrace;
};

} // namespace ns3

#endif
