// The exit codes of the fabemu command, the same for every subcommand.
#ifndef FABEMU_EXIT_CODES_H
#define FABEMU_EXIT_CODES_H

namespace fabemu
{

enum ExitCode : int
{
    kExitOk = 0,          ///< success
    kExitFailure = 1,     ///< a run-time failure (a VM died, a tap vanished, ...)
    kExitBadInput = 2,    ///< bad command line or scenario; nothing was run
    kExitExpectation = 3, ///< the run finished but its expectations were not met
};

} // namespace fabemu

#endif
