/*
 * A PCIe link: generation, width, propagation delay and bit-error rate,
 * shared by the two PciePorts at its ends (each serialises its own
 * direction). Attributes accept any integer so that a wrong value reaches
 * Check(), which names the problem instead of aborting.
 */
#ifndef FABEMU_PCIE_LINK_H
#define FABEMU_PCIE_LINK_H

#include "ns3/nstime.h"
#include "ns3/object.h"

#include <string>

namespace ns3
{

class PciePort;

class PcieLink : public Object
{
  public:
    static TypeId GetTypeId();
    PcieLink();
    ~PcieLink() override;

    /// "" if the attributes describe a link the spec allows, else the first problem.
    std::string Check() const;
    /// Joins the two ports (call after Check() returned ""); trees connect the upstream
    /// end (root port or switch downstream port) as \p a.
    void Connect(Ptr<PciePort> a, Ptr<PciePort> b);
    /// The port connected as a (0) or b (1).
    Ptr<PciePort> GetPort(uint32_t i) const;

    uint8_t GetGeneration() const { return static_cast<uint8_t>(m_generation); }
    uint8_t GetWidth() const { return static_cast<uint8_t>(m_width); }
    Time GetDelay() const { return m_delay; }
    double GetBitErrorRate() const { return m_ber; }
    /// Picoseconds per byte of encoded data, all lanes together.
    double GetBytePicoseconds() const { return m_bytePs; }
    /// Serialisation time of \p wireBytes (fractional in flit mode).
    Time WireTime(double wireBytes) const
    {
        return Time::FromDouble(wireBytes * m_bytePs, Time::PS);
    }

  protected:
    void DoDispose() override;

  private:
    uint32_t m_generation;
    uint32_t m_width;
    Time m_delay;
    double m_ber;
    double m_bytePs{0};
    Ptr<PciePort> m_a;
    Ptr<PciePort> m_b;
};

} // namespace ns3

#endif
