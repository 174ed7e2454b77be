// fabemu run called in-process by the scenario tests, with its outputs captured,
// and the readers of the results folder it writes.
#ifndef FABEMU_TESTS_RUN_IN_PROCESS_H
#define FABEMU_TESTS_RUN_IN_PROCESS_H

#include "emulator/fabemu/cli.h"
#include "emulator/fabemu/run.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

struct RunOutcome
{
    int code;
    std::string out;
    std::string err;
};

inline RunOutcome
RunInProcess(const std::filesystem::path& file, const std::filesystem::path& out,
             std::vector<std::string> set = {})
{
    fabemu::RunOptions opt;
    opt.file = file.string();
    opt.out = out.string();
    opt.set = std::move(set);
    opt.progress = fabemu::ProgressMode::Quiet;
    std::ostringstream o;
    std::ostringstream e;
    const int code = fabemu::RunScenarioFile(opt, o, e);
    return {code, o.str(), e.str()};
}

/// The whole command line, as the binary's main gives it.
inline RunOutcome
FabemuInProcess(const std::vector<std::string>& args)
{
    std::ostringstream out;
    std::ostringstream err;
    const int code = fabemu::RunFabemu(args, out, err);
    return {code, out.str(), err.str()};
}

inline nlohmann::json
Summary(const std::filesystem::path& dir)
{
    std::ifstream in(dir / "summary.json");
    return nlohmann::json::parse(in);
}

inline std::string
Slurp(const std::filesystem::path& p)
{
    std::ifstream in(p, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

#endif
