/*
 * A PCIe endpoint: one port, DMA engines that issue requests through it (one
 * by default; a GPU's copy engines are several, each with its own tags and
 * taking turns at the port's posted queue) and a memory target that
 * completes the peer's requests. It routes what the
 * port delivers (writes and read requests to the memory, completions to the
 * DMA engine) and releases each TLP's credits once it has been consumed:
 * ProcessingTime after arrival, and for a write not before the memory took it.
 */
#ifndef FABEMU_PCIE_ENDPOINT_H
#define FABEMU_PCIE_ENDPOINT_H

#include "ns3/nstime.h"
#include "ns3/object.h"
#include "ns3/pcie-dma-engine.h"
#include "ns3/pcie-memory-target.h"
#include "ns3/pcie-port.h"

#include <vector>

namespace ns3
{

class PcieEndpoint : public Object
{
  public:
    static TypeId GetTypeId();
    PcieEndpoint();

    /// Wires the three parts together; with DmaEngines > 1 it adds engines configured
    /// as \p dma is (same attribute values), disposed when Simulator::Destroy runs.
    void Setup(Ptr<PciePort> port, Ptr<PcieDmaEngine> dma, Ptr<PcieMemoryTarget> memory);
    /// Adds another DMA engine on the same port (after Setup); returns its index.
    uint32_t AddDma(Ptr<PcieDmaEngine> dma);

    Ptr<PciePort> GetPort() const { return m_port; }
    Ptr<PcieDmaEngine> GetDma(uint32_t i = 0) const { return m_dmas[i]; }
    uint32_t GetNDmas() const { return static_cast<uint32_t>(m_dmas.size()); }
    /// The engine with the fewest transfers in progress (the first of equals).
    Ptr<PcieDmaEngine> GetIdlestDma() const;
    Ptr<PcieMemoryTarget> GetMemory() const { return m_memory; }

  protected:
    void DoDispose() override;

  private:
    static constexpr int kEngineShift = 40; ///< transfer id bits above it: the engine

    void Receive(const PcieTlp& tlp);
    void Release(PcieTlp tlp);
    void Dequeued(PcieFcType type);
    void Acked(const PcieTlp& tlp);

    Time m_processing;
    uint32_t m_engines;
    Ptr<PciePort> m_port;
    std::vector<Ptr<PcieDmaEngine>> m_dmas;
    uint32_t m_nextPump{0}; ///< the engine that refills the posted queue first, in turn
    Ptr<PcieMemoryTarget> m_memory;
};

} // namespace ns3

#endif
