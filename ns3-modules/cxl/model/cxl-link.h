/*
 * A CXL link: version, rate per lane, width, flit format and a one-way delay
 * (PHY and link-layer pipeline of both ends), a bit-error rate (link-layer
 * retry) and the request credits the device end grants. The two CxlPorts at
 * its ends each send their own direction a flit at a time; they read these
 * attributes when connected.
 */
#ifndef FABEMU_CXL_LINK_H
#define FABEMU_CXL_LINK_H

#include "ns3/cxl-spec.h"
#include "ns3/nstime.h"
#include "ns3/object.h"

#include <string>

namespace ns3
{

class CxlPort;

class CxlLink : public Object
{
  public:
    static TypeId GetTypeId();
    CxlLink();
    ~CxlLink() override;

    /// "" if the attributes describe a link the specification allows, else the problem.
    std::string Check() const;
    /// Joins the host-side port \p a and the device-side port \p b (after Check()).
    void Connect(Ptr<CxlPort> a, Ptr<CxlPort> b);
    Ptr<CxlPort> GetPort(uint32_t i) const;

    /// Version, rate, width and flit format (the version's fastest rate and its flit when
    /// GigaTransfers and FlitMode are left at their defaults).
    CxlLinkSpec GetSpec() const;
    Time GetDelay() const { return m_delay; }
    double GetBitErrorRate() const { return m_ber; }
    uint32_t GetRequestCredits() const { return m_requestCredits; }
    /// Time to send one flit.
    Time GetFlitTime() const;

  protected:
    void DoDispose() override;

  private:
    std::string m_version;
    double m_gigaTransfers;
    uint32_t m_lanes;
    std::string m_flitMode;
    Time m_delay;
    double m_ber;
    uint32_t m_requestCredits;
    Ptr<CxlPort> m_a;
    Ptr<CxlPort> m_b;
};

} // namespace ns3

#endif
