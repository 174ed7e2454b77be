/*
 * A NIC's host interface over a PCIe tree: the RDMA transport's chunks are
 * fetched with DMA reads by the NIC's engine (MRd requests, completions back
 * through the switches or the root complex) and placed with posted writes.
 * "host" is the host memory of the NIC's tree ("mem"), "gpuK" a GPU's memory:
 * GPUDirect RDMA, through the PCIe switch when GPU and NIC share one, through
 * the root complex otherwise, as the tree routes it.
 */
#ifndef FABEMU_PCIE_NIC_INTERFACE_H
#define FABEMU_PCIE_NIC_INTERFACE_H

#include "ns3/pcie-tree.h"
#include "ns3/rdma-host-interface.h"

#include <string>

namespace ns3
{

class PcieNicInterface : public RdmaHostInterface
{
  public:
    static TypeId GetTypeId();

    /// The NIC is endpoint \p nic of \p tree.
    void Setup(Ptr<PcieTree> tree, const std::string& nic);

    std::string CheckMemory(const std::string& memory) const override;
    void Fetch(const std::string& memory, uint64_t offset, uint64_t bytes,
               Callback<void> done) override;
    void Place(const std::string& memory, uint64_t offset, uint64_t bytes,
               Callback<void> done) override;
    /// A chunk each way over the NIC's link and the memory's (the slower sets the pace),
    /// with a TLP header per 256 bytes of payload, and each link's propagation: out and
    /// back for the read, once for the write. An estimate for the analytical mode.
    Time GetStagingLatency(const std::string& memory) const override;

  protected:
    void DoDispose() override;

  private:
    /// The tree's name for \p memory ("host" is "mem").
    static std::string TreeName(const std::string& memory);
    /// \p offset folded into \p memory's window so that \p bytes fit.
    uint64_t Fold(const std::string& memory, uint64_t offset, uint64_t bytes) const;
    static void Done(Callback<void> done, const PcieTransfer&);
    /// A DMA write (Place) or read (Fetch) by the NIC's engine.
    void Transfer(bool write, const std::string& memory, uint64_t offset, uint64_t bytes,
                  Callback<void> done);

    Ptr<PcieTree> m_tree;
    std::string m_nic;
};

} // namespace ns3

#endif
