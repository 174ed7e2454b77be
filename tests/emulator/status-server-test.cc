// The live status socket: what a client reads, who may read it, and that it
// goes away with the server, stale or not.
#include "../scratch-dir.h"
#include "emulator/fabemu/status-server.h"

#include <doctest/doctest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>
#include <unistd.h>

using namespace fabemu;
using nlohmann::json;

TEST_CASE("a client reads the latest document, with its age, from a socket only its owner may open")
{
    const ScratchDir dir("status-test");
    auto live = std::make_shared<LiveStatus>();
    live->Set("simulation", {{"time_s", 1.5}});
    live->Set("commands", json::array({{{"on", "h1"}, {"state", "running"}}}));
    const std::string path = dir.string() + "/s.status";
    {
        StatusServer server(path, live);
        struct stat st
        {
        };
        REQUIRE(stat(path.c_str(), &st) == 0);
        CHECK(S_ISSOCK(st.st_mode));
        CHECK((st.st_mode & 0777) == 0600);

        json doc = json::parse(ReadStatus(path));
        CHECK(doc["simulation"]["time_s"] == 1.5);
        CHECK(doc["commands"][0]["on"] == "h1");
        CHECK(doc["age_ms"].get<int64_t>() >= 0);

        // A later publication is what the next client sees; many clients at once are served.
        live->Set("simulation", {{"time_s", 2.5}});
        std::vector<std::thread> clients;
        std::vector<double> seen(8, 0);
        for (size_t i = 0; i < seen.size(); ++i)
        {
            clients.emplace_back(
                [&, i] { seen[i] = json::parse(ReadStatus(path))["simulation"]["time_s"]; });
        }
        for (auto& t : clients)
        {
            t.join();
        }
        for (double t : seen)
        {
            CHECK(t == 2.5);
        }
    }
    CHECK_FALSE(std::filesystem::exists(path)); // nothing left behind
}

TEST_CASE("a stale socket is replaced; a live one is refused, naming it")
{
    const ScratchDir dir("status-test");
    auto live = std::make_shared<LiveStatus>();
    const std::string path = dir.string() + "/s.status";
    // A socket file whose server is gone (as after a kill -9).
    {
        const int fd = socket(AF_UNIX, SOCK_STREAM, 0);
        sockaddr_un addr{};
        addr.sun_family = AF_UNIX;
        std::snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", path.c_str());
        REQUIRE(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0);
        close(fd);
    }
    REQUIRE(std::filesystem::exists(path));
    StatusServer server(path, live);
    CHECK_NOTHROW(ReadStatus(path));
    try
    {
        StatusServer second(path, live);
        FAIL("a second server on a live socket was accepted");
    }
    catch (const StatusError& e)
    {
        CHECK(std::string(e.what()).find(path) != std::string::npos);
    }
    CHECK_NOTHROW(ReadStatus(path)); // the first one still serves
}

TEST_CASE("reading a socket nobody serves fails with its path; running emulators are found by pid")
{
    const ScratchDir dir("status-test");
    try
    {
        ReadStatus(dir.string() + "/none.status");
        FAIL("read a status from nothing");
    }
    catch (const StatusError& e)
    {
        CHECK(std::string(e.what()).find(dir.string() + "/none.status") != std::string::npos);
    }
    setenv("XDG_RUNTIME_DIR", dir.c_str(), 1);
    CHECK(StatusSocketPath(1234) == dir.string() + "/fabemu-1234.status");
    auto live = std::make_shared<LiveStatus>();
    {
        StatusServer mine(StatusSocketPath(getpid()), live);
        // A socket named for a process that no longer runs is not listed.
        std::ofstream(dir.string() + "/fabemu-999999999.status") << "";
        const auto found = FindStatusSockets();
        REQUIRE(found.size() == 1);
        CHECK(found[0] == StatusSocketPath(getpid()));
    }
    CHECK(FindStatusSockets().empty());
    unsetenv("XDG_RUNTIME_DIR");
}
