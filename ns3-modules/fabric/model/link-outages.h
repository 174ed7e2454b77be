/*
 * Links that go down and come back (a fault) on any fabric: while a link is down, each of
 * its two ends drops whatever arrives, as a cable pulled out loses what is on it. The ends
 * are any objects with a ReceiveErrorModel attribute (RoceNetDevice, IbPort, ns-3's
 * PointToPointNetDevice); the error model they had (bit errors, or none) comes back with
 * the link. Routing's reaction is each fabric helper's own.
 */
#ifndef FABEMU_LINK_OUTAGES_H
#define FABEMU_LINK_OUTAGES_H

#include "ns3/error-model.h"
#include "ns3/object.h"
#include "ns3/ptr.h"

#include <array>
#include <cstdint>
#include <functional>
#include <map>

namespace ns3
{

class LinkOutages
{
  public:
    /// How many frames the two ends of a link have dropped on arrival so far (the
    /// devices' PhyRxDrop count, bit errors and outages together).
    using DropCount = std::function<uint64_t(uint32_t link)>;

    explicit LinkOutages(DropCount drops) : m_drops(std::move(drops)) {}

    /// Link \p link, whose ends are \p ends, goes down (\p up false) or comes back up;
    /// false (and nothing happens) when it already is so.
    bool SetUp(uint32_t link, const std::array<Ptr<Object>, 2>& ends, bool up);
    bool IsDown(uint32_t link) const { return m_down.count(link) != 0; }
    bool AnyDown() const { return !m_down.empty(); }
    /// Sets end \p end's receive error model to \p model, now if the link is up, else
    /// when it comes back (bit errors set during an outage).
    void SetErrorModel(uint32_t link, const std::array<Ptr<Object>, 2>& ends, uint32_t end,
                       Ptr<ErrorModel> model);
    /// Frames lost to outages so far (those still going on included).
    uint64_t GetDrops() const;

  private:
    struct Outage
    {
        std::array<Ptr<ErrorModel>, 2> saved; ///< the ends' models before the outage
        uint64_t dropsBefore{0};
    };

    DropCount m_drops;
    std::map<uint32_t, Outage> m_down;
    uint64_t m_pastDrops{0};
};

} // namespace ns3

#endif
