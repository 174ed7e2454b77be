#include "ns3/rank-sent-tag.h"

#include "ns3/rank-exchange.h"

#include <stdexcept>

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(RankSentTag);

TypeId
RankSentTag::GetTypeId()
{
    static TypeId tid = TypeId("ns3::RankSentTag")
                            .SetParent<Tag>()
                            .SetGroupName("Fabric")
                            .AddConstructor<RankSentTag>();
    return tid;
}

Time
RankSentTag::Lookahead(Time delay, const std::string& link)
{
    if (!RankExchange::IsOpen())
    {
        throw std::invalid_argument("link " + link +
                                    " crosses ranks, but no MPI interface is open (a "
                                    "partitioned run opens one, where the build has ns-3's "
                                    "mpi module: scripts/install-deps, then rebuild)");
    }
    if (delay <= Lead())
    {
        throw std::invalid_argument(
            "link " + link + " crosses ranks with a delay of " +
            std::to_string(delay.GetPicoSeconds()) +
            " ps: a partitioned run needs more than 1 ps on every link between ranks "
            "(its lookahead)");
    }
    return delay - Lead();
}

TypeId
RankSentTag::GetInstanceTypeId() const
{
    return GetTypeId();
}

uint32_t
RankSentTag::GetSerializedSize() const
{
    return 24;
}

void
RankSentTag::Serialize(TagBuffer i) const
{
    i.WriteU64(static_cast<uint64_t>(sentAt));
    i.WriteU32(node);
    i.WriteU32(port);
    i.WriteU64(word);
}

void
RankSentTag::Deserialize(TagBuffer i)
{
    sentAt = static_cast<int64_t>(i.ReadU64());
    node = i.ReadU32();
    port = i.ReadU32();
    word = i.ReadU64();
}

void
RankSentTag::Print(std::ostream& os) const
{
    os << "sent at " << sentAt << " by node " << node << " port " << port << " word " << word;
}

} // namespace ns3
