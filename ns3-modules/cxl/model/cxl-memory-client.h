/*
 * A CPU's load/store traffic to one memory target, in 64-byte lines: a read
 * mix, a limit on outstanding requests and an offered rate. Rate-limited
 * requests arrive as a Poisson stream (exponential gaps), the way loaded-
 * latency tools spread their injection; at rate 0 a new request follows each
 * completion. HostLatency is the round trip between the core and the CXL
 * root port (or, for the CPU's own DRAM, its memory controller). Streaming
 * requests hit open DRAM rows; random ones open a row each. The loaded-latency
 * curve (latency against achieved bandwidth) comes from running it at several
 * rates.
 */
#ifndef FABEMU_CXL_MEMORY_CLIENT_H
#define FABEMU_CXL_MEMORY_CLIENT_H

#include "ns3/cxl-message.h"
#include "ns3/data-rate.h"
#include "ns3/object.h"
#include "ns3/random-variable-stream.h"
#include "ns3/traced-callback.h"

#include <vector>

namespace ns3
{

class CxlMemoryExpander;
class CxlPort;

/// Where a client's addresses fall (unscoped, as ns-3's EnumValue takes an int).
enum CxlAccessPattern
{
    CXL_ACCESS_RANDOM, ///< every access in a closed DRAM row
    CXL_ACCESS_STREAM, ///< consecutive lines: open rows
};

class CxlMemoryClient : public Object
{
  public:
    static TypeId GetTypeId();
    CxlMemoryClient();
    ~CxlMemoryClient() override;

    /// Alone on the host-side port of the link to the memory target (or its switch).
    void SetPort(Ptr<CxlPort> port);
    /// Alone on the CPU's own DRAM, reached without a link.
    void SetLocalMemory(Ptr<CxlMemoryExpander> memory);
    /// Or what sends its requests, stamped with \p requester, when a CxlCpu shares a port
    /// among clients and hands each its responses (Receive).
    void SetSendCallback(Callback<void, const CxlMessage&> send, uint32_t requester);
    /// A response reached the root port (or the memory controller).
    void Receive(const CxlMessage& m);
    /// Starts issuing at \p at.
    void Start(Time at);
    /// Fixes the random streams; returns how many it used.
    int64_t AssignStreams(int64_t stream);

    uint64_t GetIssued() const { return m_issued; }
    /// Whether every request it will issue has completed.
    bool IsDone() const;
    uint64_t GetCompleted() const { return m_latencies.size(); }
    /// Latency of each completed request, core to core, in completion order.
    const std::vector<Time>& GetLatencies() const { return m_latencies; }
    /// The latency below which a fraction \p q (0..1) of requests completed.
    Time GetLatencyQuantile(double q) const;
    /// Line bytes over the span from the first issue to the last completion.
    double GetAchievedBytesPerSecond() const;

    /// Called once every request has completed (after Requests, or StopTime's drain).
    void SetDoneCallback(Callback<void> cb) { m_done = cb; }

    using CompleteTracedCallback = void (*)(const CxlMessage& request, Time latency);

  protected:
    void DoDispose() override;

  private:
    void Arrive();
    void Issue();
    void Send(const CxlMessage& m);
    void Complete(const CxlMessage& m);
    void ScheduleArrival();
    /// Whether it may issue another request (Requests not reached, StopTime not passed).
    bool MoreToIssue() const;
    /// Calls the done callback, once, when every request has completed.
    void CheckDone();

    double m_readRatio;
    uint32_t m_outstandingLimit;
    DataRate m_rate;
    uint64_t m_requests;
    Time m_hostLatency;
    CxlAccessPattern m_pattern;
    Time m_stop;
    Ptr<CxlPort> m_port; ///< SetPort's, to let go of it
    Callback<void, const CxlMessage&> m_send;
    uint32_t m_requester{0};
    Ptr<UniformRandomVariable> m_mix;
    Ptr<ExponentialRandomVariable> m_gap;
    uint64_t m_issued{0};
    uint32_t m_outstanding{0};
    bool m_waiting{false}; ///< an arrival waits for an outstanding slot
    Time m_first;
    Time m_last;
    std::vector<Time> m_latencies;
    mutable std::vector<Time> m_sorted; ///< m_latencies sorted, when asked for quantiles
    Callback<void> m_done;
    bool m_finished{false};
    TracedCallback<const CxlMessage&> m_issueTrace;
    TracedCallback<const CxlMessage&, Time> m_completeTrace;
};

} // namespace ns3

#endif
