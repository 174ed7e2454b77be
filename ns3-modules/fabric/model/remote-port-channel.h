/*
 * The cable between two RemotePortDevices, the ns-3 faces of a link whose two ends are
 * simulated by different MPI ranks. It carries nothing itself (the devices send through
 * ns-3's MpiInterface); its Delay attribute is what ns-3's distributed engines take as
 * the link's lookahead: the link's delay less RankSentTag::Lead().
 */
#ifndef FABEMU_REMOTE_PORT_CHANNEL_H
#define FABEMU_REMOTE_PORT_CHANNEL_H

#include "ns3/channel.h"
#include "ns3/nstime.h"
#include "ns3/remote-port-device.h"

#include <array>
#include <utility>

namespace ns3
{

class RemotePortChannel : public Channel
{
  public:
    static TypeId GetTypeId();
    RemotePortChannel();

    /**
     * \brief Joins \p a and \p b, nodes of different ranks, by a link of \p delay: a device
     * on each, each listening through RankExchange (an MpiReceiver in a partitioned run),
     * and the channel between them. Throws std::invalid_argument when the delay leaves no
     * lookahead or no RankExchange is open (\p name names the link).
     */
    static std::pair<Ptr<RemotePortDevice>, Ptr<RemotePortDevice>> Cable(Ptr<Node> a, Ptr<Node> b,
                                                                         Time delay,
                                                                         const std::string& name);

    /// The other end of \p device.
    Ptr<RemotePortDevice> GetPeer(Ptr<const RemotePortDevice> device) const;

    std::size_t GetNDevices() const override { return 2; }
    Ptr<NetDevice> GetDevice(std::size_t i) const override;

  protected:
    void DoDispose() override;

  private:
    Time m_delay;
    std::array<Ptr<RemotePortDevice>, 2> m_ends;
};

} // namespace ns3

#endif
