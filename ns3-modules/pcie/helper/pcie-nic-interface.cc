#include "ns3/pcie-nic-interface.h"

#include "ns3/abort.h"
#include "ns3/pcie-spec.h"

#include <algorithm>

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(PcieNicInterface);

TypeId
PcieNicInterface::GetTypeId()
{
    static TypeId tid = TypeId("ns3::PcieNicInterface")
                            .SetParent<RdmaHostInterface>()
                            .SetGroupName("Pcie")
                            .AddConstructor<PcieNicInterface>();
    return tid;
}

void
PcieNicInterface::Setup(Ptr<PcieTree> tree, const std::string& nic)
{
    m_tree = tree;
    m_nic = nic;
}

Time
PcieNicInterface::GetStagingLatency(const std::string& memory) const
{
    double bytePs = 0;
    Time delay;
    for (const std::string& end : {m_nic, TreeName(memory)})
    {
        if (Ptr<PcieLink> link = m_tree->GetLink(end))
        {
            bytePs = std::max(bytePs, link->GetBytePicoseconds());
            delay += link->GetDelay();
        }
    }
    const double wire = GetChunkBytes() * (1.0 + kPcieTimerTlpOverhead / 256.0) * bytePs;
    return PicoSeconds(static_cast<int64_t>(2 * wire)) + delay * 3;
}

void
PcieNicInterface::DoDispose()
{
    m_tree = nullptr;
    RdmaHostInterface::DoDispose();
}

std::string
PcieNicInterface::TreeName(const std::string& memory)
{
    return memory == "host" ? "mem" : memory;
}

std::string
PcieNicInterface::CheckMemory(const std::string& memory) const
{
    if (memory == m_nic)
    {
        return m_nic + " cannot DMA into its own memory";
    }
    uint64_t base = 0;
    uint64_t size = 0;
    if (!m_tree->GetBase(TreeName(memory), base, size))
    {
        return "no memory '" + memory + "' in the PCIe tree";
    }
    return "";
}

uint64_t
PcieNicInterface::Fold(const std::string& memory, uint64_t offset, uint64_t bytes) const
{
    uint64_t base = 0;
    uint64_t size = 0;
    m_tree->GetBase(TreeName(memory), base, size);
    NS_ABORT_MSG_IF(bytes > size, "a chunk of " << bytes << " bytes does not fit " << memory);
    return offset % (size - bytes + 1);
}

void
PcieNicInterface::Done(Callback<void> done, const PcieTransfer&)
{
    done();
}

void
PcieNicInterface::Fetch(const std::string& memory, uint64_t offset, uint64_t bytes,
                        Callback<void> done)
{
    Transfer(false, memory, offset, bytes, done);
}

void
PcieNicInterface::Place(const std::string& memory, uint64_t offset, uint64_t bytes,
                        Callback<void> done)
{
    Transfer(true, memory, offset, bytes, done);
}

void
PcieNicInterface::Transfer(bool write, const std::string& memory, uint64_t offset, uint64_t bytes,
                           Callback<void> done)
{
    const std::string to = TreeName(memory);
    const uint64_t at = Fold(memory, offset, bytes);
    const auto cb = MakeBoundCallback(&PcieNicInterface::Done, done);
    const uint64_t id =
        write ? m_tree->Write(m_nic, to, at, bytes, cb) : m_tree->Read(m_nic, to, at, bytes, cb);
    NS_ABORT_MSG_IF(id == 0, m_nic << " cannot " << (write ? "write " : "read ") << memory << ": "
                                   << m_tree->CheckTransfer(m_nic, to, at, bytes));
}

} // namespace ns3
