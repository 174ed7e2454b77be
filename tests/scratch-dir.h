// A test's scratch folder: made fresh under the temporary directory, removed when it
// goes out of scope, also when a REQUIRE or an exception leaves the test case early.
#ifndef FABEMU_TESTS_SCRATCH_DIR_H
#define FABEMU_TESTS_SCRATCH_DIR_H

#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <system_error>

/// Converts to a path: `ScratchDir dir("repro"); Run(file, dir / "a");`.
class ScratchDir : public std::filesystem::path
{
  public:
    /// <tmp>/fabemu-<name>-XXXXXX, unique (mkdtemp).
    explicit ScratchDir(const std::string& name)
    {
        std::string tmpl =
            (std::filesystem::temp_directory_path() / ("fabemu-" + name + "-XXXXXX")).string();
        if (mkdtemp(tmpl.data()) == nullptr)
        {
            throw std::system_error(errno, std::generic_category(), "mkdtemp " + tmpl);
        }
        std::filesystem::path::operator=(tmpl);
    }
    ~ScratchDir()
    {
        std::error_code ignored; // a destructor must not throw
        std::filesystem::remove_all(*this, ignored);
    }
    ScratchDir(const ScratchDir&) = delete;
    ScratchDir& operator=(const ScratchDir&) = delete;
};

#endif
