/*
 * An InfiniBand switch: ports with per-VL input buffers (IbPort's receive
 * side), a linear forwarding table (DLID -> output port) filled by the subnet
 * manager, SL-to-VL tables per (input, output) port, and virtual cut-through:
 * a packet may leave once its head is in and the switching latency has
 * passed, and it holds its input buffer until its tail has left.
 */
#ifndef FABEMU_IB_SWITCH_H
#define FABEMU_IB_SWITCH_H

#include "ns3/ib-port.h"
#include "ns3/nstime.h"
#include "ns3/object.h"
#include "ns3/traced-callback.h"

#include <algorithm>
#include <map>
#include <vector>

namespace ns3
{

class IbSwitch : public Object
{
  public:
    static TypeId GetTypeId();
    IbSwitch();

    uint32_t AddPort(Ptr<IbPort> port);
    Ptr<IbPort> GetPort(uint32_t i) const { return m_ports.at(i); }
    uint32_t GetNPorts() const { return static_cast<uint32_t>(m_ports.size()); }
    /// The linear forwarding table: packets to \p dlid leave through \p port.
    void SetRoute(uint16_t dlid, uint32_t port);
    /// Empties the linear forwarding table (before the subnet manager loads a new one).
    void ClearRoutes() { std::fill(m_lft.begin(), m_lft.end(), -1); }
    /// SL-to-VL for packets from \p in to \p out (default: VL = SL mod the output's data VLs).
    void SetSl2Vl(uint32_t in, uint32_t out, uint8_t sl, uint8_t vl);
    uint64_t GetNoRouteDrops() const { return m_noRoute; }
    uint64_t GetFecnMarks() const { return m_fecnMarks; }

  protected:
    void DoDispose() override;

  private:
    void Receive(uint32_t in, Ptr<IbPort> port, Ptr<Packet> p, uint8_t vl, Time tail);

    bool MarkFecn(Ptr<IbPort> out, uint8_t vl);

    Time m_latency;
    bool m_ccEnabled;
    uint32_t m_ccThreshold;
    uint32_t m_markingRate;
    uint32_t m_sinceMark{0};
    uint64_t m_fecnMarks{0};
    TracedCallback<uint32_t, uint8_t> m_fecnTrace; ///< output port, VL
    std::vector<Ptr<IbPort>> m_ports;
    std::vector<int32_t> m_lft; ///< by DLID; -1: no route
    std::map<std::tuple<uint32_t, uint32_t, uint8_t>, uint8_t> m_sl2vl;
    uint64_t m_noRoute{0};
};

} // namespace ns3

#endif
