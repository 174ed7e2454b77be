// fabemu demo: a small built-in RoCEv2 simulation with its results folder.
#ifndef FABEMU_DEMO_H
#define FABEMU_DEMO_H

#include <cstdint>
#include <ostream>
#include <string>

namespace fabemu
{

struct DemoOptions
{
    uint32_t senders{8};
    uint64_t bytes{1'000'000};
    std::string rate{"100Gbps"};
    bool pfc{true};
    std::string cc{"dcqcn"}; ///< dcqcn | none
    std::string out{"results/demo"};
    bool force{false}; ///< replace \c out even if it is not a results folder
    bool quiet{false};
};

/// Runs an N:1 incast over one switch and writes the results folder.
/// \return an ExitCode
int RunDemo(const DemoOptions& opt, std::ostream& out, std::ostream& err);

} // namespace fabemu

#endif
