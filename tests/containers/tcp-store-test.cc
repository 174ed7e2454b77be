// fabemu-allreduce's rendezvous store: set and get across clients, a get that
// waits for a later set, timeouts that name the key, garbage on the wire, and a
// server that shuts down while clients wait.
#include "containers/collectives/tcp-store.h"

#include <doctest/doctest.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <unistd.h>

using namespace fabemu;
using namespace std::chrono_literals;

namespace
{

std::vector<char>
Bytes(const std::string& s)
{
    return {s.begin(), s.end()};
}

std::string
Text(const std::vector<char>& v)
{
    return {v.begin(), v.end()};
}

} // namespace

TEST_CASE("two clients meet through the store; a get waits for the set")
{
    TcpStoreServer server(0);
    REQUIRE(server.Port() > 0);
    TcpStore a("127.0.0.1", server.Port(), 5s);
    TcpStore b("localhost", server.Port(), 5s);
    a.set("rank/0", Bytes("address of 0"));
    CHECK(Text(b.get("rank/0")) == "address of 0");
    // A binary value with a zero byte survives.
    a.set("blob", std::vector<char>{'x', '\0', 'y'});
    CHECK(b.get("blob").size() == 3);

    const auto start = std::chrono::steady_clock::now();
    std::thread later([&a] {
        std::this_thread::sleep_for(300ms);
        a.set("late", Bytes("here"));
    });
    CHECK(Text(b.get("late")) == "here");
    CHECK(std::chrono::steady_clock::now() - start >= 250ms);
    later.join();
    b.wait({"rank/0", "late"}, 1s);
    CHECK(a.LocalAddress() == "127.0.0.1");
}

TEST_CASE("a key never set times out with its name")
{
    TcpStoreServer server(0);
    TcpStore a("127.0.0.1", server.Port(), 300ms);
    const auto start = std::chrono::steady_clock::now();
    CHECK_THROWS_WITH_AS(a.get("missing/key"), doctest::Contains("missing/key"), StoreError);
    CHECK(std::chrono::steady_clock::now() - start < 4s);
    CHECK_THROWS_WITH_AS(a.wait({"other"}, 200ms), doctest::Contains("'other' was not set"),
                         StoreError);
    // The connection is still good after a timeout.
    a.set("k", Bytes("v"));
    CHECK(Text(a.get("k")) == "v");
}

TEST_CASE("no server: connecting gives up at the timeout and says what to check")
{
    uint16_t port;
    {
        TcpStoreServer probe(0); // a port that was free, now closed again
        port = probe.Port();
    }
    const auto start = std::chrono::steady_clock::now();
    CHECK_THROWS_WITH_AS(TcpStore("127.0.0.1", port, 500ms), doctest::Contains("rank 0"),
                         StoreError);
    CHECK(std::chrono::steady_clock::now() - start >= 400ms);
    CHECK_THROWS_WITH_AS(TcpStore("no-such-host.invalid", port, 500ms),
                         doctest::Contains("no-such-host.invalid"), StoreError);
}

TEST_CASE("garbage on the wire drops that client only; the server shuts down under waiters")
{
    auto server = std::make_unique<TcpStoreServer>(0);
    {
        const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_port = htons(server->Port());
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
        // A set whose key claims 4 GB: refused, not allocated.
        const char junk[] = {'S', '\xff', '\xff', '\xff', '\xff', 'k'};
        CHECK(::write(fd, junk, sizeof junk) == static_cast<ssize_t>(sizeof junk));
        char c;
        CHECK(::read(fd, &c, 1) == 0); // the server hung up
        ::close(fd);
    }
    TcpStore good("127.0.0.1", server->Port(), 10s);
    good.set("k", Bytes("v"));
    CHECK(Text(good.get("k")) == "v");

    // A client waiting for a key that never comes, then the server goes: the
    // server's destructor does not hang on it, and the client hears of it.
    const uint16_t port = server->Port();
    std::string why;
    std::atomic<bool> waiting{false};
    std::thread waiter([port, &why, &waiting] {
        try
        {
            TcpStore w("127.0.0.1", port, 30s);
            waiting = true;
            w.get("never");
        }
        catch (const StoreError& e)
        {
            why = e.what();
        }
        waiting = true;
    });
    while (!waiting)
    {
        std::this_thread::sleep_for(10ms);
    }
    std::this_thread::sleep_for(300ms); // well into its get
    const auto start = std::chrono::steady_clock::now();
    server.reset();
    waiter.join();
    CHECK(std::chrono::steady_clock::now() - start < 5s);
    CHECK(why.find("never") != std::string::npos);
}
