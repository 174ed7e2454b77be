/*
 * The memory behind an endpoint, as a completer: requests are served one
 * after the other at Bandwidth (0: at once); a read's completions leave
 * Latency after its data has been served. Completions carry at most Max
 * Payload Size and end on Read Completion Boundary-aligned addresses, except
 * the last (or, with SplitAtRcb, carry one RCB each, as many root complexes do).
 */
#ifndef FABEMU_PCIE_MEMORY_TARGET_H
#define FABEMU_PCIE_MEMORY_TARGET_H

#include "pcie-tlp.h"

#include "ns3/data-rate.h"
#include "ns3/nstime.h"
#include "ns3/object.h"

#include <string>

namespace ns3
{

class PciePort;

class PcieMemoryTarget : public Object
{
  public:
    static TypeId GetTypeId();
    PcieMemoryTarget();

    /// "" if the attributes are ones the spec allows, else the first problem.
    std::string Check() const;
    void SetPort(Ptr<PciePort> port) { m_port = port; }

    /// A posted write of \p bytes: returns when the memory has taken it.
    Time Write(uint32_t bytes);
    /// A read request: its completions go out through the port.
    void Read(const PcieTlp& request);

    uint64_t GetBytesWritten() const { return m_written; }
    uint64_t GetCompletionsSent() const { return m_completions; }

  protected:
    void DoDispose() override;

  private:
    Time Serve(uint32_t bytes);
    void SendCompletions(PcieTlp request);

    Time m_latency;
    DataRate m_bandwidth;
    uint32_t m_rcb;
    bool m_splitAtRcb;

    Ptr<PciePort> m_port;
    Time m_busyUntil;
    uint64_t m_written{0};
    uint64_t m_completions{0};
};

} // namespace ns3

#endif
