/*
 * The analytical mode: a collective's time from the alpha-beta cost of its steps,
 * with each path's alpha and bandwidth taken from the same topology the packet mode
 * runs on. Closed forms, so a 16,384-rank ring costs one pass over its neighbours:
 *   ring all-reduce        2(n-1) (a + S/(nB))
 *   ring RS / AG           (n-1) (a + S/(nB))
 *   halving-doubling AR    sum over the 2 log2 n steps of (a_k + S d_k/(nB_k))
 *   direct all-to-all      a + (n-1) S/(nB)   (each rank's sends share its link)
 *   send-recv              a + S/B
 *   tree AR                k chunks per tree of p = S/(2k): 2h hops of the slowest
 *                          edge (h the trees' height), then k-1 chunks paced by the
 *                          rank sending the most p per chunk (up and down, both trees)
 *   broadcast, reduce      a chain of m = 8n pieces (fewer where the bytes do not cut):
 *                          the sum of the hops' a + S/(mB), and m-1 more of the dearest
 * On a ring whose edges differ, rank r's step k waits for rank r-1's step k-1, so
 * the time is that of the dearest chain of K consecutive edges (K the steps), each
 * costing a + S/(nB) of its own; but a slow edge's sends queue, so at least K of its
 * pieces back to back and one a. Rings of several channels (rail-following, on
 * servers) run side by side, each over S/c, and the channels whose edges leave a
 * rank the same way (inside its server, or out of it) share that way's bandwidth.
 * Elsewhere a step's a is the largest and B the smallest over the pairs of that step.
 *   hierarchical AR        per chunk of C = S/k bytes: a ring reduce-scatter of C
 *                          inside each server (t_rs; b_rs its bytes alone, without
 *                          a), a ring all-reduce of C/g among the servers on each
 *                          rail (t_ar, b_ar), an all-gather inside (t_rs's edges).
 *                          Pipelined, the servers' links carry every chunk's
 *                          reduce-scatter and all-gather, the rails every chunk's
 *                          all-reduce, and latency is paid once:
 *                          max(2 t_rs + 2 (k-1) b_rs, 2 t_rs + t_ar + (k-1) b_ar)
 *   nvls                   each rank sends S (its share of every sum) and S/n (its
 *                          sum, multicast) at B toward the switch, and takes in S/n
 *                          (its sum) and S (every multicast) at the rate B_s of what
 *                          the switch makes: per phase a_s, and the busier direction
 *                          of the busiest rank; RS and AG carry one half each
 */
#ifndef FABEMU_COLLECTIVE_COST_MODEL_H
#define FABEMU_COLLECTIVE_COST_MODEL_H

#include "ns3/collective-schedule.h"
#include "ns3/collective-transport.h"

#include <functional>

namespace ns3
{

using CollectivePathCostFn = std::function<CollectiveTransport::PathCost(uint32_t, uint32_t)>;
/// A rank's cost of what the switch makes for it (CollectiveTransport::GetInSwitchCost).
using CollectiveRankCostFn = std::function<CollectiveTransport::PathCost(uint32_t)>;

/// The ranks placed as \p layout says; throws where CheckCollective does, and for nvls
/// without \p inSwitch.
Time CollectiveAnalyticalTime(CollectiveOp op, CollectiveAlgorithm algorithm, uint32_t ranks,
                              uint64_t bytes, const CollectivePathCostFn& cost,
                              const CollectiveLayout& layout = {},
                              const CollectiveRankCostFn& inSwitch = {});

} // namespace ns3

#endif
