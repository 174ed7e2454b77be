/*
 * What the fuzz targets share: FUZZ_CHECK, an oracle that aborts (so that libFuzzer and
 * the gcc driver both report the input) with the condition and a word on what it means.
 */
#ifndef FABEMU_FUZZ_CHECK_H
#define FABEMU_FUZZ_CHECK_H

#include <cstdio>
#include <cstdlib>

#define FUZZ_CHECK(cond, what)                                                                     \
    do                                                                                             \
    {                                                                                              \
        if (!(cond))                                                                               \
        {                                                                                          \
            std::fprintf(stderr, "%s:%d: fuzz check failed: %s (%s)\n", __FILE__, __LINE__, #cond, \
                         what);                                                                    \
            std::abort();                                                                          \
        }                                                                                          \
    } while (false)

#endif
