#include "ns3/link-outages.h"

#include "ns3/pointer.h"

namespace ns3
{

namespace
{

/// What a down link does to each frame that reaches an end: loses it. No random draw, so
/// an outage leaves every other stream of the run as it was.
class DeadLink : public ErrorModel
{
  private:
    bool DoCorrupt(Ptr<Packet>) override { return IsEnabled(); } // off once the link is back
    void DoReset() override {}
};

} // namespace

bool
LinkOutages::SetUp(uint32_t link, const std::array<Ptr<Object>, 2>& ends, bool up)
{
    if (up != IsDown(link))
    {
        return false;
    }
    if (!up)
    {
        Outage o;
        o.dropsBefore = m_drops(link);
        for (uint32_t end = 0; end < 2; ++end)
        {
            PointerValue model;
            ends[end]->GetAttribute("ReceiveErrorModel", model);
            o.saved[end] = model.Get<ErrorModel>();
            ends[end]->SetAttribute("ReceiveErrorModel", PointerValue(CreateObject<DeadLink>()));
        }
        m_down[link] = o;
        return true;
    }
    const Outage& o = m_down.at(link);
    m_pastDrops += m_drops(link) - o.dropsBefore;
    for (uint32_t end = 0; end < 2; ++end)
    {
        if (o.saved[end])
        {
            ends[end]->SetAttribute("ReceiveErrorModel", PointerValue(o.saved[end]));
            continue;
        }
        // No model before (a device takes no null one): the dead link's, switched off.
        PointerValue model;
        ends[end]->GetAttribute("ReceiveErrorModel", model);
        model.Get<ErrorModel>()->Disable();
    }
    m_down.erase(link);
    return true;
}

void
LinkOutages::SetErrorModel(uint32_t link, const std::array<Ptr<Object>, 2>& ends, uint32_t end,
                           Ptr<ErrorModel> model)
{
    const auto it = m_down.find(link);
    if (it != m_down.end())
    {
        it->second.saved.at(end) = model;
        return;
    }
    ends.at(end)->SetAttribute("ReceiveErrorModel", PointerValue(model));
}

uint64_t
LinkOutages::GetDrops() const
{
    uint64_t n = m_pastDrops;
    for (const auto& [link, o] : m_down)
    {
        n += m_drops(link) - o.dropsBefore;
    }
    return n;
}

} // namespace ns3
