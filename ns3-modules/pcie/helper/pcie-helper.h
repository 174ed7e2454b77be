/*
 * Builds two PCIe endpoints joined by a link, from ObjectFactories as ns-3
 * helpers do: SetLinkAttribute ("Generation", "Width", "Delay",
 * "BitErrorRate"), SetPortAttribute (MPS, credits, timers; both ends),
 * SetDmaAttribute, SetMemoryAttribute, SetEndpointAttribute. Check() names
 * the first attribute value the spec does not allow; Install() refuses to
 * build from such values and returns the problem instead of aborting.
 *
 * InstallTree builds a PcieTree from a PcieTreeSpec: a root complex
 * (SetRootComplexAttribute) with host memory "mem" (SetHostMemoryAttribute),
 * switches (SetSwitchAttribute) on root ports, endpoints under them whose
 * memory comes from SetGpuMemoryAttribute (defaults: HBM3-class 3.35 TB/s),
 * SetNicMemoryAttribute (the NIC's BAR: at once) or SetMemoryAttribute (NVMe).
 * Every port (endpoint, switch, root port) takes SetPortAttribute.
 *
 * The parts Install and InstallTree build (all but the PcieTree, which whoever holds it
 * may dispose) are disposed when Simulator::Destroy runs: read them before, and dispose
 * none of them elsewhere.
 */
#ifndef FABEMU_PCIE_HELPER_H
#define FABEMU_PCIE_HELPER_H

#include "ns3/attribute.h"
#include "ns3/object-factory.h"
#include "ns3/pcie-endpoint.h"
#include "ns3/pcie-link.h"
#include "ns3/pcie-tree.h"

#include <string>

namespace ns3
{

class PcieHelper
{
  public:
    PcieHelper();

    void SetLinkAttribute(const std::string& name, const AttributeValue& value);
    void SetPortAttribute(const std::string& name, const AttributeValue& value);
    /// Every DMA engine's attributes, NICs' included.
    void SetDmaAttribute(const std::string& name, const AttributeValue& value);
    /// NICs' DMA engines only (default Tags 256: 8-bit extended tags, as a NIC streaming
    /// GPUDirect reads needs); call after SetDmaAttribute.
    void SetNicDmaAttribute(const std::string& name, const AttributeValue& value);
    void SetMemoryAttribute(const std::string& name, const AttributeValue& value);
    void SetEndpointAttribute(const std::string& name, const AttributeValue& value);
    void SetSwitchAttribute(const std::string& name, const AttributeValue& value);
    void SetRootComplexAttribute(const std::string& name, const AttributeValue& value);
    void SetHostMemoryAttribute(const std::string& name, const AttributeValue& value);
    void SetGpuMemoryAttribute(const std::string& name, const AttributeValue& value);
    void SetNicMemoryAttribute(const std::string& name, const AttributeValue& value);
    void SetSocketLinkAttribute(const std::string& name, const AttributeValue& value);
    /// GPUs' PcieEndpoint attributes (default DmaEngines 2: copy engines); other devices
    /// take SetEndpointAttribute.
    void SetGpuEndpointAttribute(const std::string& name, const AttributeValue& value);

    /// "" if every attribute is allowed, else "<TypeId>: <problem>" for the first that is not.
    std::string Check() const;

    struct Pair
    {
        Ptr<PcieEndpoint> a;
        Ptr<PcieEndpoint> b;
        Ptr<PcieLink> link;
        std::string error; ///< non-empty: nothing was built, this is why
        bool Ok() const { return error.empty(); }
    };
    /// Two endpoints on one link, started (InitFC exchanged at the current time).
    Pair Install() const;
    struct Tree
    {
        Ptr<PcieTree> tree;
        std::string error; ///< non-empty: nothing was built, this is why
        bool Ok() const { return error.empty(); }
    };
    /// A root complex, switches and endpoints as \p spec lists them, ports started.
    Tree InstallTree(const PcieTreeSpec& spec) const;

    /// Fixes the random streams (bit errors) from \p stream on; returns how many were used.
    static int64_t AssignStreams(const Pair& pair, int64_t stream);

  private:
    Ptr<PcieEndpoint> MakeEndpoint() const;
    Ptr<PcieLink> MakeLink(const PcieTreeSpec::LinkSpec& spec, const std::string& name,
                           std::string& error) const;

    ObjectFactory m_link;
    ObjectFactory m_port;
    ObjectFactory m_dma;
    ObjectFactory m_nicDma;
    ObjectFactory m_memory;
    ObjectFactory m_endpoint;
    ObjectFactory m_switch;
    ObjectFactory m_rc;
    ObjectFactory m_hostMemory;
    ObjectFactory m_gpuMemory;
    ObjectFactory m_nicMemory;
    ObjectFactory m_socketLink;
    ObjectFactory m_gpuEndpoint;
};

} // namespace ns3

#endif
