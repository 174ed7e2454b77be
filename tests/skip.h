// Skipping a test that cannot run here: never silently.
#ifndef FABEMU_TESTS_SKIP_H
#define FABEMU_TESTS_SKIP_H

#include <iostream>
#include <string>

/// Prints the reason in a line CTest reports as "Skipped" (SKIP_REGULAR_EXPRESSION
/// FABEMU-SKIP:) and leaves the current doctest case.
#define FABEMU_SKIP(reason)                                    \
    do                                                         \
    {                                                          \
        std::cout << "FABEMU-SKIP: " << (reason) << std::endl; \
        return;                                                \
    } while (0)

#endif
