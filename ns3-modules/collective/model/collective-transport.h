/*
 * What a collective sees of whatever joins its ranks: a way to move bytes from one
 * rank to another and hear when they have all arrived, and what such a move costs
 * on an idle path (the analytical mode's alpha and bandwidth). An RDMA fabric, a
 * server's NVLink, or both behind one rank numbering, implement it.
 */
#ifndef FABEMU_COLLECTIVE_TRANSPORT_H
#define FABEMU_COLLECTIVE_TRANSPORT_H

#include "ns3/callback.h"
#include "ns3/collective-schedule.h"
#include "ns3/nstime.h"
#include "ns3/object.h"

#include <string>
#include <vector>

namespace ns3
{

class CollectiveTransport : public Object
{
  public:
    static TypeId GetTypeId();

    /// Called once per Send: true when every byte arrived; false and why when it failed.
    using Done = Callback<void, bool, const std::string&>;

    virtual uint32_t GetNRanks() const = 0;
    /// What results call the ranks, by rank ("h3", "h0.gpu2").
    void SetRankNames(const std::vector<std::string>& names) { m_names = names; }
    /// Rank \p r's name: as set, else the transport's own (DefaultRankName).
    std::string GetRankName(uint32_t r) const
    {
        return r < m_names.size() ? m_names[r] : DefaultRankName(r);
    }
    /// Moves \p bytes from rank \p from to rank \p to; \p done once they have arrived.
    virtual void Send(uint32_t from, uint32_t to, uint64_t bytes, Done done) = 0;

    /// A transfer of S bytes alone on the path takes Alpha + S / BytesPerSecond.
    struct PathCost
    {
        Time alpha;
        double bytesPerSecond{0};
    };
    virtual PathCost GetPathCost(uint32_t from, uint32_t to) const = 0;
    /// Whether rank \p from can send to rank \p to at all (GetPathCost needs it).
    virtual bool Reaches(uint32_t from, uint32_t to) const
    {
        (void)from;
        (void)to;
        return true;
    }

    /// "" when a switch joining \p ranks can sum and multicast among them (NVLS), else
    /// why not. None can unless the transport says so.
    virtual std::string CheckInSwitch(const std::vector<uint32_t>& ranks) const;
    /**
     * \brief A transfer in the switch (CheckInSwitch first): SwitchReduce sums \p bytes of
     * every rank of \p group and hands the sum to \p to; SwitchMulticast copies \p bytes
     * of \p from to every rank of \p group. \p done once all of it is in. Fails unless
     * the transport says otherwise.
     */
    virtual void SendInSwitch(CollectiveVia via, uint32_t from, uint32_t to,
                              const std::vector<uint32_t>& group, uint64_t bytes, Done done);
    /// What rank \p r takes in from the switch when it sums or copies (alpha, and the
    /// rate of what the switch makes for it); zero where CheckInSwitch fails.
    virtual PathCost GetInSwitchCost(uint32_t r) const;

  protected:
    /// A rank's name when none was set ("h3": the host it is on).
    virtual std::string DefaultRankName(uint32_t r) const = 0;

  private:
    std::vector<std::string> m_names;
};

} // namespace ns3

#endif
