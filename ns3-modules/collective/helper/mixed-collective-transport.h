/*
 * The GPUs of one server joined two ways: NVLink where it joins a pair, PCIe for the
 * rest (dgx-1's hybrid cube mesh leaves gpu0 and gpu5 without a link; NCCL sends
 * between them over PCIe). Both transports number the ranks alike. In-switch
 * transfers (NVLS) are the preferred transport's.
 */
#ifndef FABEMU_MIXED_COLLECTIVE_TRANSPORT_H
#define FABEMU_MIXED_COLLECTIVE_TRANSPORT_H

#include "ns3/collective-transport.h"

namespace ns3
{

class MixedCollectiveTransport : public CollectiveTransport
{
  public:
    static TypeId GetTypeId();

    /// Pairs \p preferred Reaches() take it; the others take \p fallback. Both have the
    /// same ranks.
    void Setup(Ptr<CollectiveTransport> preferred, Ptr<CollectiveTransport> fallback);
    /// Whether the preferred transport joins \p from and \p to.
    bool Prefers(uint32_t from, uint32_t to) const;

    uint32_t GetNRanks() const override;
    void Send(uint32_t from, uint32_t to, uint64_t bytes, Done done) override;
    PathCost GetPathCost(uint32_t from, uint32_t to) const override;
    bool Reaches(uint32_t from, uint32_t to) const override;
    std::string CheckInSwitch(const std::vector<uint32_t>& ranks) const override;
    void SendInSwitch(CollectiveVia via, uint32_t from, uint32_t to,
                      const std::vector<uint32_t>& group, uint64_t bytes, Done done) override;
    PathCost GetInSwitchCost(uint32_t r) const override;

  protected:
    std::string DefaultRankName(uint32_t r) const override;
    void DoDispose() override;

  private:
    /// The transport that carries \p from -> \p to.
    const Ptr<CollectiveTransport>& Of(uint32_t from, uint32_t to) const;

    Ptr<CollectiveTransport> m_preferred;
    Ptr<CollectiveTransport> m_fallback;
};

} // namespace ns3

#endif
