/*
 * What a workload sees of a queue pair, whichever transport carries it: the
 * IB reliable-connected transport of RoCEv2 and InfiniBand (RdmaQueuePair), or
 * RDMAP/DDP/MPA over TCP on iWARP (IwarpQp). Post work requests, get
 * completions, count what arrived.
 */
#ifndef FABEMU_RDMA_QP_H
#define FABEMU_RDMA_QP_H

#include "ns3/callback.h"
#include "ns3/object.h"
#include "ns3/rdma-types.h"

namespace ns3
{

class RdmaQp : public Object
{
  public:
    static TypeId GetTypeId();

    /// Posts a work request; its completion arrives through the completion callback.
    virtual void PostSend(const RdmaWorkRequest& wr) = 0;
    void SetCompletionCallback(Callback<void, const RdmaCompletion&> cb) { m_completion = cb; }

    /// Payload bytes this QP has received and placed, in order.
    virtual uint64_t GetBytesReceived() const = 0;
    /// Whether the QP is in the error state (no more work runs on it).
    virtual bool IsError() const = 0;
    /// Whether its transport carries immediate data (WRITE and SEND with immediate):
    /// InfiniBand's and RoCEv2's do; iWARP's (RFC 5040) does not.
    virtual bool HasImmediateData() const { return true; }

  protected:
    void DoDispose() override
    {
        m_completion = MakeNullCallback<void, const RdmaCompletion&>();
        Object::DoDispose();
    }

    Callback<void, const RdmaCompletion&> m_completion;
};

} // namespace ns3

#endif
