/*
 * One collective operation run packet by packet: its schedule's transfers posted on a
 * transport as soon as the transfers they need have arrived (and been reduced, at the
 * ReduceRate of the receiving rank), every arrival applied to what the ranks hold,
 * and the end checked against what the operation must leave. Nothing is timed by
 * formula: the time is what the fabric took.
 */
#ifndef FABEMU_COLLECTIVE_H
#define FABEMU_COLLECTIVE_H

#include "ns3/collective-schedule.h"
#include "ns3/collective-transport.h"
#include "ns3/data-rate.h"
#include "ns3/traced-callback.h"

#include <memory>
#include <string>
#include <vector>

namespace ns3
{

/// One transfer as it ran.
struct CollectiveTransferRecord
{
    uint32_t from{0};
    uint32_t to{0};
    uint32_t step{0};
    uint64_t bytes{0};
    bool sent{false}; ///< posted on the transport (a failed collective leaves some unsent)
    Time posted;
    Time arrived; ///< and reduced, where it was reduced; zero until then
};

class Collective : public Object
{
  public:
    static TypeId GetTypeId();

    enum class State : uint8_t
    {
        Idle,
        Running,
        Completed, ///< every transfer arrived and every rank holds what the operation says
        Failed,    ///< a transfer failed, or the ranks do not hold what they must
    };

    using TransferTracedCallback = void (*)(const CollectiveTransferRecord& t);
    using EndTracedCallback = void (*)(Ptr<const Collective> c);

    void SetSchedule(const CollectiveSchedule& s);
    void SetTransport(Ptr<CollectiveTransport> t) { m_transport = t; }
    /// Stragglers: rank r's first sends (those that wait for nothing) leave \p delays[r]
    /// after Start; ranks past the end of \p delays are not late.
    void SetRankDelays(const std::vector<Time>& delays) { m_delays = delays; }
    /// Slow senders: every transfer rank r posts leaves \p delays[r] after it could (the
    /// time its host takes to start a message); ranks past the end are not slowed.
    void SetSendDelays(const std::vector<Time>& delays) { m_sendDelays = delays; }
    /// Called once when it ends, completed or failed.
    void SetDoneCallback(Callback<void, Ptr<Collective>> cb) { m_done = cb; }
    /// Posts the first transfers now.
    void Start();

    State GetState() const { return m_state; }
    /// Why it failed; empty otherwise.
    const std::string& GetFailure() const { return m_failure; }
    const CollectiveSchedule& GetSchedule() const { return *m_schedule; }
    Time GetStartTime() const { return m_started; }
    /// Start to the last arrival (completed) or to the failure.
    Time GetDuration() const { return m_ended - m_started; }
    const std::vector<CollectiveTransferRecord>& GetTransfers() const { return m_records; }
    /// Bytes every rank has received, by rank.
    std::vector<uint64_t> GetBytesReceived() const;
    /// The share of its transfers that have arrived (and been reduced where they are), 0 to 1.
    double GetProgress() const;

  protected:
    void DoDispose() override;

  private:
    void Post(uint32_t i); ///< nothing once the collective failed
    /// Posts transfer \p i after \p wait and its sender's send delay (now if both are 0).
    void PostAfter(uint32_t i, Time wait);
    void Arrived(uint32_t i, std::shared_ptr<std::vector<RankSet>> sent, bool ok,
                 const std::string& why);
    void Ready(uint32_t i);
    void Fail(const std::string& why);
    void End();

    DataRate m_reduceRate;
    std::unique_ptr<CollectiveSchedule> m_schedule;
    std::unique_ptr<CollectiveHoldings> m_holdings;
    Ptr<CollectiveTransport> m_transport;
    std::vector<std::vector<uint32_t>> m_dependents; ///< by transfer: those that need it
    std::vector<uint32_t> m_waitingFor;              ///< by transfer: arrivals still needed
    std::vector<Time> m_reducerFree;                 ///< by rank: when its reduction engine idles
    std::vector<Time> m_delays;                      ///< by rank: how late its first sends leave
    std::vector<Time> m_sendDelays;                  ///< by rank: how late each of its sends leaves
    std::vector<CollectiveTransferRecord> m_records;
    std::vector<uint64_t> m_bytesIn; ///< by rank: bytes of the transfers that have arrived
    size_t m_ready{0};
    State m_state{State::Idle};
    std::string m_failure;
    Time m_started;
    Time m_ended;
    Callback<void, Ptr<Collective>> m_done;
    TracedCallback<const CollectiveTransferRecord&> m_sentTrace;
    TracedCallback<const CollectiveTransferRecord&> m_arrivedTrace;
    TracedCallback<Ptr<const Collective>> m_endTrace;
};

} // namespace ns3

#endif
