/*
 * Shared-buffer memory management of a switch, as Broadcom-style ASICs and the
 * DCQCN/HPCC simulators model it.
 *
 * Every byte is charged to its ingress (port, priority group) and its egress
 * (port, queue). An arriving frame is admitted into, in order: the PG's
 * reserve; the shared pool, if the PG stays under the dynamic threshold
 * alpha x (free shared bytes) (or a static threshold); and, for lossless
 * priorities only, the PG's headroom, which absorbs what is in flight after
 * a pause is sent. A lossy priority is admitted while its egress queue stays
 * under the egress dynamic threshold; otherwise the frame is dropped.
 *
 * A frame leaving the switch frees its PG's bytes in the reverse order:
 * headroom first, then shared, then reserve, as Broadcom-style MMUs count
 * (and HPCC's simulator): the PG's counts fall with every frame it sends, not
 * only when the frames that were charged to headroom reach the queue's head.
 *
 * PFC: a lossless PG that is into its headroom, or whose shared count reaches
 * its XOFF threshold (dynamic, alpha x free shared bytes, or static), asks for
 * XOFF; it asks for XON once its headroom is empty and its shared count is at
 * XON = XOFF - ResumeOffset (or zero).
 */
#ifndef FABEMU_SWITCH_MMU_H
#define FABEMU_SWITCH_MMU_H

#include "ns3/object.h"

#include <array>
#include <map>
#include <string>
#include <vector>

namespace ns3
{

class SwitchMmu : public Object
{
  public:
    static constexpr uint8_t kPriorities = 8;

    static TypeId GetTypeId();
    SwitchMmu();

    /// Sizes the per-port state; \p headroom[i] is port i's per-PG headroom in bytes.
    void ConfigurePorts(const std::vector<uint64_t>& headroom);
    /// Why ConfigurePorts(\p headroom) would fail (buffer too small, Kmax < Kmin), or "".
    std::string PortsProblem(const std::vector<uint64_t>& headroom) const;

    /// Where an admitted frame's bytes are charged.
    enum class Charge : uint8_t
    {
        Reserve,
        Shared,
        Headroom,
        Dropped,
    };

    Charge Admit(uint32_t inPort, uint32_t outPort, uint8_t prio, uint32_t bytes);
    /// Releases an admitted frame when it leaves the egress queue: its PG's headroom
    /// first, then its shared bytes, then its reserve.
    void Release(uint32_t inPort, uint32_t outPort, uint8_t prio, uint32_t bytes);

    bool IsLossless(uint8_t prio) const;
    bool ShouldPause(uint32_t inPort, uint8_t prio) const;
    bool ShouldResume(uint32_t inPort, uint8_t prio) const;
    bool IsEcnEnabled() const { return m_ecnEnabled; }

    /// RED marking probability for an egress queue holding \p queueBytes, with the
    /// switch-wide Kmin/Kmax/Pmax.
    double MarkProbability(uint64_t queueBytes) const;
    /// The same for one egress queue, which may have thresholds of its own.
    double MarkProbability(uint32_t port, uint8_t prio, uint64_t queueBytes) const;
    /// Gives one egress queue its own RED thresholds (bytes) and Pmax.
    void SetEcnThresholds(uint32_t port, uint8_t prio, uint64_t kmin, uint64_t kmax, double pmax);

    uint64_t GetSharedUsed() const { return m_sharedUsed; }
    uint64_t GetTotalUsed() const { return m_totalUsed; }
    uint64_t GetBufferSize() const { return m_bufferSize; }
    uint64_t GetIngressBytes(uint32_t port, uint8_t prio) const;
    uint64_t GetHeadroomUsed(uint32_t port, uint8_t prio) const;
    uint64_t GetSharedUsed(uint32_t port, uint8_t prio) const;
    /// The XOFF threshold a PG's shared count is held against now, bytes.
    uint64_t GetXoffThreshold() const { return PgThreshold(); }
    uint64_t GetResumeOffset() const { return m_resumeOffset; }
    uint64_t GetEgressBytes(uint32_t port, uint8_t prio) const;
    /// The most bytes ever held at once, headroom included.
    uint64_t GetPeakUsed() const { return m_peakUsed; }

  private:
    struct Pg
    {
        uint64_t reserve{0};
        uint64_t shared{0};
        uint64_t headroom{0};
    };
    uint64_t SharedPool() const;
    uint64_t PgThreshold() const;
    uint64_t EgressThreshold() const;
    Pg& At(uint32_t port, uint8_t prio);
    const Pg& At(uint32_t port, uint8_t prio) const;

    // Attributes
    uint64_t m_bufferSize;
    uint64_t m_reservePerPg;
    double m_alpha;
    double m_egressAlpha;
    bool m_staticThreshold;
    uint64_t m_staticXoff;
    uint64_t m_resumeOffset;
    bool m_pfcEnabled;
    uint8_t m_losslessMask;
    bool m_ecnEnabled;
    uint64_t m_kMin;
    uint64_t m_kMax;
    double m_pMax;

    struct Red
    {
        uint64_t kmin;
        uint64_t kmax;
        double pmax;
    };
    static double Probability(const Red& red, uint64_t queueBytes);
    std::map<std::pair<uint32_t, uint8_t>, Red> m_redOverride;

    std::vector<std::array<Pg, kPriorities>> m_ingress;
    std::vector<std::array<uint64_t, kPriorities>> m_egress;
    std::vector<uint64_t> m_headroomPerPg;
    uint64_t m_headroomTotal{0};
    uint64_t m_reserveTotal{0};
    uint64_t m_sharedUsed{0};
    uint64_t m_totalUsed{0};
    uint64_t m_peakUsed{0};
};

} // namespace ns3

#endif
