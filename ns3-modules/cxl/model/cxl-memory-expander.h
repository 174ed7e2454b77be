/*
 * A CXL Type-3 memory expander: a controller with a fixed pipeline latency
 * and DRAM that moves one 64-byte line at a time at its bandwidth, then
 * answers after its access latency. A read (M2S Req) is answered with the
 * line (S2M DRS), a write (M2S RwD) with a completion (S2M NDR), on the port
 * the request came in by. Several ports make a multi-headed device; logical
 * devices (MLD) partition it for pooling and share its DRAM. Serve() answers a
 * requester without a link: a CPU's own DRAM is this class with no controller.
 */
#ifndef FABEMU_CXL_MEMORY_EXPANDER_H
#define FABEMU_CXL_MEMORY_EXPANDER_H

#include "ns3/cxl-message.h"
#include "ns3/cxl-port.h"
#include "ns3/data-rate.h"
#include "ns3/object.h"
#include "ns3/traced-callback.h"

#include <vector>

namespace ns3
{

class CxlMemoryExpander : public Object
{
  public:
    static TypeId GetTypeId();
    CxlMemoryExpander();
    ~CxlMemoryExpander() override;

    /// A new device-side port (a head); connect it with CxlLink::Connect.
    Ptr<CxlPort> AddPort();
    Ptr<CxlPort> GetPort(uint32_t i) const { return m_ports.at(i); }
    /// Takes request \p m and calls \p reply with the response when it is ready (\p reply
    /// first, so that a requester can bind it).
    void Serve(Callback<void, const CxlMessage&> reply, const CxlMessage& m);
    uint32_t GetNPorts() const { return m_ports.size(); }

    Time GetControllerLatency() const { return m_controllerLatency; }
    /// The DRAM's access latency: a row miss (random), or a hit in an open row (streaming).
    Time GetDramLatency(bool rowHit = false) const
    {
        return rowHit ? m_rowHitLatency : m_dramLatency;
    }
    /// Time the DRAM takes to move one 64-byte line.
    Time GetLineTime() const;
    uint32_t GetLogicalDevices() const { return m_logicalDevices; }
    uint64_t GetReads() const { return m_reads; }
    uint64_t GetWrites() const { return m_writes; }

    /// A request's wait for the DRAM behind earlier ones.
    using AccessTracedCallback = void (*)(const CxlMessage& request, Time dramWait);

  protected:
    void DoDispose() override;

  private:
    void Receive(Ptr<CxlPort> port, const CxlMessage& m);
    /// Reserves the DRAM for \p m; returns when its response is ready.
    Time Access(const CxlMessage& m);

    Time m_controllerLatency;
    Time m_dramLatency;
    Time m_rowHitLatency;
    DataRate m_dramRate;
    uint32_t m_logicalDevices;
    std::vector<Ptr<CxlPort>> m_ports;
    Time m_dramFree;
    uint64_t m_reads{0};
    uint64_t m_writes{0};
    TracedCallback<const CxlMessage&, Time> m_accessTrace;
};

} // namespace ns3

#endif
