// A scenario written out as text and run in process: its exit code, what it printed,
// and its summary.json (when it wrote one).
#ifndef FABEMU_TESTS_RUN_TEXT_H
#define FABEMU_TESTS_RUN_TEXT_H

#include "../run-in-process.h"
#include "../scratch-dir.h"

#include <filesystem>
#include <fstream>
#include <string>

struct TextRun
{
    int code{0};
    std::string out;
    std::string err;
    nlohmann::json summary;
};

/// Runs "name: \p name" and \p text as \p dir / name.yaml into \p dir / name.
inline TextRun
RunText(const ScratchDir& dir, const std::string& name, const std::string& text)
{
    const std::filesystem::path file = dir / (name + ".yaml");
    std::ofstream(file) << "name: " << name << "\n" << text;
    const auto r = RunInProcess(file, dir / name);
    TextRun run{r.code, r.out, r.err, {}};
    if (std::filesystem::exists(dir / name / "summary.json"))
    {
        run.summary = Summary(dir / name);
    }
    return run;
}

#endif
