#include "ns3/cxl-spec.h"

#include "ns3/pcie-spec.h"

#include <fmt/format.h>

#include <cmath>

namespace ns3
{

std::string
CxlMessageName(CxlMessageType t)
{
    switch (t)
    {
    case CxlMessageType::M2sReq:
        return "M2S Req";
    case CxlMessageType::M2sRwD:
        return "M2S RwD";
    case CxlMessageType::S2mNdr:
        return "S2M NDR";
    case CxlMessageType::S2mDrs:
        return "S2M DRS";
    case CxlMessageType::Io:
        return "CXL.io";
    }
    return "?";
}

uint32_t
CxlHeadersPerSlot(CxlMessageType t)
{
    // 128-bit slots; header widths of CXL 2.0 (docs/cxl.md, "Flits").
    switch (t)
    {
    case CxlMessageType::M2sReq:
    case CxlMessageType::M2sRwD:
        return 128 / 87;
    case CxlMessageType::S2mNdr:
        return 128 / 30;
    case CxlMessageType::S2mDrs:
        return 128 / 40;
    case CxlMessageType::Io:
        return 1;
    }
    return 1;
}

uint32_t
CxlIoSlots(uint32_t payload)
{
    // CXL.io is PCIe's transaction and data link layers (Gen5 framing below 64 GT/s).
    const double wire = PcieTlpWireBytes(5, 16, payload, false);
    return static_cast<uint32_t>(std::ceil(wire / 16));
}

uint32_t
CxlDataSlots(CxlMessageType t)
{
    return t == CxlMessageType::M2sRwD || t == CxlMessageType::S2mDrs ? 4 : 0;
}

double
CxlMaxGigaTransfers(const std::string& version)
{
    if (version == "1.1" || version == "2.0")
    {
        return 32;
    }
    if (version == "3.0" || version == "3.1")
    {
        return 64;
    }
    return version == "ccix" ? 25 : 0;
}

CxlFlitMode
CxlDefaultFlitMode(double gigaTransfers)
{
    return gigaTransfers > 32 ? CxlFlitMode::Flit256 : CxlFlitMode::Flit68;
}

std::string
CxlFlitModeName(CxlFlitMode m)
{
    switch (m)
    {
    case CxlFlitMode::Flit68:
        return "68";
    case CxlFlitMode::Flit256:
        return "256";
    case CxlFlitMode::Flit256LOpt:
        return "256-lopt";
    }
    return "?";
}

bool
CxlParseFlitMode(const std::string& name, CxlFlitMode* m)
{
    for (CxlFlitMode c : {CxlFlitMode::Flit68, CxlFlitMode::Flit256, CxlFlitMode::Flit256LOpt})
    {
        if (CxlFlitModeName(c) == name)
        {
            *m = c;
            return true;
        }
    }
    return false;
}

std::string
CxlLinkSpec::Check() const
{
    const double max = CxlMaxGigaTransfers(version);
    if (max == 0)
    {
        return fmt::format("CXL version '{}' is none of 1.1, 2.0, 3.0, 3.1 and ccix", version);
    }
    if (gigaTransfers <= 0 || gigaTransfers > max)
    {
        return fmt::format("{} GT/s: CXL {} runs at up to {} GT/s per lane", gigaTransfers, version,
                           max);
    }
    if (gigaTransfers == 25 && version != "ccix")
    {
        return "25 GT/s is CCIX's extended speed mode, not a CXL rate";
    }
    if (lanes != 1 && lanes != 2 && lanes != 4 && lanes != 8 && lanes != 16)
    {
        return fmt::format("{} lanes: a CXL link is x1, x2, x4, x8 or x16", lanes);
    }
    const bool big = mode != CxlFlitMode::Flit68;
    if (big && gigaTransfers < 64)
    {
        return fmt::format("a {}-byte flit at {} GT/s: 256-byte flits are CXL 3.x's 64 GT/s "
                           "(PCIe 6.0 PAM4) format; below 64 GT/s flits are 68 bytes",
                           FlitBytes(), gigaTransfers);
    }
    if (!big && gigaTransfers > 32)
    {
        return fmt::format("68-byte flits at {} GT/s: at 64 GT/s CXL 3.x uses 256-byte flits",
                           gigaTransfers);
    }
    return "";
}

uint32_t
CxlLinkSpec::FlitBytes() const
{
    return mode == CxlFlitMode::Flit68 ? 68 : 256;
}

uint32_t
CxlLinkSpec::Slots() const
{
    switch (mode)
    {
    case CxlFlitMode::Flit68:
        return 4; // 68 - 2 (protocol ID) - 2 (CRC) = 64
    case CxlFlitMode::Flit256:
        return 15; // 256 - 2 (header) - 8 (CRC) - 6 (FEC) = 240
    case CxlFlitMode::Flit256LOpt:
        return 14; // 256 - 2 - 12 (CRC, 2 x 6) - 6 (FEC) = 236: 14 whole slots
    }
    return 0;
}

double
CxlLinkSpec::BytesPerSecond() const
{
    const double raw = gigaTransfers * 1e9 * lanes / 8;
    // 128b/130b up to 32 GT/s; 64 GT/s flit mode carries its own FEC and CRC in the flit.
    return gigaTransfers >= 64 ? raw : raw * 128 / 130;
}

double
CxlLinkSpec::LineBytesPerSecond(CxlMessageType t) const
{
    const double h = CxlHeadersPerSlot(t);
    const double data = CxlDataSlots(t);
    const double slotShare = Slots() * 16.0 / FlitBytes();
    return BytesPerSecond() * slotShare * (h * data) / (1 + h * data);
}

} // namespace ns3
