// Host programs as fabemu runs them: found on PATH, quoted for /bin/sh, their output read.
#ifndef FABEMU_HOST_COMMAND_H
#define FABEMU_HOST_COMMAND_H

#include <string>

namespace fabemu
{

/// The full path of \p tool on PATH, or "" (also when PATH is not set).
std::string FindOnPath(const std::string& tool);

/// \p s as one word for /bin/sh: in single quotes, its own quotes escaped.
std::string ShellQuote(const std::string& s);

/// Runs \p cmd by /bin/sh; its standard output in \p out, its exit code returned (-1 if
/// it could not start or did not exit).
int Capture(const std::string& cmd, std::string& out);

} // namespace fabemu

#endif
