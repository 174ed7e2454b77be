#include "ns3/collective-transport.h"

#include "ns3/simulator.h"

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(CollectiveTransport);

TypeId
CollectiveTransport::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::CollectiveTransport").SetParent<Object>().SetGroupName("Collective");
    return tid;
}

std::string
CollectiveTransport::CheckInSwitch(const std::vector<uint32_t>&) const
{
    return "no switch of this transport sums or multicasts (NVLS runs on one server's "
           "NVSwitches)";
}

void
CollectiveTransport::SendInSwitch(CollectiveVia, uint32_t, uint32_t,
                                  const std::vector<uint32_t>& group, uint64_t, Done done)
{
    const std::string why = CheckInSwitch(group);
    Simulator::ScheduleNow([done, why] { done(false, why); });
}

CollectiveTransport::PathCost
CollectiveTransport::GetInSwitchCost(uint32_t) const
{
    return {};
}

} // namespace ns3
