#include "ns3/ib-subnet-manager.h"

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(IbSubnetManager);

TypeId
IbSubnetManager::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::IbSubnetManager")
            .SetParent<Object>()
            .SetGroupName("Infiniband")
            .AddConstructor<IbSubnetManager>()
            .AddAttribute("SweepInterval",
                          "How long after a port changes state (a link down or back up) the "
                          "new forwarding tables are in the switches. OpenSM sweeps every "
                          "10 s (sweep_interval) and at once on a port's trap; the default "
                          "stands for the trap's sweep on a small subnet",
                          TimeValue(MilliSeconds(1)),
                          MakeTimeAccessor(&IbSubnetManager::m_sweepInterval),
                          MakeTimeChecker(Time()));
    return tid;
}

} // namespace ns3
