/*
 * An ns-3 event whose memory is reused: for models that schedule one event per packet.
 */
#ifndef FABEMU_POOLED_EVENT_H
#define FABEMU_POOLED_EVENT_H

#include "ns3/event-impl.h"

#include <cstddef>
#include <new>
#include <vector>

namespace ns3
{

/**
 * \brief Base of an EventImpl whose blocks are recycled.
 *
 * `Simulator::Schedule(delay, &Class::Method, obj, args)` allocates an event and frees
 * it once run. A frame's arrival at the far end of a link is one such event per
 * packet-hop. An event class deriving from PooledEvent<Itself> keeps the blocks of
 * its deleted events on a free list of the thread that deleted them (at most
 * kMaxFree), and `new` takes them back first: in steady state, none is allocated.
 * Scheduling is unchanged: `Simulator::ScheduleWithContext(context, delay, new Ev(...))`
 * hands the new event's one reference to ns-3, which deletes it after it runs. (Not
 * `Simulator::Schedule(delay, new Ev(...))`: that one takes a Ptr<EventImpl>, which would
 * add a reference of its own to the raw pointer, and the event would never be freed;
 * use `Ptr<EventImpl>(new Ev(...), false)` there.)
 */
template <typename Derived>
class PooledEvent : public EventImpl
{
  public:
    static constexpr std::size_t kMaxFree = 4096;

    static void* operator new(std::size_t n)
    {
        if (n == sizeof(Derived) && !t_gone)
        {
            auto& blocks = Blocks().blocks;
            if (!blocks.empty())
            {
                void* p = blocks.back();
                blocks.pop_back();
                return p;
            }
        }
        return ::operator new(n);
    }

    static void operator delete(void* p, std::size_t n)
    {
        if (n == sizeof(Derived) && !t_gone)
        {
            auto& blocks = Blocks().blocks;
            if (blocks.size() < kMaxFree) // room reserved: push_back never allocates here
            {
                blocks.push_back(p);
                return;
            }
        }
        ::operator delete(p);
    }

    /// How many freed blocks this thread keeps for the next events of this class.
    static std::size_t FreeBlocks() { return t_gone ? 0 : Blocks().blocks.size(); }

  private:
    /// This thread's free blocks, returned to the allocator when the thread ends.
    struct FreeList
    {
        FreeList() { blocks.reserve(kMaxFree); }

        std::vector<void*> blocks;

        ~FreeList()
        {
            t_gone = true; // an event deleted after this goes straight back
            for (void* p : blocks)
            {
                ::operator delete(p);
            }
        }
    };

    static FreeList& Blocks()
    {
        static thread_local FreeList list;
        return list;
    }

    static thread_local bool t_gone; ///< trivially destroyed: readable to the thread's end
};

template <typename Derived>
thread_local bool PooledEvent<Derived>::t_gone = false;

} // namespace ns3

#endif // FABEMU_POOLED_EVENT_H
