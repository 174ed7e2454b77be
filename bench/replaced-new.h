/*
 * The global operator new and delete, replaced for a benchmark that counts what the
 * program allocates. Include it in one source file of the benchmark, which defines
 * BenchAllocate (never returns null: throws std::bad_alloc) and BenchRelease; every
 * new, new[], delete and delete[] of the process goes through them.
 */
#ifndef FABEMU_BENCH_REPLACED_NEW_H
#define FABEMU_BENCH_REPLACED_NEW_H

#include <cstddef>
#include <new>

void* BenchAllocate(std::size_t n);
void BenchRelease(void* p) noexcept;

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

#endif // FABEMU_BENCH_REPLACED_NEW_H
