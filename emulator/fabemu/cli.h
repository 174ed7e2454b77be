// The fabemu command as a function, so that tests drive it in-process.
#ifndef FABEMU_CLI_H
#define FABEMU_CLI_H

#include <ostream>
#include <string>
#include <vector>

namespace fabemu
{

/// The project's version, e.g. "0.1.0".
const char* Version();

/**
 * \brief Runs fabemu with \p args (without the program name).
 * \return one of the ExitCode values
 */
int RunFabemu(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

} // namespace fabemu

#endif
