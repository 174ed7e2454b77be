#include "emulator/edge/frame-buffers.h"

namespace fabemu
{

namespace
{

std::vector<std::vector<uint8_t>>&
Store()
{
    static thread_local std::vector<std::vector<uint8_t>> store;
    return store;
}

} // namespace

std::vector<uint8_t>
FrameBuffers::Take(std::size_t size)
{
    auto& store = Store();
    if (store.empty())
    {
        return std::vector<uint8_t>(size);
    }
    std::vector<uint8_t> buffer = std::move(store.back());
    store.pop_back();
    buffer.resize(size);
    return buffer;
}

void
FrameBuffers::Give(std::vector<uint8_t>&& buffer)
{
    auto& store = Store();
    if (buffer.capacity() == 0 || store.size() >= kMaxKept)
    {
        return;
    }
    if (store.capacity() == 0)
    {
        store.reserve(kMaxKept);
    }
    store.push_back(std::move(buffer));
}

std::size_t
FrameBuffers::Kept()
{
    return Store().size();
}

} // namespace fabemu
