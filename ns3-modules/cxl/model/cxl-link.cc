#include "ns3/cxl-link.h"

#include "ns3/cxl-port.h"
#include "ns3/double.h"
#include "ns3/string.h"
#include "ns3/uinteger.h"

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(CxlLink);

TypeId
CxlLink::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::CxlLink")
            .SetParent<Object>()
            .SetGroupName("Cxl")
            .AddConstructor<CxlLink>()
            .AddAttribute("Version", "CXL version: 1.1, 2.0, 3.0, 3.1, or ccix", StringValue("2.0"),
                          MakeStringAccessor(&CxlLink::m_version), MakeStringChecker())
            .AddAttribute("GigaTransfers", "GT/s per lane (0: the version's fastest)",
                          DoubleValue(0), MakeDoubleAccessor(&CxlLink::m_gigaTransfers),
                          MakeDoubleChecker<double>(0))
            .AddAttribute("Lanes", "Link width: 1, 2, 4, 8 or 16", UintegerValue(16),
                          MakeUintegerAccessor(&CxlLink::m_lanes), MakeUintegerChecker<uint32_t>())
            .AddAttribute("FlitMode", "68, 256 or 256-lopt (empty: 256 at 64 GT/s, else 68)",
                          StringValue(""), MakeStringAccessor(&CxlLink::m_flitMode),
                          MakeStringChecker())
            .AddAttribute("Delay",
                          "One-way latency of the link: both ends' PHY and link-layer "
                          "pipelines and the wire",
                          TimeValue(NanoSeconds(25)), MakeTimeAccessor(&CxlLink::m_delay),
                          MakeTimeChecker(Time(0)))
            .AddAttribute("BitErrorRate",
                          "Probability that a wire bit is wrong; a hit flit fails its CRC and "
                          "is retried (0: error-free; at most 1e-3, where 42 % of 68-byte "
                          "flits fail)",
                          DoubleValue(0.0), MakeDoubleAccessor(&CxlLink::m_ber),
                          MakeDoubleChecker<double>(0.0, 1e-3))
            .AddAttribute("RequestCredits",
                          "M2S requests (Req, RwD) the receiver buffers: the sender's credits "
                          "(0: not counted)",
                          UintegerValue(0), MakeUintegerAccessor(&CxlLink::m_requestCredits),
                          MakeUintegerChecker<uint32_t>());
    return tid;
}

CxlLink::CxlLink() = default;
CxlLink::~CxlLink() = default;

CxlLinkSpec
CxlLink::GetSpec() const
{
    CxlLinkSpec s;
    s.version = m_version;
    s.gigaTransfers = m_gigaTransfers > 0 ? m_gigaTransfers : CxlMaxGigaTransfers(m_version);
    s.lanes = m_lanes;
    s.mode = CxlDefaultFlitMode(s.gigaTransfers);
    if (!m_flitMode.empty() && !CxlParseFlitMode(m_flitMode, &s.mode))
    {
        s.gigaTransfers = -1; // Check() names the flit mode
    }
    return s;
}

std::string
CxlLink::Check() const
{
    CxlFlitMode m;
    if (!m_flitMode.empty() && !CxlParseFlitMode(m_flitMode, &m))
    {
        return "flit mode '" + m_flitMode + "' is none of 68, 256 and 256-lopt";
    }
    return GetSpec().Check();
}

Time
CxlLink::GetFlitTime() const
{
    return Seconds(GetSpec().FlitSeconds());
}

void
CxlLink::Connect(Ptr<CxlPort> a, Ptr<CxlPort> b)
{
    m_a = a;
    m_b = b;
    a->Attach(this, b);
    b->Attach(this, a);
}

Ptr<CxlPort>
CxlLink::GetPort(uint32_t i) const
{
    return i == 0 ? m_a : m_b;
}

void
CxlLink::DoDispose()
{
    for (auto* port : {&m_a, &m_b})
    {
        if (*port)
        {
            (*port)->Dispose(); // the two ends hold each other
        }
    }
    m_a = nullptr;
    m_b = nullptr;
    Object::DoDispose();
}

} // namespace ns3
