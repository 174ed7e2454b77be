// fabemu run --out and fabemu demo --out replace only what fabemu wrote: a folder
// holding anything else is refused (exit 2, left as it was) unless --force.
#include "../run-in-process.h"
#include "../scratch-dir.h"
#include "emulator/fabemu/cli.h"
#include "emulator/fabemu/exit-codes.h"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

using namespace fabemu;
namespace fs = std::filesystem;

namespace
{

using Outcome = RunOutcome;

Outcome
Fabemu(const std::vector<std::string>& args)
{
    return FabemuInProcess(args);
}

/// A run of a few microseconds: one small write between two hosts.
fs::path
TinyScenario(const fs::path& dir)
{
    const fs::path file = dir / "tiny.yaml";
    std::ofstream(file) << "name: tiny\nduration: 1ms\ntopology: {builder: pair}\n"
                           "workloads:\n  - {type: bulk, src: h0, dst: h1, bytes: 64KB}\n";
    return file;
}

bool
OnlyNotes(const fs::path& dir)
{
    size_t entries = 0;
    for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir))
    {
        ++entries;
    }
    std::ifstream in(dir / "notes.txt");
    std::string text;
    std::getline(in, text);
    return entries == 1 && text == "my notes";
}

} // namespace

TEST_CASE("--out onto a folder fabemu did not write: exit 2, untouched; --force replaces it; a "
          "results folder is replaced")
{
    const ScratchDir dir("out");
    const fs::path file = TinyScenario(dir);
    const fs::path target = dir / "mine";
    fs::create_directories(target);
    std::ofstream(target / "notes.txt") << "my notes\n";

    auto r = Fabemu({"run", file.string(), "--out", target.string(), "--quiet"});
    CHECK(r.code == kExitBadInput);
    CHECK(r.err.find(target.string()) != std::string::npos);
    CHECK(r.err.find("--force") != std::string::npos);
    CHECK(OnlyNotes(target));
    for (const auto& e : fs::directory_iterator(dir))
    {
        CHECK(e.path().filename().string().find(".tmp-") == std::string::npos); // nothing begun
    }

    r = Fabemu({"run", file.string(), "--out", target.string(), "--quiet", "--force"});
    REQUIRE(r.code == kExitOk);
    CHECK_FALSE(fs::exists(target / "notes.txt"));
    CHECK(fs::exists(target / "summary.json"));
    CHECK(fs::exists(target / ".fabemu-results"));

    // Its own results folder: replaced without --force, as before.
    std::ofstream(target / "stale.txt") << "from the last run\n";
    r = Fabemu({"run", file.string(), "--out", target.string(), "--quiet"});
    CHECK(r.code == kExitOk);
    CHECK_FALSE(fs::exists(target / "stale.txt"));
    CHECK(fs::exists(target / "summary.json"));

    // The same folder with a trailing '/'; never '.' (the temporary folder would be inside it).
    CHECK(Fabemu({"run", file.string(), "--out", target.string() + "/", "--quiet"}).code ==
          kExitOk);
    CHECK(Fabemu({"run", file.string(), "--out", ".", "--quiet", "--force"}).code == kExitBadInput);

    // An empty folder or a plain file that is not a folder.
    fs::create_directories(dir / "empty");
    CHECK(Fabemu({"run", file.string(), "--out", (dir / "empty").string(), "--quiet"}).code ==
          kExitOk);
    std::ofstream(dir / "a-file") << "data\n";
    CHECK(Fabemu({"run", file.string(), "--out", (dir / "a-file").string(), "--quiet"}).code ==
          kExitBadInput);
    CHECK(fs::is_regular_file(dir / "a-file"));
}

TEST_CASE("the default results/NAME and demo --out follow the same rule")
{
    const ScratchDir dir("default-out");
    const fs::path file = TinyScenario(dir);
    const fs::path cwd = fs::current_path();
    fs::current_path(dir);
    fs::create_directories("results/tiny");
    std::ofstream("results/tiny/notes.txt") << "my notes\n";
    const auto run = Fabemu({"run", file.string(), "--quiet"});
    fs::create_directories("demo-out");
    std::ofstream("demo-out/notes.txt") << "my notes\n";
    const auto demo =
        Fabemu({"demo", "--senders", "2", "--bytes", "10000", "--out", "demo-out", "--quiet"});
    const auto forced = Fabemu(
        {"demo", "--senders", "2", "--bytes", "10000", "--out", "demo-out", "--quiet", "--force"});
    fs::current_path(cwd);
    CHECK(run.code == kExitBadInput);
    CHECK(run.err.find("results/tiny") != std::string::npos);
    CHECK(OnlyNotes(dir / "results" / "tiny"));
    CHECK(demo.code == kExitBadInput);
    CHECK(forced.code == kExitOk);
    CHECK(fs::exists(dir / "demo-out" / ".fabemu-results"));
    CHECK_FALSE(fs::exists(dir / "demo-out" / "notes.txt"));
}

TEST_CASE("--out with shell metacharacters: no shell sees it; plots drawn inside it")
{
    const ScratchDir dir("results-shell");
    const fs::path canary = dir / "pwned";
    // Every character a shell acts on, in the folder's name: quotes, ;, &, |, $(...),
    // backquotes, globs, a newline; and a quote that closes a single-quoted word and
    // runs a command after it. Were either pasted into a shell command, the canary
    // would be made, or the plots not drawn.
    const std::string c = canary.string();
    for (const std::string& name : std::vector<std::string>{"out 'a\"b;touch " + c + ";$(touch " +
                                                                c + ")`touch " + c + "` & | * ?\nx",
                                                            "x';touch " + c + ";'"})
    {
        CAPTURE(name);
        const fs::path out = dir / name;
        const Outcome r = Fabemu({"run", TinyScenario(dir).string(), "--out", out.string()});
        CAPTURE(r.err);
        CHECK(r.code == kExitOk);
        CHECK(fs::exists(out / "summary.json"));
        CHECK(fs::exists(out / "report.md"));
        if (system("command -v gnuplot >/dev/null 2>&1") == 0)
        {
            CHECK(fs::exists(out / "plots" / "fct-slowdown.png")); // gnuplot ran in that folder
        }
        else
        {
            MESSAGE("gnuplot is not installed: the plots' PNGs are not checked");
        }
        CHECK_FALSE(fs::exists(canary));
        CHECK_FALSE(fs::exists(fs::current_path() / "pwned"));
    }
}
