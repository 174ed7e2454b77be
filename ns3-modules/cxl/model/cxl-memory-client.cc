#include "ns3/cxl-memory-client.h"

#include "ns3/cxl-memory-expander.h"
#include "ns3/cxl-port.h"
#include "ns3/double.h"
#include "ns3/enum.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

#include <algorithm>
#include <cmath>

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(CxlMemoryClient);

TypeId
CxlMemoryClient::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::CxlMemoryClient")
            .SetParent<Object>()
            .SetGroupName("Cxl")
            .AddConstructor<CxlMemoryClient>()
            .AddAttribute("ReadRatio", "Fraction of requests that are reads (0..1)",
                          DoubleValue(1.0), MakeDoubleAccessor(&CxlMemoryClient::m_readRatio),
                          MakeDoubleChecker<double>(0.0, 1.0))
            .AddAttribute("Outstanding", "Requests in flight at most", UintegerValue(64),
                          MakeUintegerAccessor(&CxlMemoryClient::m_outstandingLimit),
                          MakeUintegerChecker<uint32_t>(1))
            .AddAttribute("Rate", "Offered line bytes per second (0: as fast as Outstanding lets)",
                          DataRateValue(DataRate(0)),
                          MakeDataRateAccessor(&CxlMemoryClient::m_rate), MakeDataRateChecker())
            .AddAttribute("Requests", "Requests to issue, 64 bytes each", UintegerValue(10000),
                          MakeUintegerAccessor(&CxlMemoryClient::m_requests),
                          MakeUintegerChecker<uint64_t>())
            .AddAttribute("StopTime", "Issue nothing from this time on (0: no limit)",
                          TimeValue(Time(0)), MakeTimeAccessor(&CxlMemoryClient::m_stop),
                          MakeTimeChecker(Time(0)))
            .AddAttribute("Pattern", "Random addresses (closed rows) or a stream (open rows)",
                          EnumValue(CXL_ACCESS_RANDOM),
                          MakeEnumAccessor(&CxlMemoryClient::m_pattern),
                          MakeEnumChecker(CXL_ACCESS_RANDOM, "random", CXL_ACCESS_STREAM, "stream"))
            .AddAttribute("HostLatency",
                          "Round trip between the core and the CXL root port (caches, mesh, "
                          "home agent)",
                          TimeValue(NanoSeconds(60)),
                          MakeTimeAccessor(&CxlMemoryClient::m_hostLatency),
                          MakeTimeChecker(Time(0)))
            .AddTraceSource("Issue", "The core issued a request",
                            MakeTraceSourceAccessor(&CxlMemoryClient::m_issueTrace),
                            "ns3::CxlPort::MessageTracedCallback")
            .AddTraceSource("Complete", "A request completed, with its latency",
                            MakeTraceSourceAccessor(&CxlMemoryClient::m_completeTrace),
                            "ns3::CxlMemoryClient::CompleteTracedCallback");
    return tid;
}

CxlMemoryClient::CxlMemoryClient()
    : m_mix(CreateObject<UniformRandomVariable>()),
      m_gap(CreateObject<ExponentialRandomVariable>())
{
}

CxlMemoryClient::~CxlMemoryClient() = default;

void
CxlMemoryClient::SetPort(Ptr<CxlPort> port)
{
    m_port = port;
    m_send = MakeCallback(&CxlPort::Enqueue, port);
    port->SetReceiveCallback(MakeCallback(&CxlMemoryClient::Receive, this));
}

void
CxlMemoryClient::SetLocalMemory(Ptr<CxlMemoryExpander> memory)
{
    m_send = MakeCallback(&CxlMemoryExpander::Serve, memory)
                 .Bind(MakeCallback(&CxlMemoryClient::Receive, this));
}

void
CxlMemoryClient::SetSendCallback(Callback<void, const CxlMessage&> send, uint32_t requester)
{
    m_send = send;
    m_requester = requester;
}

bool
CxlMemoryClient::MoreToIssue() const
{
    return m_issued < m_requests && (m_stop.IsZero() || Simulator::Now() < m_stop);
}

bool
CxlMemoryClient::IsDone() const
{
    return !MoreToIssue() && m_outstanding == 0;
}

int64_t
CxlMemoryClient::AssignStreams(int64_t stream)
{
    m_mix->SetStream(stream);
    m_gap->SetStream(stream + 1);
    return 2;
}

void
CxlMemoryClient::Start(Time at)
{
    Simulator::Schedule(at - Simulator::Now(), &CxlMemoryClient::Arrive, this);
}

void
CxlMemoryClient::Arrive()
{
    if (!MoreToIssue())
    {
        CheckDone(); // nothing was issued, or a rate-limited stream ran out
        return;
    }
    if (m_outstanding == m_outstandingLimit)
    {
        m_waiting = true; // issued when a request completes
        return;
    }
    Issue();
    if (m_rate.GetBitRate() == 0)
    {
        while (m_outstanding < m_outstandingLimit && MoreToIssue())
        {
            Issue(); // fill the outstanding window
        }
        return;
    }
    ScheduleArrival();
}

void
CxlMemoryClient::ScheduleArrival()
{
    const double mean = 64.0 * 8 / m_rate.GetBitRate();
    Simulator::Schedule(Seconds(m_gap->GetValue(mean, 0)), &CxlMemoryClient::Arrive, this);
}

void
CxlMemoryClient::Issue()
{
    CxlMessage m;
    m.type = m_mix->GetValue() < m_readRatio ? CxlMessageType::M2sReq : CxlMessageType::M2sRwD;
    m.tag = m_issued;
    m.requester = m_requester;
    m.rowHit = m_pattern == CXL_ACCESS_STREAM;
    m.issued = Simulator::Now();
    if (m_issued == 0)
    {
        m_first = m.issued;
    }
    ++m_issued;
    ++m_outstanding;
    m_issueTrace(m);
    Simulator::Schedule(m_hostLatency / 2, &CxlMemoryClient::Send, this, m);
}

void
CxlMemoryClient::Send(const CxlMessage& m)
{
    m_send(m);
}

void
CxlMemoryClient::Receive(const CxlMessage& m)
{
    Simulator::Schedule(m_hostLatency / 2, &CxlMemoryClient::Complete, this, m);
}

void
CxlMemoryClient::Complete(const CxlMessage& m)
{
    const Time latency = Simulator::Now() - m.issued;
    m_latencies.push_back(latency);
    m_sorted.clear();
    m_last = Simulator::Now();
    --m_outstanding;
    m_completeTrace(m, latency);
    if (m_rate.GetBitRate() == 0 || m_waiting)
    {
        const bool restart = m_waiting;
        m_waiting = false;
        if (MoreToIssue())
        {
            Issue();
            if (restart && m_rate.GetBitRate() > 0)
            {
                ScheduleArrival();
            }
        }
    }
    CheckDone();
}

void
CxlMemoryClient::CheckDone()
{
    if (!m_finished && IsDone())
    {
        m_finished = true;
        if (!m_done.IsNull())
        {
            m_done();
        }
    }
}

Time
CxlMemoryClient::GetLatencyQuantile(double q) const
{
    if (m_latencies.empty())
    {
        return Time(0);
    }
    if (m_sorted.size() != m_latencies.size())
    {
        m_sorted = m_latencies; // sorted once for every quantile asked after the run
        std::sort(m_sorted.begin(), m_sorted.end());
    }
    return m_sorted[std::min(m_sorted.size() - 1, static_cast<size_t>(q * m_sorted.size()))];
}

double
CxlMemoryClient::GetAchievedBytesPerSecond() const
{
    const double span = (m_last - m_first).GetSeconds();
    return span > 0 ? 64.0 * m_latencies.size() / span : 0;
}

void
CxlMemoryClient::DoDispose()
{
    if (m_port)
    {
        m_port->SetReceiveCallback(MakeNullCallback<void, const CxlMessage&>());
    }
    m_port = nullptr;
    m_send = MakeNullCallback<void, const CxlMessage&>();
    m_done = MakeNullCallback<void>();
    Object::DoDispose();
}

} // namespace ns3
