/*
 * Builds the NVLink side of a server: GPUs joined through NVSwitches (each GPU
 * with a bundle of links to every switch: the link split, e.g. DGX H100's
 * 5/4/4/5) or directly (a mesh, e.g. DGX-1's hybrid cube mesh), from
 * ObjectFactorys as ns-3 helpers do: SetLinkAttribute (Generation, Delay,
 * BitErrorRate, MaxPayload, HeaderBytes), SetPortAttribute (BufferPackets),
 * SetSwitchAttribute (Latency, Generation), SetGpuAttribute (QueueDepth).
 * The result is an NvlinkNode: its GPUs, switches and links by index, and a
 * transfer API with completion callbacks.
 */
#ifndef FABEMU_NVLINK_HELPER_H
#define FABEMU_NVLINK_HELPER_H

#include "ns3/nvlink-node.h"
#include "ns3/object-factory.h"

#include <string>
#include <tuple>
#include <vector>

namespace ns3
{

class NvlinkHelper
{
  public:
    NvlinkHelper();

    void SetLinkAttribute(const std::string& name, const AttributeValue& value);
    void SetPortAttribute(const std::string& name, const AttributeValue& value);
    void SetSwitchAttribute(const std::string& name, const AttributeValue& value);
    void SetGpuAttribute(const std::string& name, const AttributeValue& value);

    struct Node
    {
        Ptr<NvlinkNode> node;
        std::string error; ///< non-empty: nothing was built, this is why
        bool Ok() const { return error.empty(); }
    };
    /// \p gpus GPUs, and one NVSwitch per entry of \p split: every GPU has split[s] links
    /// to switch s.
    Node InstallSwitched(uint32_t gpus, const std::vector<uint32_t>& split) const;
    /// A direct mesh: each (a, b, links) joins GPU a and GPU b with a bundle of links.
    struct Edge
    {
        uint32_t a;
        uint32_t b;
        uint32_t links;
    };
    Node InstallMesh(uint32_t gpus, const std::vector<Edge>& edges) const;

  private:
    Ptr<NvlinkLink> MakeLink(uint32_t links, std::string& error) const;
    Ptr<NvlinkNode> MakeGpus(uint32_t gpus) const;

    ObjectFactory m_link;
    ObjectFactory m_port;
    ObjectFactory m_switch;
    ObjectFactory m_gpu;
};

} // namespace ns3

#endif
