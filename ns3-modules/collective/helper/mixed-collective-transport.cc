#include "ns3/mixed-collective-transport.h"

#include "ns3/abort.h"

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(MixedCollectiveTransport);

TypeId
MixedCollectiveTransport::GetTypeId()
{
    static TypeId tid = TypeId("ns3::MixedCollectiveTransport")
                            .SetParent<CollectiveTransport>()
                            .SetGroupName("Collective")
                            .AddConstructor<MixedCollectiveTransport>();
    return tid;
}

void
MixedCollectiveTransport::Setup(Ptr<CollectiveTransport> preferred,
                                Ptr<CollectiveTransport> fallback)
{
    NS_ABORT_MSG_IF(!preferred || !fallback, "MixedCollectiveTransport: two transports");
    NS_ABORT_MSG_IF(preferred->GetNRanks() != fallback->GetNRanks(),
                    "MixedCollectiveTransport: " << preferred->GetNRanks() << " ranks against "
                                                 << fallback->GetNRanks());
    m_preferred = preferred;
    m_fallback = fallback;
}

bool
MixedCollectiveTransport::Prefers(uint32_t from, uint32_t to) const
{
    return m_preferred->Reaches(from, to);
}

const Ptr<CollectiveTransport>&
MixedCollectiveTransport::Of(uint32_t from, uint32_t to) const
{
    return Prefers(from, to) ? m_preferred : m_fallback;
}

uint32_t
MixedCollectiveTransport::GetNRanks() const
{
    return m_preferred->GetNRanks();
}

void
MixedCollectiveTransport::Send(uint32_t from, uint32_t to, uint64_t bytes, Done done)
{
    Of(from, to)->Send(from, to, bytes, done);
}

CollectiveTransport::PathCost
MixedCollectiveTransport::GetPathCost(uint32_t from, uint32_t to) const
{
    return Of(from, to)->GetPathCost(from, to);
}

bool
MixedCollectiveTransport::Reaches(uint32_t from, uint32_t to) const
{
    return Of(from, to)->Reaches(from, to);
}

std::string
MixedCollectiveTransport::CheckInSwitch(const std::vector<uint32_t>& ranks) const
{
    return m_preferred->CheckInSwitch(ranks);
}

void
MixedCollectiveTransport::SendInSwitch(CollectiveVia via, uint32_t from, uint32_t to,
                                       const std::vector<uint32_t>& group, uint64_t bytes,
                                       Done done)
{
    m_preferred->SendInSwitch(via, from, to, group, bytes, done);
}

CollectiveTransport::PathCost
MixedCollectiveTransport::GetInSwitchCost(uint32_t r) const
{
    return m_preferred->GetInSwitchCost(r);
}

std::string
MixedCollectiveTransport::DefaultRankName(uint32_t r) const
{
    return m_preferred->GetRankName(r);
}

void
MixedCollectiveTransport::DoDispose()
{
    for (Ptr<CollectiveTransport>* t : {&m_preferred, &m_fallback})
    {
        if (*t)
        {
            (*t)->Dispose();
            *t = nullptr;
        }
    }
    CollectiveTransport::DoDispose();
}

} // namespace ns3
