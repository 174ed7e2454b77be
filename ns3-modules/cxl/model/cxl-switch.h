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
    uint32_t GetNUpstreamPorts() const { return m_up.size(); }
    uint32_t GetNDownstreamPorts() const { return m_down.size(); }

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

  protected:
    void DoDispose() override;

  private:
    void FromHost(uint32_t host, const CxlMessage& m);
    void FromDevice(uint32_t device, const CxlMessage& m);

    Time m_latency;
    std::vector<Ptr<CxlPort>> m_up;
    std::vector<Ptr<CxlPort>> m_down;
    std::map<uint32_t, std::pair<uint32_t, uint32_t>> m_hostBinding; ///< host -> (device, ld)
    std::map<std::pair<uint32_t, uint32_t>, uint32_t> m_ldOwner;     ///< (device, ld) -> host
    std::map<uint32_t, uint32_t> m_ioHost;                           ///< device -> host (CXL.io)
    TracedCallback<const CxlMessage&, uint32_t, uint32_t> m_forwardTrace;
};

} // namespace ns3

#endif
