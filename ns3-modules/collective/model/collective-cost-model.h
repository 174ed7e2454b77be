/*
 * The analytical mode: a collective's time from the alpha-beta cost of its steps,
 * with each path's alpha and bandwidth taken from the same topology the packet mode
 * runs on. Closed forms, so a 16,384-rank ring costs one pass over its neighbours:
 *   ring all-reduce        2(n-1) (a + S/(nB))
 *   ring RS / AG           (n-1) (a + S/(nB))
 *   halving-doubling AR    sum over the 2 log2 n steps of (a_k + S d_k/(nB_k))
 *   direct all-to-all      a + (n-1) S/(nB)   (each rank's sends share its link)
 * On a ring whose edges differ, the time is that of the dearest chain of 2(n-1) (or n-1)
 * consecutive edges, each costing a + S/(nB) of its own; elsewhere a step's a is the
 * largest and B the smallest over the pairs of that step.
 */
#ifndef FABEMU_COLLECTIVE_COST_MODEL_H
#define FABEMU_COLLECTIVE_COST_MODEL_H

#include "ns3/collective-schedule.h"
#include "ns3/collective-transport.h"

#include <functional>

namespace ns3
{

using CollectivePathCostFn = std::function<CollectiveTransport::PathCost(uint32_t, uint32_t)>;

/// Throws where CheckCollective does.
Time CollectiveAnalyticalTime(CollectiveOp op, CollectiveAlgorithm algorithm, uint32_t ranks,
                              uint64_t bytes, const CollectivePathCostFn& cost);

} // namespace ns3

#endif
