#include "ns3/rank-exchange.h"

#include "ns3/abort.h"

namespace ns3
{

namespace
{

RankExchange::Door&
TheDoor()
{
    static RankExchange::Door door{nullptr, nullptr};
    return door;
}

void
CheckOpen()
{
    NS_ABORT_MSG_IF(!RankExchange::IsOpen(),
                    "RankExchange: a link crosses ranks, but no MPI interface is open "
                    "(a partitioned run opens one: fabemu run --ranks N)");
}

} // namespace

void
RankExchange::Open(const Door& door)
{
    TheDoor() = door;
}

bool
RankExchange::IsOpen()
{
    return TheDoor().send != nullptr && TheDoor().listen != nullptr;
}

void
RankExchange::Send(Ptr<Packet> p, Time at, uint32_t node, uint32_t device)
{
    CheckOpen();
    TheDoor().send(p, at, node, device);
}

void
RankExchange::Listen(Ptr<NetDevice> device, Receive receive)
{
    CheckOpen();
    TheDoor().listen(device, receive);
}

} // namespace ns3
