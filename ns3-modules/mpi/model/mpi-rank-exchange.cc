#include "ns3/mpi-rank-exchange.h"

#include "ns3/mpi-interface.h"
#include "ns3/mpi-receiver.h"
#include "ns3/rank-exchange.h"

namespace ns3
{

namespace
{

void
SendByMpi(Ptr<Packet> p, Time at, uint32_t node, uint32_t device)
{
    MpiInterface::SendPacket(p, at, node, device);
}

void
ListenByMpi(Ptr<NetDevice> device, RankExchange::Receive receive)
{
    // ns-3's MPI interfaces hand a packet from another rank to the MpiReceiver
    // aggregated to the device it is addressed to.
    Ptr<MpiReceiver> receiver = CreateObject<MpiReceiver>();
    receiver->SetReceiveCallback(receive);
    device->AggregateObject(receiver);
}

} // namespace

void
OpenMpiRankExchange()
{
    RankExchange::Open({&SendByMpi, &ListenByMpi});
}

} // namespace ns3
