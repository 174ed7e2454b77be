/*
 * A FIFO queue on a ring that grows and never shrinks: a port's frame queues.
 */
#ifndef FABEMU_RING_QUEUE_H
#define FABEMU_RING_QUEUE_H

#include <boost/circular_buffer.hpp>

#include <algorithm>
#include <cstddef>
#include <utility>

namespace ns3
{

/**
 * \brief A FIFO of \p T on boost's circular_buffer, grown by half when full.
 *
 * A port's queues fill and drain for the whole run. A deque (std's or boost's) frees
 * a block each time its front leaves one and allocates another as its back enters
 * one: an allocation every few dozen frames, per queue. This ring keeps the room it
 * grew to, so a queue that has held n frames allocates nothing until it holds more.
 * Like boost's deque, it allocates nothing until the first push: most of a large
 * fabric's queues stay empty.
 */
template <typename T>
class RingQueue
{
  public:
    using const_iterator = typename boost::circular_buffer<T>::const_iterator;

    void push_back(T value)
    {
        if (m_ring.full())
        {
            m_ring.set_capacity(std::max<std::size_t>(kFirstCapacity, m_ring.capacity() * 3 / 2));
        }
        m_ring.push_back(std::move(value));
    }

    void pop_front() { m_ring.pop_front(); }

    T& front() { return m_ring.front(); }

    const T& front() const { return m_ring.front(); }

    T& back() { return m_ring.back(); }

    bool empty() const { return m_ring.empty(); }

    std::size_t size() const { return m_ring.size(); }

    /// Empties the queue; the room stays.
    void clear() { m_ring.clear(); }

    const_iterator begin() const { return m_ring.begin(); }

    const_iterator end() const { return m_ring.end(); }

  private:
    static constexpr std::size_t kFirstCapacity = 8;
    boost::circular_buffer<T> m_ring; ///< capacity 0, nothing allocated, until used
};

} // namespace ns3

#endif // FABEMU_RING_QUEUE_H
