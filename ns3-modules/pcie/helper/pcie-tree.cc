#include "ns3/pcie-tree.h"

#include "ns3/log.h"
#include "ns3/simulator.h"

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("PcieTree");
NS_OBJECT_ENSURE_REGISTERED(PcieTree);

TypeId
PcieTree::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::PcieTree").SetParent<Object>().SetGroupName("Pcie").AddConstructor<PcieTree>();
    return tid;
}

PcieTree::PcieTree() = default;

void
PcieTree::DoDispose()
{
    m_rc = nullptr;
    m_host = nullptr;
    m_rc1 = nullptr;
    m_host1 = nullptr;
    m_socketLink = nullptr;
    m_switches.clear();
    m_endpoints.clear();
    m_links.clear();
    m_pending.clear();
    Object::DoDispose();
}

void
PcieTree::SetRootComplex(Ptr<PcieRootComplex> rc, Ptr<PcieMemoryTarget> host, uint64_t size)
{
    m_rc = rc;
    m_host = host;
    m_hostSize = size;
    m_windows["mem"] = {0, size};
    host->TraceConnectWithoutContext("Written",
                                     Callback<void, const PcieTlp&, Time>(
                                         [this](const PcieTlp& t, Time at) { Written(t, at); }));
}

void
PcieTree::SetSecondSocket(Ptr<PcieRootComplex> rc, Ptr<PcieMemoryTarget> host, uint64_t base,
                          uint64_t size, Ptr<PcieSocketLink> link)
{
    m_rc1 = rc;
    m_host1 = host;
    m_socketLink = link;
    m_windows["mem1"] = {base, size};
    host->TraceConnectWithoutContext("Written",
                                     Callback<void, const PcieTlp&, Time>(
                                         [this](const PcieTlp& t, Time at) { Written(t, at); }));
}

void
PcieTree::AddSwitch(const std::string& name, Ptr<PcieSwitch> sw, Ptr<PcieLink> up)
{
    m_switches[name] = sw;
    m_links[name] = up;
}

void
PcieTree::AddEndpoint(const std::string& name, Ptr<PcieEndpoint> e, Ptr<PcieLink> up, uint64_t base,
                      uint64_t size)
{
    m_endpoints[name] = e;
    m_links[name] = up;
    m_windows[name] = {base, size};
    m_order.push_back(name);
    e->GetMemory()->TraceConnectWithoutContext(
        "Written", Callback<void, const PcieTlp&, Time>(
                       [this](const PcieTlp& t, Time at) { Written(t, at); }));
    const uint16_t requester = e->GetDma()->GetRequesterId();
    for (uint32_t i = 0; i < e->GetNDmas(); ++i)
    {
        e->GetDma(i)->SetTransferCallback(Callback<void, const PcieTransfer&>(
            [this, requester](const PcieTransfer& t) { EngineDone(requester, t); }));
    }
}

Ptr<PcieSwitch>
PcieTree::GetSwitch(const std::string& name) const
{
    auto it = m_switches.find(name);
    return it == m_switches.end() ? nullptr : it->second;
}

Ptr<PcieEndpoint>
PcieTree::GetEndpoint(const std::string& name) const
{
    auto it = m_endpoints.find(name);
    return it == m_endpoints.end() ? nullptr : it->second;
}

Ptr<PcieLink>
PcieTree::GetLink(const std::string& name) const
{
    auto it = m_links.find(name);
    return it == m_links.end() ? nullptr : it->second;
}

bool
PcieTree::GetBase(const std::string& memory, uint64_t& base, uint64_t& size) const
{
    auto it = m_windows.find(memory);
    if (it == m_windows.end())
    {
        return false;
    }
    base = it->second.first;
    size = it->second.second;
    return true;
}

std::vector<std::string>
PcieTree::GetEndpointNames() const
{
    return m_order;
}

std::string
PcieTree::CheckTransfer(const std::string& from, const std::string& to, uint64_t offset,
                        uint64_t bytes) const
{
    if (!GetEndpoint(from))
    {
        return "no endpoint named '" + from + "'";
    }
    uint64_t base = 0;
    uint64_t size = 0;
    if (!GetBase(to, base, size))
    {
        return "no memory named '" + to + "' (host memory is 'mem')";
    }
    if (to == from)
    {
        return "'" + from + "' cannot DMA into its own memory over PCIe";
    }
    if (offset > size || bytes > size - offset)
    {
        return "bytes " + std::to_string(offset) + "+" + std::to_string(bytes) + " are outside '" +
               to + "' (" + std::to_string(size) + " bytes)";
    }
    return "";
}

uint64_t
PcieTree::Write(const std::string& from, const std::string& to, uint64_t offset, uint64_t bytes,
                Callback<void, const PcieTransfer&> done)
{
    if (!CheckTransfer(from, to, offset, bytes).empty())
    {
        return 0;
    }
    const Ptr<PcieDmaEngine> dma = GetEndpoint(from)->GetIdlestDma();
    const uint64_t address = m_windows.at(to).first + offset;
    const uint64_t id = dma->Write(address, bytes);
    const uint64_t key = Key(dma->GetRequesterId(), id);
    m_pending[key] = {{id, true, address, bytes, Simulator::Now(), Time(0)}, bytes, done, dma};
    if (bytes == 0)
    {
        Report(key, Simulator::Now());
    }
    return id;
}

uint64_t
PcieTree::Read(const std::string& from, const std::string& to, uint64_t offset, uint64_t bytes,
               Callback<void, const PcieTransfer&> done)
{
    if (!CheckTransfer(from, to, offset, bytes).empty())
    {
        return 0;
    }
    const Ptr<PcieDmaEngine> dma = GetEndpoint(from)->GetIdlestDma();
    const uint64_t address = m_windows.at(to).first + offset;
    // A zero-byte read is done inside dma->Read, before it could be registered: the
    // engine's report finds nothing pending and this one stands for it.
    const uint64_t id = dma->Read(address, bytes);
    const uint64_t key = Key(dma->GetRequesterId(), id);
    m_pending[key] = {{id, false, address, bytes, Simulator::Now(), Time(0)}, bytes, done, dma};
    if (bytes == 0)
    {
        Report(key, Simulator::Now());
    }
    return id;
}

uint64_t
PcieTree::GetDelivered(const std::string& from, uint64_t id) const
{
    const Ptr<PcieEndpoint> e = GetEndpoint(from);
    if (!e)
    {
        return 0;
    }
    const auto it = m_pending.find(Key(e->GetDma()->GetRequesterId(), id));
    if (it == m_pending.end())
    {
        return 0;
    }
    const Pending& p = it->second;
    return p.t.write ? p.t.bytes - p.remaining : p.dma->GetReadBytesReceived(id);
}

void
PcieTree::Written(const PcieTlp& tlp, Time taken)
{
    auto it = m_pending.find(Key(tlp.requester, tlp.transfer));
    if (it == m_pending.end() || !it->second.t.write)
    {
        return;
    }
    it->second.remaining -= std::min<uint64_t>(it->second.remaining, tlp.payload);
    if (it->second.remaining == 0)
    {
        Simulator::Schedule(taken - Simulator::Now(), &PcieTree::Report, this, it->first, taken);
    }
}

void
PcieTree::EngineDone(uint16_t requester, const PcieTransfer& t)
{
    if (t.write)
    {
        return; // a write is done when the destination has it (Written), not at the first Ack
    }
    Report(Key(requester, t.id), Simulator::Now());
}

void
PcieTree::Report(uint64_t key, Time at)
{
    auto it = m_pending.find(key);
    if (it == m_pending.end())
    {
        return;
    }
    Pending p = it->second;
    m_pending.erase(it);
    p.t.completed = at;
    NS_LOG_FUNCTION(this << p.t.id << p.t.write << p.t.bytes);
    if (!p.done.IsNull())
    {
        p.done(p.t);
    }
}

} // namespace ns3
