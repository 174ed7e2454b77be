/*
 * An NVLink connection between two ports: a bundle of Links links of one
 * generation (NVLink 1 to 5: 20, 25, 25, 25, 50 GB/s per link per direction),
 * a propagation delay, and an optional bit-error rate. Each direction
 * serialises packets at the bundle's rate; a packet of p payload bytes takes
 * p + HeaderBytes on the wire. Packets are striped over the bundle's links as
 * one pipe (the model does not keep per-link order).
 */
#ifndef FABEMU_NVLINK_LINK_H
#define FABEMU_NVLINK_LINK_H

#include "ns3/nstime.h"
#include "ns3/object.h"

#include <string>

namespace ns3
{

class NvlinkPort;

/// Bytes per second of one link of \p generation in one direction (0 if not 1..5).
double NvlinkLinkBytesPerSecond(uint32_t generation);
/// NCCL's usable fraction of a link of \p generation (its per-SM figures over the raw rate).
double NvlinkNcclEfficiency(uint32_t generation);

class NvlinkLink : public Object
{
  public:
    static TypeId GetTypeId();
    NvlinkLink();
    ~NvlinkLink() override;

    /// "" if the attributes describe a link that exists, else the first problem.
    std::string Check() const;
    /// Joins two ports (after Check() returned "").
    void Connect(Ptr<NvlinkPort> a, Ptr<NvlinkPort> b);
    Ptr<NvlinkPort> GetPort(uint32_t i) const;

    uint32_t GetGeneration() const { return m_generation; }
    uint32_t GetLinks() const { return m_links; }
    Time GetDelay() const { return m_delay; }
    double GetBitErrorRate() const { return m_ber; }
    uint32_t GetMaxPayload() const { return m_maxPayload; }
    /// The header bytes a full packet costs (HeaderBytes, or the generation's calibrated value).
    double GetHeaderBytes() const;
    /**
     * \brief The header bytes a packet of \p payload costs: HeaderBytes when set; else the
     * calibrated value for each NVLink packet of up to 256 bytes (or MaxPayload, if less)
     * it stands for. A MaxPayload above 256 coarsens packets for speed; a packet that is
     * not full then costs what its real packets would, not a whole coarse header.
     */
    double GetHeaderBytes(uint32_t payload) const;
    /// Raw bytes per second of the bundle, one direction.
    double GetBytesPerSecond() const;
    /// Serialisation time of a packet with \p payload bytes and \p extra wire bytes (NVLS).
    Time WireTime(uint32_t payload, uint32_t extra = 0) const;

  protected:
    void DoDispose() override;

  private:
    uint32_t m_generation;
    uint32_t m_links;
    Time m_delay;
    double m_ber;
    uint32_t m_maxPayload;
    double m_headerBytes;
    Ptr<NvlinkPort> m_a;
    Ptr<NvlinkPort> m_b;
};

} // namespace ns3

#endif
