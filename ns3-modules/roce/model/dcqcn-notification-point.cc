#include "ns3/dcqcn-notification-point.h"

#include "ns3/simulator.h"
#include "ns3/uinteger.h"

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(DcqcnNotificationPoint);

TypeId
DcqcnNotificationPoint::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::DcqcnNotificationPoint")
            .SetParent<Object>()
            .SetGroupName("Roce")
            .AddConstructor<DcqcnNotificationPoint>()
            .AddAttribute("CnpInterval", "At most one CNP per flow per interval (0: one per mark)",
                          TimeValue(MicroSeconds(50)),
                          MakeTimeAccessor(&DcqcnNotificationPoint::m_cnpInterval),
                          MakeTimeChecker(Time(0)))
            .AddAttribute("CnpPriority", "802.1Q priority of CNPs (ConnectX: 6)", UintegerValue(6),
                          MakeUintegerAccessor(&DcqcnNotificationPoint::m_cnpPriority),
                          MakeUintegerChecker<uint8_t>(0, 7))
            .AddAttribute("CnpDscp", "DSCP of CNPs (ConnectX: 48)", UintegerValue(48),
                          MakeUintegerAccessor(&DcqcnNotificationPoint::m_cnpDscp),
                          MakeUintegerChecker<uint8_t>(0, 63))
            .AddTraceSource("CnpDue", "A CE mark made a CNP due: (the flow it is for)",
                            MakeTraceSourceAccessor(&DcqcnNotificationPoint::m_cnpTrace),
                            "ns3::DcqcnNotificationPoint::FlowTracedCallback");
    return tid;
}

bool
DcqcnNotificationPoint::OnMarked(uint64_t flow)
{
    const Time now = Simulator::Now();
    const auto [it, first] = m_lastCnp.try_emplace(flow, now);
    if (!first)
    {
        if (now - it->second < m_cnpInterval)
        {
            return false;
        }
        it->second = now;
    }
    ++m_cnpsDue;
    m_cnpTrace(flow);
    return true;
}

void
DcqcnNotificationPoint::Forget(uint64_t flow)
{
    m_lastCnp.erase(flow);
}

} // namespace ns3
