#include "emulator/fabemu/host-command.h"

#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <unistd.h>

namespace fabemu
{

std::string
FindOnPath(const std::string& tool)
{
    const char* path = std::getenv("PATH");
    if (!path)
    {
        return "";
    }
    std::stringstream dirs(path);
    for (std::string d; std::getline(dirs, d, ':');)
    {
        const std::filesystem::path p = std::filesystem::path(d.empty() ? "." : d) / tool;
        if (access(p.c_str(), X_OK) == 0)
        {
            return p.string();
        }
    }
    return "";
}

std::string
ShellQuote(const std::string& s)
{
    std::string q = "'";
    for (char c : s)
    {
        q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    }
    return q + "'";
}

int
Capture(const std::string& cmd, std::string& out)
{
    out.clear();
    FILE* pipe = popen(cmd.c_str(), "r");
    if (!pipe)
    {
        return -1;
    }
    char buf[512];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, pipe)) > 0)
    {
        out.append(buf, n);
    }
    const int status = pclose(pipe);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

} // namespace fabemu
