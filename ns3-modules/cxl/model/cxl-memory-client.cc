#include "ns3/cxl-memory-client.h"

#include "ns3/cxl-port.h"
#include "ns3/double.h"
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
            .AddAttribute("HostLatency",
                          "Round trip between the core and the CXL root port (caches, mesh, "
                          "home agent)",
                          TimeValue(NanoSeconds(60)),
                          MakeTimeAccessor(&CxlMemoryClient::m_hostLatency),
                          MakeTimeChecker(Time(0)))
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
    port->SetReceiveCallback(MakeCallback(&CxlMemoryClient::Receive, this));
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
    if (m_issued == m_requests)
    {
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
        Arrive(); // fill the outstanding window
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
    m.issued = Simulator::Now();
    if (m_issued == 0)
    {
        m_first = m.issued;
    }
    ++m_issued;
    ++m_outstanding;
    Simulator::Schedule(m_hostLatency / 2, &CxlPort::Enqueue, m_port, m);
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
    m_last = Simulator::Now();
    --m_outstanding;
    m_completeTrace(m, latency);
    if (m_rate.GetBitRate() == 0 || m_waiting)
    {
        const bool restart = m_waiting;
        m_waiting = false;
        if (m_issued < m_requests)
        {
            Issue();
            if (restart && m_rate.GetBitRate() > 0)
            {
                ScheduleArrival();
            }
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
    std::vector<Time> sorted = m_latencies;
    const size_t k = std::min(sorted.size() - 1, static_cast<size_t>(q * sorted.size()));
    std::nth_element(sorted.begin(), sorted.begin() + k, sorted.end());
    return sorted[k];
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
    Object::DoDispose();
}

} // namespace ns3
