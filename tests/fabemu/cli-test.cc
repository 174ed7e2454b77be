#include "cli.h"
#include "exit-codes.h"

#include <doctest/doctest.h>

#include <sstream>

using namespace fabemu;

namespace
{
struct Run
{
    int code;
    std::string out;
    std::string err;
};

Run
Fabemu(std::vector<std::string> args)
{
    std::ostringstream out;
    std::ostringstream err;
    const int code = RunFabemu(args, out, err);
    return {code, out.str(), err.str()};
}
} // namespace

TEST_CASE("--help lists the subcommands and the exit codes")
{
    const auto r = Fabemu({"--help"});
    CHECK(r.code == kExitOk);
    CHECK(r.out.find("doctor") != std::string::npos);
    CHECK(r.out.find("Exit codes") != std::string::npos);
}

TEST_CASE("--version names fabemu's and ns-3's versions")
{
    const auto r = Fabemu({"--version"});
    CHECK(r.code == kExitOk);
    CHECK(r.out.find(std::string("fabemu ") + Version()) == 0);
    CHECK(r.out.find("ns-3 3.37") != std::string::npos);
}

TEST_CASE("an unknown subcommand exits 2 and names it")
{
    const auto r = Fabemu({"frobnicate"});
    CHECK(r.code == kExitBadInput);
    CHECK(r.err.find("unknown subcommand 'frobnicate'") != std::string::npos);
}

TEST_CASE("an unknown option and a missing subcommand exit 2")
{
    CHECK(Fabemu({"--bogus"}).code == kExitBadInput);
    CHECK(Fabemu({}).code == kExitBadInput);
}

TEST_CASE("doctor reports the host's Soft-RoCE support with a reason")
{
    const auto r = Fabemu({"doctor"});
    CHECK(r.code == kExitOk);
    CHECK(r.out.find("host Soft-RoCE") != std::string::npos);
    CHECK(r.out.find("endpoints run as") != std::string::npos);
}
