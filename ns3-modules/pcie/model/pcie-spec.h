/*
 * What the PCI Express Base Specification fixes, as plain functions: lane
 * rates and encodings per generation, wire bytes of a TLP and a DLLP, the
 * Ack latency limit and the replay timer, and the checks that refuse
 * configurations the specification does not allow. docs/pcie.md gives the
 * sources and the reading of each figure.
 */
#ifndef FABEMU_PCIE_SPEC_H
#define FABEMU_PCIE_SPEC_H

#include "ns3/nstime.h"

#include <cstdint>
#include <string>

namespace ns3
{

/// A data credit covers 4 DW (16 bytes) of payload.
constexpr uint32_t kPcieDataCreditBytes = 16;
/// A DLLP on the wire: 6 bytes plus 2 of framing (SDP+END, or the Gen3 SDP token).
constexpr uint32_t kPcieDllpWireBytes = 8;
/// Per-TLP link overhead before Gen6 flit mode: framing (STP/END or the Gen3 STP
/// token with the sequence number) plus sequence number and 4-byte LCRC.
constexpr uint32_t kPcieTlpLinkOverhead = 8;
/// Gen6 flit: 256 bytes carrying 236 bytes of TLP, 6 DLP, 8 CRC, 6 FEC.
constexpr uint32_t kPcieFlitBytes = 256;
constexpr uint32_t kPcieFlitTlpBytes = 236;
/// The spec's TLPOverhead in the Ack latency and replay timer formulas (symbols).
constexpr uint32_t kPcieTimerTlpOverhead = 28;

/// Lane rate of a generation, in GT/s (0 for an unknown generation).
double PcieTransferRate(uint8_t generation);
/// Fraction of line bits that carry data: 8/10, 128/130, or 1 (Gen6 PAM4 flit, 1b/1b).
double PcieEncodingEfficiency(uint8_t generation);
/// Whether the generation runs in flit mode (Gen6).
bool PcieFlitMode(uint8_t generation);
/// Seconds-free byte time on a link: picoseconds per byte of encoded data across all lanes.
double PcieBytePicoseconds(uint8_t generation, uint8_t width);
/// Symbol time (10 UI for 8b/10b, 8 UI for 128b/130b and flit mode).
Time PcieSymbolTime(uint8_t generation);
/// Usable bandwidth of the link in one direction before TLP/DLLP overhead, bytes/s.
double PcieLinkBytesPerSecond(uint8_t generation, uint8_t width);

/// Wire bytes of a TLP (fractional in flit mode: its share of the flits' TLP bytes).
double PcieTlpWireBytes(uint8_t generation, uint32_t headerBytes, uint32_t payloadBytes, bool ecrc);
/// Wire bytes of a DLLP (0 in flit mode: DLLPs ride in each flit's DLP bytes).
double PcieDllpWireBytes(uint8_t generation);

/// AckFactor of the spec's Ack latency tables (by Max Payload Size and width).
double PcieAckFactor(uint32_t maxPayload, uint8_t width);
/// Internal delay of the Ack latency tables, in symbols: 19 (Gen1), 70 (Gen2), 115 (Gen3+).
uint32_t PcieInternalDelaySymbols(uint8_t generation);
/// Ack latency limit: ((MPS + 28) * AckFactor / width + InternalDelay) symbol times.
Time PcieAckLatencyLimit(uint8_t generation, uint8_t width, uint32_t maxPayload);
/// REPLAY_TIMER limit: 3 * the Ack latency limit (Rx_L0s_Adjustment = 0, L0s off).
Time PcieReplayTimerLimit(uint8_t generation, uint8_t width, uint32_t maxPayload);

/// "" if \p generation is 1..6, else what is wrong with it.
std::string PcieCheckGeneration(uint32_t generation);
/// "" if \p width is 1, 2, 4, 8 or 16, else what is wrong with it.
std::string PcieCheckWidth(uint32_t width);
/// "" if \p bytes is a power of two in 128..4096 (Max Payload / Max Read Request Size).
std::string PcieCheckSizeEncoding(const std::string& name, uint32_t bytes);
/// "" if \p bytes is 64 or 128 (Read Completion Boundary).
std::string PcieCheckRcb(uint32_t bytes);

} // namespace ns3

#endif
