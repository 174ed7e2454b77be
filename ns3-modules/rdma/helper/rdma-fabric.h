/*
 * What workloads and recorders see of a fabric, whichever it is: hosts that
 * can be connected by queue pairs, and what an ideal transfer between two of
 * them would take. RoCEv2, InfiniBand and iWARP helpers implement it, so one
 * workload runs on any fabric.
 */
#ifndef FABEMU_RDMA_FABRIC_H
#define FABEMU_RDMA_FABRIC_H

#include "ns3/nstime.h"
#include "ns3/rdma-qp.h"

#include <utility>

namespace ns3
{

class RdmaFabric
{
  public:
    virtual ~RdmaFabric() = default;

    virtual uint32_t GetNHosts() const = 0;
    /// The host's IPv4 address, host order (also how FCT files name hosts).
    virtual uint32_t GetHostIpv4(uint32_t host) const = 0;
    /// A connected QP on \p a and one on \p b, and the ports FCT files name them by.
    struct Connection
    {
        Ptr<RdmaQp> requester;
        Ptr<RdmaQp> responder;
        uint16_t srcPort; ///< UDP source port (RoCEv2), QPN (InfiniBand), TCP port (iWARP)
        uint16_t dstPort;
    };
    virtual Connection Connect(uint32_t a, uint32_t b) = 0;
    /// The same with packets of service level \p sl, where the fabric has them
    /// (InfiniBand: the SL picks the VL); by default the SL is ignored.
    virtual Connection Connect(uint32_t a, uint32_t b, uint8_t sl)
    {
        (void)sl;
        return Connect(a, b);
    }
    /// Releases a connection's QPs once its work is done.
    virtual void Disconnect(const Connection& c) = 0;
    /// What \p bytes from \p a to \p b would take alone on an idle fabric:
    /// one round trip of propagation plus the bytes, headers included, at the
    /// slowest link on the path (the "ideal FCT" of HPCC's FCT files).
    virtual Time IdealFct(uint32_t a, uint32_t b, uint64_t bytes) const = 0;
    /// Whether a path joins host \p a to host \p b (IdealFct and Connect need one).
    virtual bool Reaches(uint32_t a, uint32_t b) const
    {
        (void)a;
        (void)b;
        return true;
    }
};

} // namespace ns3

#endif
