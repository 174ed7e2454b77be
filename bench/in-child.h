// Runs one measurement in a forked child, so each starts from a fresh process
// (its own heap, its own peak RSS, its own ns-3 singletons) and the parent only
// collects the figures. T must be trivially copyable: it crosses a pipe as bytes.
#ifndef FABEMU_BENCH_IN_CHILD_H
#define FABEMU_BENCH_IN_CHILD_H

#include "ns3/nstime.h"

#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <type_traits>
#include <unistd.h>

/// Forks, sets picosecond resolution in the child, calls \p setUp then \p fn there,
/// and returns what \p fn returned; exits the benchmark if the child fails.
template <typename T>
T
InChild(const std::function<T()>& fn, const std::function<void()>& setUp = {})
{
    static_assert(std::is_trivially_copyable_v<T>, "figures cross a pipe as bytes");
    int fds[2];
    if (pipe(fds) != 0)
    {
        std::perror("pipe");
        std::exit(1);
    }
    const pid_t pid = fork();
    if (pid == 0)
    {
        close(fds[0]);
        ns3::Time::SetResolution(ns3::Time::PS);
        if (setUp)
        {
            setUp();
        }
        const T f = fn();
        if (write(fds[1], &f, sizeof(f)) != sizeof(f))
        {
            _exit(1);
        }
        _exit(0);
    }
    close(fds[1]);
    T f{};
    const ssize_t n = read(fds[0], &f, sizeof(f));
    close(fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    if (n != sizeof(f) || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
    {
        std::cerr << "benchmark: a measurement child failed\n";
        std::exit(1);
    }
    return f;
}

#endif
