#include "dispose-at-destroy.h"

#include "ns3/simulator.h"

namespace ns3
{

void
DisposeAtDestroy(Ptr<Object> object)
{
    if (object)
    {
        Simulator::ScheduleDestroy(&Object::Dispose, object);
    }
}

} // namespace ns3
