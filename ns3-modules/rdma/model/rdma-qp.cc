#include "ns3/rdma-qp.h"

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(RdmaQp);

TypeId
RdmaQp::GetTypeId()
{
    static TypeId tid = TypeId("ns3::RdmaQp").SetParent<Object>().SetGroupName("Rdma");
    return tid;
}

} // namespace ns3
