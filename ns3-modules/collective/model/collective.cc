#include "ns3/collective.h"

#include "ns3/simulator.h"
#include "ns3/trace-source-accessor.h"

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(Collective);

TypeId
Collective::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::Collective")
            .SetParent<Object>()
            .SetGroupName("Collective")
            .AddConstructor<Collective>()
            .AddAttribute("ReduceRate",
                          "Bytes a rank sums into its buffer per second, for each reducing "
                          "arrival; 0 sums at no cost",
                          DataRateValue(DataRate(0)),
                          MakeDataRateAccessor(&Collective::m_reduceRate), MakeDataRateChecker())
            .AddTraceSource("TransferSent", "A transfer was posted on the transport",
                            MakeTraceSourceAccessor(&Collective::m_sentTrace),
                            "ns3::Collective::TransferTracedCallback")
            .AddTraceSource("TransferArrived",
                            "A transfer arrived at its rank (and was reduced, where it is)",
                            MakeTraceSourceAccessor(&Collective::m_arrivedTrace),
                            "ns3::Collective::TransferTracedCallback")
            .AddTraceSource("End", "The collective completed or failed",
                            MakeTraceSourceAccessor(&Collective::m_endTrace),
                            "ns3::Collective::EndTracedCallback");
    return tid;
}

void
Collective::SetSchedule(const CollectiveSchedule& s)
{
    NS_ABORT_MSG_IF(m_state != State::Idle, "Collective: the schedule is set before Start");
    m_schedule = std::make_unique<CollectiveSchedule>(s);
}

void
Collective::Start()
{
    NS_ABORT_MSG_IF(!m_schedule || !m_transport,
                    "Collective: Start needs a schedule and a transport");
    NS_ABORT_MSG_IF(m_state != State::Idle, "Collective: started twice");
    NS_ABORT_MSG_IF(m_transport->GetNRanks() < m_schedule->ranks,
                    "Collective: the schedule has " << m_schedule->ranks << " ranks, the transport "
                                                    << m_transport->GetNRanks());
    const auto& transfers = m_schedule->transfers;
    m_holdings = std::make_unique<CollectiveHoldings>(*m_schedule);
    m_dependents.assign(transfers.size(), {});
    m_waitingFor.assign(transfers.size(), 0);
    m_reducerFree.assign(m_schedule->ranks, Time(0));
    m_bytesIn.assign(m_schedule->ranks, 0);
    m_records.assign(transfers.size(), {});
    for (uint32_t i = 0; i < transfers.size(); ++i)
    {
        const auto& t = transfers[i];
        m_records[i] = {t.from, t.to, t.step, t.bytes, false, Time(0), Time(0)};
        m_waitingFor[i] = static_cast<uint32_t>(t.after.size());
        for (uint32_t a : t.after)
        {
            m_dependents[a].push_back(i);
        }
    }
    m_state = State::Running;
    m_started = Simulator::Now();
    for (uint32_t i = 0; i < transfers.size(); ++i)
    {
        if (m_waitingFor[i] != 0)
        {
            continue;
        }
        // A straggler's first sends leave late; a sum in the switch waits for the latest
        // of its ranks.
        const auto& t = transfers[i];
        Time delay;
        for (uint32_t r :
             t.via == CollectiveVia::SwitchReduce ? t.group : std::vector<uint32_t>{t.from})
        {
            delay = std::max(delay, r < m_delays.size() ? m_delays[r] : Time(0));
        }
        PostAfter(i, delay);
    }
}

void
Collective::PostAfter(uint32_t i, Time wait)
{
    const uint32_t from = m_schedule->transfers[i].from;
    const Time late = wait + (from < m_sendDelays.size() ? m_sendDelays[from] : Time(0));
    if (late.IsStrictlyPositive())
    {
        Simulator::Schedule(late, &Collective::Post, this, i);
        return;
    }
    Post(i);
}

void
Collective::Post(uint32_t i)
{
    if (m_state != State::Running)
    {
        return; // it failed while posting the first transfers
    }
    const auto& t = m_schedule->transfers[i];
    std::string wrong;
    auto sent = std::make_shared<std::vector<RankSet>>(m_holdings->Snapshot(t, &wrong));
    if (!wrong.empty())
    {
        Fail(wrong);
        return;
    }
    m_records[i].sent = true;
    m_records[i].posted = Simulator::Now();
    m_sentTrace(m_records[i]);
    auto arrived = MakeCallback(&Collective::Arrived, this).Bind(i, sent);
    if (t.via != CollectiveVia::Rank)
    {
        m_transport->SendInSwitch(t.via, t.from, t.to, t.group, t.bytes, arrived);
        return;
    }
    m_transport->Send(t.from, t.to, t.bytes, arrived);
}

void
Collective::Arrived(uint32_t i, std::shared_ptr<std::vector<RankSet>> sent, bool ok,
                    const std::string& why)
{
    if (m_state != State::Running)
    {
        return; // it failed already; later arrivals change nothing
    }
    const auto& t = m_schedule->transfers[i];
    if (!ok)
    {
        const std::string what =
            t.via == CollectiveVia::SwitchReduce ? "the sum in the switch into "
            : t.via == CollectiveVia::SwitchMulticast
                ? "the multicast through the switch from "
                : "the transfer from " + m_transport->GetRankName(t.from) + " to ";
        Fail(what +
             m_transport->GetRankName(t.via == CollectiveVia::SwitchMulticast ? t.from : t.to) +
             " failed: " + why);
        return;
    }
    const std::string wrong = m_holdings->Apply(t, *sent);
    if (!wrong.empty())
    {
        Fail(wrong);
        return;
    }
    Time at = Simulator::Now();
    if (t.reduce && m_reduceRate.GetBitRate() > 0)
    {
        // The receiving rank sums arrivals one after another at its ReduceRate.
        Time& free = m_reducerFree[t.to];
        free = std::max(free, at) + m_reduceRate.CalculateBytesTxTime(t.bytes);
        at = free;
    }
    Simulator::Schedule(at - Simulator::Now(), &Collective::Ready, this, i);
}

void
Collective::Ready(uint32_t i)
{
    if (m_state != State::Running)
    {
        return;
    }
    m_records[i].arrived = Simulator::Now();
    const auto& t = m_schedule->transfers[i];
    if (t.via == CollectiveVia::SwitchMulticast)
    {
        for (uint32_t r : t.group)
        {
            m_bytesIn[r] += t.bytes; // every copy crosses its rank's links, the sender's too
        }
    }
    else
    {
        m_bytesIn[m_records[i].to] += m_records[i].bytes;
    }
    m_arrivedTrace(m_records[i]);
    for (uint32_t d : m_dependents[i])
    {
        if (--m_waitingFor[d] == 0)
        {
            PostAfter(d, Time(0));
        }
    }
    if (++m_ready == m_schedule->transfers.size())
    {
        const std::string wrong = m_holdings->Check();
        if (!wrong.empty())
        {
            Fail(wrong);
            return;
        }
        m_state = State::Completed;
        End();
    }
}

void
Collective::Fail(const std::string& why)
{
    m_state = State::Failed;
    m_failure = why;
    End();
}

void
Collective::End()
{
    m_ended = Simulator::Now();
    m_endTrace(this);
    if (!m_done.IsNull())
    {
        m_done(this);
    }
}

std::vector<uint64_t>
Collective::GetBytesReceived() const
{
    return m_bytesIn;
}

double
Collective::GetProgress() const
{
    const size_t n = m_schedule ? m_schedule->transfers.size() : 0;
    return n == 0 ? 0.0 : static_cast<double>(m_ready) / n;
}

void
Collective::DoDispose()
{
    m_transport = nullptr;
    m_done = MakeNullCallback<void, Ptr<Collective>>();
    Object::DoDispose();
}

} // namespace ns3
