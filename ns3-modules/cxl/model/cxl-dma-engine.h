/*
 * A device's DMA over CXL.io (a GPU or NIC below a CXL port): posted memory
 * writes of MaxPayload bytes toward the host, at most Window TLPs not yet
 * written (give each engine on one CPU its own Id) (the posted-data credits the host grants; their
 * return is taken as immediate). Delivered() is told of each TLP as it lands (CxlCpu's IoRx).
 */
#ifndef FABEMU_CXL_DMA_ENGINE_H
#define FABEMU_CXL_DMA_ENGINE_H

#include "ns3/callback.h"
#include "ns3/cxl-message.h"
#include "ns3/object.h"
#include "ns3/traced-callback.h"

namespace ns3
{

class CxlPort;

class CxlDmaEngine : public Object
{
  public:
    static TypeId GetTypeId();
    CxlDmaEngine();
    ~CxlDmaEngine() override;

    /// The device's port toward the host.
    void SetPort(Ptr<CxlPort> port);
    /// Writes \p bytes to host memory from now; \p done when the last TLP has landed.
    void Write(uint64_t bytes, Callback<void> done);
    /// A TLP landed in host memory (others' TLPs, by requester, are ignored).
    void Delivered(const CxlMessage& tlp);

    uint64_t GetDelivered() const { return m_delivered; }
    /// Payload bytes over the span from the write's start to its last TLP's landing.
    double GetAchievedBytesPerSecond() const;

  protected:
    void DoDispose() override;

  private:
    void Send();
    void Finish();

    uint32_t m_maxPayload;
    uint32_t m_window;
    uint32_t m_id;
    Ptr<CxlPort> m_port;
    uint64_t m_bytes{0};
    uint64_t m_sent{0};
    uint64_t m_delivered{0};
    uint32_t m_inFlight{0};
    Time m_start;
    Time m_last;
    Callback<void> m_done;
    TracedCallback<const CxlMessage&> m_txTrace;
    TracedCallback<uint64_t> m_doneTrace;
};

} // namespace ns3

#endif
