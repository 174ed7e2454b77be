#include "ns3/ieee-crc32.h"

#include <isa-l/crc.h>

namespace ns3
{

uint32_t
IeeeCrc32(uint32_t crc, const uint8_t* data, size_t len)
{
    return crc32_gzip_refl(crc, data, len);
}

} // namespace ns3
