/*
 * A CPU's side of CXL.mem: its root ports (one per CXL link), its own DRAM
 * (a CxlMemoryExpander without a link or controller), and the clients that
 * load and store through them. Clients on one port share its flits; each
 * response goes back to the client that asked (the requester it stamped).
 * CXL.io writes from devices (DMA) land in its memory; trace IoRx.
 */
#ifndef FABEMU_CXL_CPU_H
#define FABEMU_CXL_CPU_H

#include "ns3/cxl-memory-client.h"
#include "ns3/cxl-memory-expander.h"
#include "ns3/cxl-port.h"
#include "ns3/object.h"
#include "ns3/traced-callback.h"

#include <vector>

namespace ns3
{

class CxlCpu : public Object
{
  public:
    static TypeId GetTypeId();
    CxlCpu();
    ~CxlCpu() override;

    /// A new root port; connect it with CxlLink::Connect. Returns its index.
    uint32_t AddRootPort(Ptr<CxlPort> port);
    Ptr<CxlPort> GetRootPort(uint32_t i) const { return m_ports.at(i); }
    uint32_t GetNRootPorts() const { return m_ports.size(); }
    /// The CPU's own DRAM (created with the CPU; set its attributes through it).
    Ptr<CxlMemoryExpander> GetLocalMemory() const { return m_local; }

    /// Attaches \p client to root port \p port, or to the local DRAM when \p port is
    /// GetNRootPorts() or more.
    void Attach(Ptr<CxlMemoryClient> client, uint32_t port);
    static constexpr uint32_t kLocal = 0xffffffff;
    /// Payload bytes devices have written into its memory over CXL.io.
    uint64_t GetIoBytes() const { return m_ioBytes; }

    using IoTracedCallback = void (*)(const CxlMessage& tlp);

  protected:
    void DoDispose() override;

  private:
    void Receive(const CxlMessage& m);

    std::vector<Ptr<CxlPort>> m_ports;
    Ptr<CxlMemoryExpander> m_local;
    std::vector<Ptr<CxlMemoryClient>> m_clients; ///< by requester
    uint64_t m_ioBytes{0};
    TracedCallback<const CxlMessage&> m_ioTrace;
};

} // namespace ns3

#endif
