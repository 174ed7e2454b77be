#include "emulator/fabemu/results-folder.h"

#include <fmt/format.h>

#include <fstream>
#include <unistd.h>

namespace fabemu
{

namespace fs = std::filesystem;

fs::path
ResultsPath(const std::string& out)
{
    fs::path p(out);
    while (p.has_relative_path() && p.filename().empty())
    {
        p = p.parent_path(); // "results/run1/" is results/run1
    }
    return p;
}

std::string
ResultsTargetProblem(const fs::path& target, bool force)
{
    const std::string name = target.filename().string();
    if (name.empty() || name == "." || name == "..")
    {
        // The temporary folder is made beside the target: it would be inside it.
        return fmt::format("--out '{}' must name a folder (such as results/run1), not '.' or '..'",
                           target.string());
    }
    std::error_code ec;
    if (force || !fs::exists(fs::symlink_status(target, ec)))
    {
        return "";
    }
    if (fs::is_directory(fs::symlink_status(target, ec)) &&
        (fs::exists(target / kResultsMarker, ec) || fs::is_empty(target, ec)))
    {
        return "";
    }
    return fmt::format("{} exists and is not a fabemu results folder (it has no {}); "
                       "choose another --out, or add --force to replace it",
                       target.string(), kResultsMarker);
}

void
MarkResults(const fs::path& dir)
{
    std::ofstream(dir / kResultsMarker)
        << "A fabemu results folder: fabemu run --out replaces it.\n";
}

void
PublishResults(const fs::path& tmp, const fs::path& target, std::error_code& ec)
{
    fs::remove_all(target, ec);
    const fs::path parent = target.parent_path();
    fs::create_directories(parent.empty() ? fs::path(".") : parent, ec);
    fs::rename(tmp, target, ec);
}

std::string
ThisHost()
{
    char name[256] = {};
    if (gethostname(name, sizeof name - 1) != 0)
    {
        return "";
    }
    std::string host(name);
    for (char& c : host)
    {
        c = c == '/' ? '_' : c; // a folder name's part
    }
    return host;
}

std::string
TemporaryResultsName(const std::string& name, pid_t pid)
{
    return fmt::format(".{}.tmp-{}-{}", name, ThisHost(), pid);
}

} // namespace fabemu
