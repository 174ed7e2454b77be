/*
 * The global operator new and delete, replaced for a benchmark that counts what the
 * program allocates. Include it in one source file of the benchmark, which defines
 * BenchAllocate (never returns null: throws std::bad_alloc) and BenchRelease, and their
 * aligned forms for types aligned past the default (RoceNetDevice is aligned to a cache
 * line); every new, new[], delete and delete[] of the process goes through them.
 */
#ifndef FABEMU_BENCH_REPLACED_NEW_H
#define FABEMU_BENCH_REPLACED_NEW_H

#include <cstddef>
#include <new>

void* BenchAllocate(std::size_t n);
void BenchRelease(void* p) noexcept;
/// \p align is a power of two above __STDCPP_DEFAULT_NEW_ALIGNMENT__ (16).
void* BenchAllocateAligned(std::size_t n, std::size_t align);
void BenchReleaseAligned(void* p, std::size_t align) noexcept;

/// \p n bytes rounded up to a multiple of \p align, at least one: what
/// std::aligned_alloc may be asked for.
inline std::size_t
BenchAlignedBytes(std::size_t n, std::size_t align)
{
    return ((n == 0 ? 1 : n) + align - 1) / align * align;
}

void*
operator new(std::size_t n)
{
    return BenchAllocate(n);
}

// ns-3's buffers and packet metadata are arrays: counted too.
void*
operator new[](std::size_t n)
{
    return BenchAllocate(n);
}

void
operator delete(void* p) noexcept
{
    BenchRelease(p);
}

void
operator delete[](void* p) noexcept
{
    BenchRelease(p);
}

void
operator delete(void* p, std::size_t) noexcept
{
    BenchRelease(p);
}

void
operator delete[](void* p, std::size_t) noexcept
{
    BenchRelease(p);
}

void*
operator new(std::size_t n, std::align_val_t align)
{
    return BenchAllocateAligned(n, static_cast<std::size_t>(align));
}

void*
operator new[](std::size_t n, std::align_val_t align)
{
    return BenchAllocateAligned(n, static_cast<std::size_t>(align));
}

void
operator delete(void* p, std::align_val_t align) noexcept
{
    BenchReleaseAligned(p, static_cast<std::size_t>(align));
}

void
operator delete[](void* p, std::align_val_t align) noexcept
{
    BenchReleaseAligned(p, static_cast<std::size_t>(align));
}

void
operator delete(void* p, std::size_t, std::align_val_t align) noexcept
{
    BenchReleaseAligned(p, static_cast<std::size_t>(align));
}

void
operator delete[](void* p, std::size_t, std::align_val_t align) noexcept
{
    BenchReleaseAligned(p, static_cast<std::size_t>(align));
}

#endif // FABEMU_BENCH_REPLACED_NEW_H
