/*
 * A cycle in a wait-for graph: the shape of every buffer deadlock the fabrics can
 * reach (an InfiniBand credit loop, a RoCEv2 PFC deadlock). Each fabric says what its
 * waiting queues are and which of them each one waits for; a cycle among them is a
 * wait nothing can end.
 */
#ifndef FABEMU_WAIT_CYCLE_H
#define FABEMU_WAIT_CYCLE_H

#include <map>
#include <utility>
#include <vector>

namespace ns3
{

/**
 * \brief A cycle of waits among \p nodes, if there is one.
 * \param nodes the waiting queues (any ordered type)
 * \param next for a node, the nodes it waits for (only those among \p nodes count)
 * \return the cycle, each node waiting for the next and the last for the first; empty
 *         when the waits are acyclic
 */
template <typename Node, typename Next>
std::vector<Node>
FindWaitCycle(const std::vector<Node>& nodes, Next next)
{
    enum State
    {
        Unseen,
        OnPath,
        Done
    };
    std::map<Node, State> state;
    for (const Node& n : nodes)
    {
        state[n] = Unseen;
    }
    auto waitsFor = [&](const Node& n) {
        std::vector<Node> out;
        for (const Node& m : next(n))
        {
            if (state.count(m))
            {
                out.push_back(m);
            }
        }
        return out;
    };
    // Depth-first, without recursion (a fabric has many thousands of queues).
    for (const Node& start : nodes)
    {
        if (state[start] != Unseen)
        {
            continue;
        }
        std::vector<std::pair<Node, std::vector<Node>>> path{{start, waitsFor(start)}};
        state[start] = OnPath;
        while (!path.empty())
        {
            if (path.back().second.empty())
            {
                state[path.back().first] = Done;
                path.pop_back();
                continue;
            }
            const Node m = path.back().second.back();
            path.back().second.pop_back();
            if (state[m] == OnPath)
            {
                size_t k = 0;
                while (!(path[k].first == m))
                {
                    ++k;
                }
                std::vector<Node> cycle;
                for (; k < path.size(); ++k)
                {
                    cycle.push_back(path[k].first);
                }
                return cycle;
            }
            if (state[m] == Unseen)
            {
                state[m] = OnPath;
                path.emplace_back(m, waitsFor(m));
            }
        }
    }
    return {};
}

} // namespace ns3

#endif
