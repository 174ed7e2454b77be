// fabemu emulate: real endpoint VMs over the modelled RoCEv2 fabric, in real time.
#ifndef FABEMU_EMULATE_H
#define FABEMU_EMULATE_H

#include <cstdint>
#include <map>
#include <ostream>
#include <string>
#include <vector>

namespace fabemu
{

struct EmulateOptions
{
    unsigned count{2};
    std::string rate{"100Gbps"};
    std::string delay{"1us"};
    std::vector<std::string> servers; ///< "hN: command", started in the background first
    std::vector<std::string> run;     ///< "hN: command", run in turn after the servers
    bool parallel{false};             ///< run the --run commands at the same time
    std::vector<std::string> set;     ///< "ns3::Class::Attribute=value" defaults for the fabric
    std::string cache;
    std::string lagThreshold{"1ms"};
};

struct CommandOutcome
{
    std::string on;
    std::string cmd;
    int exitCode{-1};
    std::string out;
};

struct EmulateResult
{
    int exitCode{0};
    std::vector<CommandOutcome> commands;
    uint64_t framesFromEndpoints{0};
    uint64_t framesToEndpoints{0};
    uint64_t arpReplies{0};
    uint64_t neighbourAdverts{0};
    uint64_t fabricDrops{0};
    uint64_t congestionDrops{0}; ///< buffer_full + headroom_overflow: what PFC must prevent
    uint64_t pfcFrames{0};
    uint64_t ecnMarks{0}; ///< CE written into real frames by the switches
    std::map<std::string, uint64_t> edgeDrops;
    double lagMaxMs{0};
    double lagP99Ms{0};
    bool timingFaithful{true};
    int interruptedBy{0}; ///< the signal that stopped the run, or 0
};

EmulateResult RunEmulation(const EmulateOptions& opt, std::ostream& out, std::ostream& err);

} // namespace fabemu

#endif
