// Fuzz target: the live status socket (emulator/fabemu/status-server). The server has no
// request to parse: it answers every connection with its document and reads nothing, so
// the input is written to a live server as a client's request and the answer must still
// be the document, whole. What does get parsed is fuzzed too: the names of the sockets
// `fabemu status` and the start-up sweep find in the runtime folder (PidOfStatusSocket:
// an accepted name is exactly the one StatusSocketPath gives its pid, a pid kill(2) can
// take), and the document as `fabemu status` reads it (json::parse, then dump: cli.cc
// catches std::exception there, so anything else is a finding).
#include "emulator/fabemu/status-server.h"
#include "fuzz/fuzz-check.h"

#include <sys/socket.h>
#include <sys/un.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <limits>
#include <memory>
#include <string>
#include <unistd.h>

namespace
{

struct Server
{
    std::string dir;
    std::shared_ptr<fabemu::LiveStatus> live = std::make_shared<fabemu::LiveStatus>();
    std::unique_ptr<fabemu::StatusServer> server;

    Server()
    {
        char tmpl[] = "/tmp/fabemu-fuzz-status-XXXXXX";
        FUZZ_CHECK(mkdtemp(tmpl) != nullptr, "mkdtemp");
        dir = tmpl;
        live->Set("simulation", {{"time_s", 1.5}, {"events", 42}});
        server = std::make_unique<fabemu::StatusServer>(dir + "/s.status", live);
    }
    ~Server()
    {
        server.reset();
        std::error_code ec;
        std::filesystem::remove_all(dir, ec);
    }
};

/// Connects, writes \p request (as much as the server takes before it closes), reads the
/// answer to its end.
std::string
Ask(const std::string& path, const uint8_t* request, size_t size)
{
    const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    FUZZ_CHECK(fd >= 0, "socket");
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, path.c_str(), sizeof addr.sun_path - 1);
    int rc;
    while ((rc = connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr)) != 0 &&
           errno == EINTR)
    {
    }
    FUZZ_CHECK(rc == 0, "the status server refused a connection");
    // libFuzzer's timeout timer (SIGALRM) interrupts system calls: EINTR is not an answer.
    size_t sent = 0;
    while (sent < size)
    {
        const ssize_t n = send(fd, request + sent, size - sent, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n < 0 && errno == EINTR)
        {
            continue;
        }
        if (n <= 0)
        {
            break; // the server closed, or does not read: it owes us nothing more
        }
        sent += static_cast<size_t>(n);
    }
    std::string answer;
    char buf[4096];
    for (;;)
    {
        const ssize_t n = read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR)
        {
            continue;
        }
        if (n <= 0)
        {
            break;
        }
        answer.append(buf, static_cast<size_t>(n));
    }
    close(fd);
    return answer;
}

void
SocketName(const std::string& name)
{
    const long pid = fabemu::PidOfStatusSocket(name);
    FUZZ_CHECK(pid >= 0 && pid <= std::numeric_limits<pid_t>::max(), "a pid kill(2) cannot take");
    if (pid > 0)
    {
        const std::string path = fabemu::StatusSocketPath(pid);
        FUZZ_CHECK(path.substr(path.rfind('/') + 1) == name,
                   "a socket name accepted that StatusSocketPath does not give");
    }
}

void
Document(const std::string& text)
{
    try
    {
        (void)nlohmann::json::parse(text).dump(2);
    }
    catch (const std::exception&)
    {
        // `fabemu status`: "fabemu status: <what>", exit 1
    }
}

} // namespace

extern "C" int
LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    static Server server;
    const std::string text(reinterpret_cast<const char*>(data), size);
    SocketName(text);
    Document(text);
    const std::string answer = Ask(server.server->Path(), data, size);
    const auto doc = nlohmann::json::parse(answer, nullptr, false);
    FUZZ_CHECK(!doc.is_discarded() && doc.contains("age_ms") && doc.contains("simulation"),
               "the status answer is not the whole document");
    return 0;
}
