/*
 * Builds two PCIe endpoints joined by a link, from ObjectFactories as ns-3
 * helpers do: SetLinkAttribute ("Generation", "Width", "Delay",
 * "BitErrorRate"), SetPortAttribute (MPS, credits, timers; both ends),
 * SetDmaAttribute, SetMemoryAttribute, SetEndpointAttribute. Check() names
 * the first attribute value the spec does not allow; Install() refuses to
 * build from such values and returns the problem instead of aborting.
 */
#ifndef FABEMU_PCIE_HELPER_H
#define FABEMU_PCIE_HELPER_H

#include "pcie-endpoint.h"
#include "pcie-link.h"

#include "ns3/attribute.h"
#include "ns3/object-factory.h"

#include <string>

namespace ns3
{

class PcieHelper
{
  public:
    PcieHelper();

    void SetLinkAttribute(const std::string& name, const AttributeValue& value);
    void SetPortAttribute(const std::string& name, const AttributeValue& value);
    void SetDmaAttribute(const std::string& name, const AttributeValue& value);
    void SetMemoryAttribute(const std::string& name, const AttributeValue& value);
    void SetEndpointAttribute(const std::string& name, const AttributeValue& value);

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
    /// Fixes the random streams (bit errors) from \p stream on; returns how many were used.
    static int64_t AssignStreams(const Pair& pair, int64_t stream);

  private:
    Ptr<PcieEndpoint> MakeEndpoint() const;

    ObjectFactory m_link;
    ObjectFactory m_port;
    ObjectFactory m_dma;
    ObjectFactory m_memory;
    ObjectFactory m_endpoint;
};

} // namespace ns3

#endif
