/*
 * A PCIe endpoint: one port, a DMA engine that issues requests through it
 * and a memory target that completes the peer's requests. It routes what the
 * port delivers (writes and read requests to the memory, completions to the
 * DMA engine) and releases each TLP's credits once it has been consumed:
 * ProcessingTime after arrival, and for a write not before the memory took it.
 */
#ifndef FABEMU_PCIE_ENDPOINT_H
#define FABEMU_PCIE_ENDPOINT_H

#include "pcie-dma-engine.h"
#include "pcie-memory-target.h"
#include "pcie-port.h"

#include "ns3/nstime.h"
#include "ns3/object.h"

namespace ns3
{

class PcieEndpoint : public Object
{
  public:
    static TypeId GetTypeId();
    PcieEndpoint();

    /// Wires the three parts together.
    void Setup(Ptr<PciePort> port, Ptr<PcieDmaEngine> dma, Ptr<PcieMemoryTarget> memory);

    Ptr<PciePort> GetPort() const { return m_port; }
    Ptr<PcieDmaEngine> GetDma() const { return m_dma; }
    Ptr<PcieMemoryTarget> GetMemory() const { return m_memory; }

  protected:
    void DoDispose() override;

  private:
    void Receive(const PcieTlp& tlp);
    void Release(PcieTlp tlp);

    Time m_processing;
    Ptr<PciePort> m_port;
    Ptr<PcieDmaEngine> m_dma;
    Ptr<PcieMemoryTarget> m_memory;
};

} // namespace ns3

#endif
