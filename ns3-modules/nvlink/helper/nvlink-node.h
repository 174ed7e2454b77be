/*
 * The NVLink side of one server, as NvlinkHelper builds it: GPUs, NVSwitches
 * and the links between them, by index, and transfers between GPUs. A
 * transfer is done when its last byte is in the destination GPU's memory.
 */
#ifndef FABEMU_NVLINK_NODE_H
#define FABEMU_NVLINK_NODE_H

#include "ns3/nvlink-gpu.h"
#include "ns3/nvlink-link.h"
#include "ns3/nvswitch.h"
#include "ns3/object.h"

#include <map>
#include <string>
#include <vector>

namespace ns3
{

class NvlinkNode : public Object
{
  public:
    static TypeId GetTypeId();

    Ptr<NvlinkGpu> GetGpu(uint32_t i) const { return m_gpus[i]; }
    uint32_t GetNGpus() const { return static_cast<uint32_t>(m_gpus.size()); }
    Ptr<NvSwitch> GetSwitch(uint32_t i) const { return m_switches[i]; }
    uint32_t GetNSwitches() const { return static_cast<uint32_t>(m_switches.size()); }
    const std::vector<Ptr<NvlinkLink>>& GetLinks() const { return m_links; }
    /// Link \p i's name: "gpu0-nvs1" (port 0 at the GPU) or "gpu0-gpu3" (port 0 at the first).
    const std::string& GetLinkName(size_t i) const { return m_linkNames[i]; }

    /// "" if GPU \p src can send to GPU \p dst over NVLink, else why not.
    std::string CheckTransfer(uint32_t src, uint32_t dst) const;
    /// Sends \p bytes from GPU \p src to GPU \p dst; \p done gets the transfer when its
    /// last byte is in. Returns 0 (and does nothing) if CheckTransfer fails.
    uint64_t Send(uint32_t src, uint32_t dst, uint64_t bytes,
                  Callback<void, const NvlinkTransfer&> done);
    /// "" if the switches can sum and multicast among GPUs \p gpus (NVLS: NVSwitch gen3
    /// on, every GPU with the same links to every switch), else why not.
    std::string CheckNvls(const std::vector<uint32_t>& gpus) const;
    /// NVLS: the switches sum \p bytes of each GPU of \p sources; \p done once the sum is
    /// in \p dst (its src is kNvlinkSwitchSource). Call CheckNvls first.
    void SendReduced(const std::vector<uint32_t>& sources, uint32_t dst, uint64_t bytes,
                     Callback<void, const NvlinkTransfer&> done);
    /// NVLS: the switches copy \p bytes of \p src to every GPU of \p targets; \p done once
    /// every copy is in. Call CheckNvls first.
    void Multicast(uint32_t src, const std::vector<uint32_t>& targets, uint64_t bytes,
                   Callback<void, const NvlinkTransfer&> done);
    /// How GPU \p gpu cuts an NVLS transfer of \p bytes: a part per switch, in proportion
    /// to its links' rate, the same on every GPU that CheckNvls accepts.
    std::vector<NvlinkGpu::Part> NvlsParts(uint32_t gpu, uint64_t bytes) const;
    /// Bytes of transfer \p id from \p src that have arrived so far (0 once done).
    uint64_t GetDelivered(uint32_t src, uint32_t dst, uint64_t id) const;
    /// Sums over every port of every link.
    uint64_t GetReplays() const;
    uint64_t GetOverflows() const;
    Time GetCreditStarvedTime() const;

    // Building (NvlinkHelper).
    void AddGpu(Ptr<NvlinkGpu> gpu);
    void AddSwitch(Ptr<NvSwitch> sw) { m_switches.push_back(sw); }
    /// GPU \p gpu's port \p port goes to switch \p sw.
    void AddSwitchPort(uint32_t gpu, uint32_t sw, uint32_t port)
    {
        m_switchPorts[{gpu, sw}] = port;
    }
    void AddLink(Ptr<NvlinkLink> link, const std::string& name)
    {
        m_links.push_back(link);
        m_linkNames.push_back(name);
    }

  protected:
    void DoDispose() override;

  private:
    void Received(const NvlinkTransfer& t);

    std::vector<Ptr<NvlinkGpu>> m_gpus;
    std::vector<Ptr<NvSwitch>> m_switches;
    std::vector<Ptr<NvlinkLink>> m_links;
    std::vector<std::string> m_linkNames;
    std::map<std::pair<uint32_t, uint64_t>, Callback<void, const NvlinkTransfer&>> m_done;
    std::map<std::pair<uint32_t, uint32_t>, uint32_t> m_switchPorts; ///< (GPU, switch) -> port
    struct Nvls
    {
        uint32_t waiting; ///< copies (multicast) or sums (reduce) not yet in
        Time started;
        Callback<void, const NvlinkTransfer&> done;
    };
    std::map<uint64_t, Nvls> m_nvls;
    uint64_t m_nextNvls{uint64_t{1} << 62}; ///< apart from the GPUs' own transfer ids
};

} // namespace ns3

#endif
