/*
 * RankExchange's door on ns-3's MPI interfaces: a packet for another rank goes by
 * MpiInterface::SendPacket, and a device hears of packets for it through the MpiReceiver
 * aggregated to it, as ns-3's distributed engines expect. In a library of its own
 * (fabemu-rank-exchange-mpi) with ns-3's mpi module and Open MPI, which only partitioned
 * runs load.
 */
#ifndef FABEMU_MPI_RANK_EXCHANGE_H
#define FABEMU_MPI_RANK_EXCHANGE_H

namespace ns3
{

/// Opens RankExchange on ns-3's MpiInterface: call once MpiInterface::Enable has run.
void OpenMpiRankExchange();

} // namespace ns3

#endif // FABEMU_MPI_RANK_EXCHANGE_H
