/*
 * Byte buffers for frames on their way to an endpoint, reused.
 */
#ifndef FABEMU_FRAME_BUFFERS_H
#define FABEMU_FRAME_BUFFERS_H

#include <cstddef>
#include <cstdint>
#include <vector>

namespace fabemu
{

/**
 * \brief A per-thread store of frame buffers.
 *
 * A frame the fabric delivers to an edge is copied out of its packet into a buffer,
 * which waits in the tap's write queue until it is written. The tap gives written
 * buffers back here, and the next frame takes one, so the simulation thread allocates
 * no buffer per frame once its store holds enough (at most kMaxKept are kept).
 */
class FrameBuffers
{
  public:
    static constexpr std::size_t kMaxKept = 512;

    /// A buffer of \p size bytes (contents unspecified), reused when one is kept.
    static std::vector<uint8_t> Take(std::size_t size);
    /// Keeps \p buffer for a later Take (its bytes no longer matter).
    static void Give(std::vector<uint8_t>&& buffer);
    /// Buffers kept on this thread now.
    static std::size_t Kept();
};

} // namespace fabemu

#endif // FABEMU_FRAME_BUFFERS_H
