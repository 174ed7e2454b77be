#include "ns3/pcie-spec.h"

#include <cmath>

namespace ns3
{

double
PcieTransferRate(uint8_t generation)
{
    switch (generation)
    {
    case 1:
        return 2.5;
    case 2:
        return 5.0;
    case 3:
        return 8.0;
    case 4:
        return 16.0;
    case 5:
        return 32.0;
    case 6:
        return 64.0;
    default:
        return 0.0;
    }
}

double
PcieEncodingEfficiency(uint8_t generation)
{
    if (generation <= 2)
    {
        return 8.0 / 10.0;
    }
    if (generation <= 5)
    {
        return 128.0 / 130.0;
    }
    return 1.0;
}

bool
PcieFlitMode(uint8_t generation)
{
    return generation >= 6;
}

double
PcieBytePicoseconds(uint8_t generation, uint8_t width)
{
    // GT/s per lane * encoding = data Gb/s per lane; bytes are striped over the lanes.
    const double gbps = PcieTransferRate(generation) * PcieEncodingEfficiency(generation) * width;
    return 8.0 * 1000.0 / gbps;
}

Time
PcieSymbolTime(uint8_t generation)
{
    const double uiPs = 1000.0 / PcieTransferRate(generation);
    return Time::FromDouble((generation <= 2 ? 10.0 : 8.0) * uiPs, Time::PS);
}

double
PcieLinkBytesPerSecond(uint8_t generation, uint8_t width)
{
    return 1e12 / PcieBytePicoseconds(generation, width);
}

double
PcieTlpWireBytes(uint8_t generation, uint32_t headerBytes, uint32_t payloadBytes, bool ecrc)
{
    const double tlp = headerBytes + payloadBytes + (ecrc ? 4 : 0);
    if (PcieFlitMode(generation))
    {
        // Flit mode: no per-TLP framing or LCRC; the TLP fills 236 of every 256 bytes.
        return tlp * kPcieFlitBytes / kPcieFlitTlpBytes;
    }
    return tlp + kPcieTlpLinkOverhead;
}

double
PcieDllpWireBytes(uint8_t generation)
{
    return PcieFlitMode(generation) ? 0.0 : kPcieDllpWireBytes;
}

double
PcieAckFactor(uint32_t maxPayload, uint8_t width)
{
    if (maxPayload <= 256)
    {
        return width <= 4 ? 1.4 : width <= 8 ? 2.5 : 3.0;
    }
    return width <= 8 ? 1.0 : 2.0;
}

uint32_t
PcieInternalDelaySymbols(uint8_t generation)
{
    return generation == 1 ? 19 : generation == 2 ? 70 : 115;
}

Time
PcieAckLatencyLimit(uint8_t generation, uint8_t width, uint32_t maxPayload)
{
    const double symbols =
        (maxPayload + kPcieTimerTlpOverhead) * PcieAckFactor(maxPayload, width) / width +
        PcieInternalDelaySymbols(generation);
    return Time::FromDouble(symbols * PcieSymbolTime(generation).GetPicoSeconds(), Time::PS);
}

Time
PcieReplayTimerLimit(uint8_t generation, uint8_t width, uint32_t maxPayload)
{
    return 3 * PcieAckLatencyLimit(generation, width, maxPayload);
}

std::string
PcieCheckGeneration(uint32_t generation)
{
    if (generation >= 1 && generation <= 6)
    {
        return "";
    }
    return "Generation " + std::to_string(generation) + " is not a PCIe generation (1 to 6)";
}

std::string
PcieCheckWidth(uint32_t width)
{
    if (width == 1 || width == 2 || width == 4 || width == 8 || width == 16)
    {
        return "";
    }
    return "Width x" + std::to_string(width) + " is not a PCIe link width (1, 2, 4, 8 or 16)";
}

std::string
PcieCheckSizeEncoding(const std::string& name, uint32_t bytes)
{
    if (bytes >= 128 && bytes <= 4096 && (bytes & (bytes - 1)) == 0)
    {
        return "";
    }
    return name + " " + std::to_string(bytes) + " is not a power of two from 128 to 4096 bytes";
}

std::string
PcieCheckRcb(uint32_t bytes)
{
    if (bytes == 64 || bytes == 128)
    {
        return "";
    }
    return "ReadCompletionBoundary " + std::to_string(bytes) + " must be 64 or 128 bytes";
}

} // namespace ns3
