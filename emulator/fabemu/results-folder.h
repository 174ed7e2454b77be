// Results folders: written into a temporary folder beside the target, marked as
// fabemu's, renamed into place when complete. `--out` replaces only a folder
// that carries the marker (or an empty one), unless --force.
#ifndef FABEMU_RESULTS_FOLDER_H
#define FABEMU_RESULTS_FOLDER_H

#include <sys/types.h>

#include <filesystem>
#include <string>
#include <system_error>

namespace fabemu
{

/// The file in every results folder that says fabemu wrote it.
inline constexpr const char* kResultsMarker = ".fabemu-results";

/// The results folder \p out names, without a trailing '/'.
std::filesystem::path ResultsPath(const std::string& out);

/// Why \p target may not be replaced by a results folder, or "" when it may: it
/// exists, is not an empty folder, and has no marker (\p force allows that), or it is
/// '.' or '..' (never allowed: the temporary folder would be inside it).
std::string ResultsTargetProblem(const std::filesystem::path& target, bool force);

/// Writes the marker into \p dir (the temporary folder, before it is renamed).
void MarkResults(const std::filesystem::path& dir);

/// Replaces \p target with \p tmp: removes the old folder, then renames.
void PublishResults(const std::filesystem::path& tmp, const std::filesystem::path& target,
                    std::error_code& ec);

/// This machine's host name ("" if unknown): temporary folders carry it.
std::string ThisHost();

/// The folder a run writes before it is renamed to \p name: ".NAME.tmp-HOST-PID", beside
/// the target. The host keeps one machine's clean-up off another's runs in a shared folder.
std::string TemporaryResultsName(const std::string& name, pid_t pid);

} // namespace fabemu

#endif
