#include "ns3/link-errors.h"

namespace ns3
{

Ptr<ErrorModel>
BitErrorModel(uint32_t link, uint32_t end, double ber)
{
    Ptr<RateErrorModel> em = CreateObject<RateErrorModel>();
    em->SetUnit(RateErrorModel::ERROR_UNIT_BIT);
    em->SetRate(ber);
    em->AssignStreams(kBitErrorStreamBase + 2 * int64_t{link} + end);
    return em;
}

} // namespace ns3
