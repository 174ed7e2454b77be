/*
 * The door between the ranks of a partitioned run: how a packet goes to the rank that
 * simulates its far end, and how a device hears of packets from other ranks. ns-3's MPI
 * interfaces open it (OpenMpiRankExchange, in fabemu-rank-exchange-mpi), which a
 * partitioned run loads; every other run leaves Open MPI's libraries unmapped. The fabric models'
 * cables between ranks (RemotePortChannel, RoceRemoteChannel) go through it.
 */
#ifndef FABEMU_RANK_EXCHANGE_H
#define FABEMU_RANK_EXCHANGE_H

#include "ns3/callback.h"
#include "ns3/net-device.h"
#include "ns3/nstime.h"
#include "ns3/packet.h"

#include <cstdint>

namespace ns3
{

class RankExchange
{
  public:
    /// What a device is told of a packet from another rank.
    using Receive = Callback<void, Ptr<Packet>>;

    /// The two ways through, as ns-3's MpiInterface and MpiReceiver give them.
    struct Door
    {
        /// Sends \p p to device \p device of node \p node on its rank, to arrive at \p at.
        void (*send)(Ptr<Packet> p, Time at, uint32_t node, uint32_t device);
        /// Hands \p device the packets other ranks send to it, through \p receive.
        void (*listen)(Ptr<NetDevice> device, Receive receive);
    };

    /// Opens the door (once MPI runs); a later call replaces it.
    static void Open(const Door& door);
    /// Whether it is open.
    static bool IsOpen();
    /// Door::send; aborts, saying so, where no door is open.
    static void Send(Ptr<Packet> p, Time at, uint32_t node, uint32_t device);
    /// Door::listen; aborts, saying so, where no door is open.
    static void Listen(Ptr<NetDevice> device, Receive receive);
};

} // namespace ns3

#endif // FABEMU_RANK_EXCHANGE_H
