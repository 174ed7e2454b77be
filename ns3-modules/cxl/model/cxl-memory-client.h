/*
 * A CPU's load/store traffic to one memory target, in 64-byte lines: a read
 * mix, a limit on outstanding requests and an offered rate. Rate-limited
 * requests arrive as a Poisson stream (exponential gaps), the way loaded-
 * latency tools spread their injection; at rate 0 a new request follows each
 * completion. HostLatency is the round trip between the core and the CXL
 * root port. The loaded-latency curve (latency against achieved bandwidth)
 * comes from running it at several rates.
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

class CxlPort;

class CxlMemoryClient : public Object
{
  public:
    static TypeId GetTypeId();
    CxlMemoryClient();
    ~CxlMemoryClient() override;

    /// The host-side port of the link to the memory target (or its switch).
    void SetPort(Ptr<CxlPort> port);
    /// Starts issuing at \p at.
    void Start(Time at);
    /// Fixes the random streams; returns how many it used.
    int64_t AssignStreams(int64_t stream);

    uint64_t GetIssued() const { return m_issued; }
    uint64_t GetCompleted() const { return m_latencies.size(); }
    /// Latency of each completed request, core to core, in completion order.
    const std::vector<Time>& GetLatencies() const { return m_latencies; }
    /// The latency below which a fraction \p q (0..1) of requests completed.
    Time GetLatencyQuantile(double q) const;
    /// Line bytes over the span from the first issue to the last completion.
    double GetAchievedBytesPerSecond() const;

    using CompleteTracedCallback = void (*)(const CxlMessage& request, Time latency);

  protected:
    void DoDispose() override;

  private:
    void Arrive();
    void Issue();
    void Receive(const CxlMessage& m);
    void Complete(const CxlMessage& m);
    void ScheduleArrival();

    double m_readRatio;
    uint32_t m_outstandingLimit;
    DataRate m_rate;
    uint64_t m_requests;
    Time m_hostLatency;
    Ptr<CxlPort> m_port;
    Ptr<UniformRandomVariable> m_mix;
    Ptr<ExponentialRandomVariable> m_gap;
    uint64_t m_issued{0};
    uint32_t m_outstanding{0};
    bool m_waiting{false}; ///< an arrival waits for an outstanding slot
    Time m_first;
    Time m_last;
    std::vector<Time> m_latencies;
    TracedCallback<const CxlMessage&, Time> m_completeTrace;
};

} // namespace ns3

#endif
