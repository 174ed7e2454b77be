// Running a host tool from a test (tshark, ...) and reading what it prints.
#ifndef FABEMU_TESTS_SHELL_H
#define FABEMU_TESTS_SHELL_H

#include <array>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

/// The standard output of \p cmd run by /bin/sh ("" if it cannot start).
inline std::string
RunCommand(const std::string& cmd)
{
    std::string out;
    std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(cmd.c_str(), "r"), pclose);
    if (!pipe)
    {
        return out;
    }
    std::array<char, 4096> buf;
    size_t n;
    while ((n = fread(buf.data(), 1, buf.size(), pipe.get())) > 0)
    {
        out.append(buf.data(), n);
    }
    return out;
}

/// Whether \p tool is on the PATH.
inline bool
HaveTool(const std::string& tool)
{
    return std::system(("command -v " + tool + " >/dev/null 2>&1").c_str()) == 0;
}

#endif
