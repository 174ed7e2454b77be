/*
 * A TLP and a DLLP as the models pass them: plain values, no ns3::Packet
 * (nothing here goes to pcap yet), so a TLP costs no allocation on its way.
 */
#ifndef FABEMU_PCIE_TLP_H
#define FABEMU_PCIE_TLP_H

#include <cstdint>

namespace ns3
{

/// The six flow-control credit classes of one VC.
enum class PcieFcClass : uint8_t
{
    PH = 0,
    PD,
    NPH,
    NPD,
    CplH,
    CplD
};
constexpr int kPcieFcClasses = 6;

inline const char*
PcieFcClassName(PcieFcClass c)
{
    static const char* const names[] = {"PH", "PD", "NPH", "NPD", "CplH", "CplD"};
    return names[int(c)];
}

/// The three FC types (and transmit queues): posted, non-posted, completion.
enum class PcieFcType : uint8_t
{
    Posted = 0,
    NonPosted,
    Completion
};
constexpr int kPcieFcTypes = 3;

struct PcieTlp
{
    enum class Kind : uint8_t
    {
        MemWrite,  ///< posted, carries data
        MemRead,   ///< non-posted, no data; `length` bytes requested
        Completion ///< CplD, carries data for a read
    };
    Kind kind{Kind::MemWrite};
    uint8_t headerBytes{12}; ///< 12 (3DW) or 16 (4DW)
    bool ecrc{false};
    bool last{false}; ///< last TLP of its transfer (writes) or of its request (completions)
    uint16_t tag{0};
    uint16_t requester{0}; ///< requester ID (bus/device/function): completions are routed by it
    uint32_t payload{0};   ///< data bytes carried
    uint32_t length{0};    ///< MemRead: bytes requested
    uint64_t address{0};
    uint64_t transfer{0}; ///< the DMA transfer it belongs to
    uint64_t seq{0};      ///< data link layer sequence number (unwrapped; 12 bits on the wire)

    PcieFcType Type() const
    {
        return kind == Kind::MemWrite  ? PcieFcType::Posted
               : kind == Kind::MemRead ? PcieFcType::NonPosted
                                       : PcieFcType::Completion;
    }
    /// Data credits the TLP takes: ceil(payload / 16).
    uint32_t DataCredits() const { return (payload + 15) / 16; }
};

struct PcieDllp
{
    enum class Kind : uint8_t
    {
        Ack,
        Nak,
        InitFc,
        UpdateFc
    };
    Kind kind{Kind::Ack};
    PcieFcType fcType{PcieFcType::Posted};
    uint64_t seq{0};       ///< Ack/Nak: last sequence number received in order
    uint64_t hdrLimit{0};  ///< FC: credit limit (cumulative credits allowed), headers
    uint64_t dataLimit{0}; ///< FC: credit limit, data
    bool hdrInfinite{false};
    bool dataInfinite{false};
};

} // namespace ns3

#endif
