/*
 * The fabric manager of a CXL 3.x fabric of switches (port-based routing). It
 * gives every edge port (a switch's port to a host or to a device) a 12-bit port
 * ID, learns which fabric ports link which switches, programs each switch's
 * routes over the fewest switches to every edge port, and binds a host to a
 * logical device of a (multi-logical-device) expander anywhere in the fabric.
 */
#ifndef FABEMU_CXL_FABRIC_MANAGER_H
#define FABEMU_CXL_FABRIC_MANAGER_H

#include "ns3/cxl-switch.h"
#include "ns3/object.h"

#include <string>
#include <vector>

namespace ns3
{

class CxlFabricManager : public Object
{
  public:
    static TypeId GetTypeId();

    /// Port IDs are 12 bits: at most this many edge ports.
    static constexpr uint32_t kMaxPortIds = 4096;

    /// Adds \p s to the fabric; returns its index.
    uint32_t AddSwitch(Ptr<CxlSwitch> s);
    /// Links switches \p a and \p b: a fabric port of each, created here; connect them
    /// with a CxlLink. Returns the two ports (a's, b's).
    std::pair<Ptr<CxlPort>, Ptr<CxlPort>> Link(uint32_t a, uint32_t b);
    /**
     * \brief Gives upstream port \p port of switch \p s (toward a host) the next port ID.
     * \return "" or why not: no such switch or port, or all 4096 IDs taken.
     */
    std::string AddHost(uint32_t s, uint32_t port, uint16_t* pid);
    /// The same for downstream port \p port of switch \p s (toward a device).
    std::string AddDevice(uint32_t s, uint32_t port, uint16_t* pid);
    /**
     * \brief Binds host edge port \p hostPid to logical device \p ld of device edge port
     * \p devicePid. Every switch's routes, over the fewest switches, are (re)programmed
     * at a Bind after the fabric changed (AddSwitch, Link, AddHost, AddDevice): add every
     * port before the last Bind. Every switch must be reachable.
     * \return "" or why not (an unknown ID, the wrong kind of port, a bound port or
     * logical device, switches that no link joins); nothing changes then.
     */
    std::string Bind(uint16_t hostPid, uint16_t devicePid, uint32_t ld);
    /// The switches a message from \p fromPid to \p toPid crosses; 0 when no link joins
    /// their switches.
    uint32_t GetHops(uint16_t fromPid, uint16_t toPid) const;

  protected:
    void DoDispose() override;

  private:
    /// One edge port: its switch, its index among that switch's upstream or downstream
    /// ports, and which of the two.
    struct Edge
    {
        uint32_t sw{0};
        uint32_t port{0};
        bool host{false};
    };
    std::string AddEdge(uint32_t s, uint32_t port, bool host, uint16_t* pid);
    /// Fills every switch's routes; "" or why not.
    std::string Program();
    /// Switch-to-switch distances and the first fabric port of a shortest way, from \p s.
    std::vector<uint32_t> Distances(uint32_t s, std::vector<Ptr<CxlPort>>* firstPort) const;

    struct Neighbour
    {
        uint32_t sw{0};
        Ptr<CxlPort> port; ///< this switch's fabric port toward it
    };
    std::vector<Ptr<CxlSwitch>> m_switches;
    std::vector<std::vector<Neighbour>> m_links; ///< by switch
    std::vector<Edge> m_edges;                   ///< by port ID
    bool m_programmed{false};
};

} // namespace ns3

#endif
