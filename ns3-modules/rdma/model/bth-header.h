/*
 * Base Transport Header (IBA vol. 1, 9.2): 12 bytes that RoCEv2 and native
 * InfiniBand carry alike.
 */
#ifndef FABEMU_BTH_HEADER_H
#define FABEMU_BTH_HEADER_H

#include "ns3/header.h"

namespace ns3
{

/**
 * \brief The InfiniBand Base Transport Header.
 *
 * Wire layout: opcode(8) | SE(1) M(1) PadCnt(2) TVer(4) | P_Key(16) |
 * FECN(1) BECN(1) resv(6) | DestQP(24) | A(1) resv(7) | PSN(24).
 */
class BthHeader : public Header
{
  public:
    static constexpr uint32_t kSize = 12;
    static constexpr uint32_t kQpnMask = 0x00ffffff;
    static constexpr uint32_t kPsnMask = 0x00ffffff;
    static constexpr uint16_t kDefaultPkey = 0xffff;

    static TypeId GetTypeId();
    TypeId GetInstanceTypeId() const override;
    uint32_t GetSerializedSize() const override;
    void Serialize(Buffer::Iterator start) const override;
    uint32_t Deserialize(Buffer::Iterator start) override;
    void Print(std::ostream& os) const override;

    uint8_t GetOpcode() const { return m_opcode; }
    void SetOpcode(uint8_t opcode) { m_opcode = opcode; }
    bool GetSolicitedEvent() const { return m_se; }
    void SetSolicitedEvent(bool se) { m_se = se; }
    bool GetMigReq() const { return m_migReq; }
    void SetMigReq(bool m) { m_migReq = m; }
    /// Pad bytes (0..3) appended to the payload to reach a 4-byte multiple.
    uint8_t GetPadCount() const { return m_padCount; }
    void SetPadCount(uint8_t pad);
    uint8_t GetTransportVersion() const { return m_tver; }
    uint16_t GetPkey() const { return m_pkey; }
    void SetPkey(uint16_t pkey) { m_pkey = pkey; }
    bool GetFecn() const { return m_fecn; }
    void SetFecn(bool fecn) { m_fecn = fecn; }
    bool GetBecn() const { return m_becn; }
    void SetBecn(bool becn) { m_becn = becn; }
    uint32_t GetDestQp() const { return m_destQp; }
    void SetDestQp(uint32_t qpn);
    bool GetAckRequest() const { return m_ackReq; }
    void SetAckRequest(bool a) { m_ackReq = a; }
    uint32_t GetPsn() const { return m_psn; }
    void SetPsn(uint32_t psn);

  private:
    uint8_t m_opcode{0};
    bool m_se{false};
    bool m_migReq{false};
    uint8_t m_padCount{0};
    uint8_t m_tver{0};
    uint16_t m_pkey{kDefaultPkey};
    bool m_fecn{false};
    bool m_becn{false};
    uint32_t m_destQp{0};
    bool m_ackReq{false};
    uint32_t m_psn{0};
};

/// Padding that brings a payload of \p bytes to a multiple of four.
constexpr uint8_t
BthPadFor(uint32_t bytes)
{
    return static_cast<uint8_t>((4 - (bytes & 3)) & 3);
}

} // namespace ns3

#endif
