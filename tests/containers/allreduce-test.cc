// fabemu-allreduce as the VMs run it, here as processes on this host joined by
// Gloo's TCP transport over loopback (the ibverbs transport needs rxe: the e2e
// scenarios run that). Every operation and algorithm gives the right result on
// every rank, a spoiled element is caught, and bad input is refused by name.
#include "containers/collectives/tcp-store.h"
#include "scenarios/src/results.h"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>
#include <sys/wait.h>

#include <cstdio>
#include <string>
#include <unistd.h>
#include <vector>

namespace
{

struct RankRun
{
    int exitCode{-1};
    std::string out;
};

/// A port free a moment ago, for rank 0's store.
uint16_t
FreePort()
{
    fabemu::TcpStoreServer probe(0);
    return probe.Port();
}

/// Runs \p n ranks of fabemu-allreduce at once with \p args (plus the TCP transport
/// and, when \p flags, rank, size and the store on loopback) in environment \p env
/// ({rank} and {port} in it filled in), and collects each one's output.
std::vector<RankRun>
RunRanks(int n, const std::vector<std::string>& args, const std::vector<std::string>& env = {},
         bool flags = true)
{
    const std::string port = std::to_string(FreePort());
    struct Child
    {
        pid_t pid;
        FILE* out;
    };
    std::vector<Child> children;
    for (int r = 0; r < n; ++r)
    {
        int fds[2];
        REQUIRE(pipe(fds) == 0);
        const pid_t pid = fork();
        if (pid == 0)
        {
            dup2(fds[1], 1);
            dup2(fds[1], 2);
            close(fds[0]);
            for (auto e : env)
            {
                for (const auto& [key, value] :
                     {std::pair<std::string, std::string>{"{rank}", std::to_string(r)},
                      {"{port}", port}})
                {
                    if (const auto at = e.find(key); at != std::string::npos)
                    {
                        e.replace(at, key.size(), value);
                    }
                }
                const auto eq = e.find('=');
                setenv(e.substr(0, eq).c_str(), e.substr(eq + 1).c_str(), 1);
            }
            std::vector<std::string> all{"fabemu-allreduce", "--transport", "tcp"};
            if (flags)
            {
                all.insert(all.end(), {"--rank", std::to_string(r), "--size", std::to_string(n),
                                       "--master", "127.0.0.1", "--master-port", port});
            }
            all.insert(all.end(), args.begin(), args.end());
            std::vector<char*> argv;
            for (auto& a : all)
            {
                argv.push_back(a.data());
            }
            argv.push_back(nullptr);
            execv(FABEMU_ALLREDUCE, argv.data());
            _exit(127);
        }
        close(fds[1]);
        children.push_back({pid, fdopen(fds[0], "r")});
    }
    std::vector<RankRun> runs(n);
    for (int r = 0; r < n; ++r)
    {
        char buf[4096];
        for (size_t got; (got = fread(buf, 1, sizeof buf, children[r].out)) > 0;)
        {
            runs[r].out.append(buf, got);
        }
        fclose(children[r].out);
        int status = 0;
        waitpid(children[r].pid, &status, 0);
        runs[r].exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    }
    return runs;
}

} // namespace

TEST_CASE("every operation and algorithm is right on every rank, and the table says so")
{
    struct Case
    {
        int ranks;
        std::vector<std::string> args;
        double busFactor; // busBw / algBw, nccl-tests' factor
    };
    const std::vector<Case> cases{
        {3, {"--op", "allreduce", "--algorithm", "ring"}, 2.0 * 2 / 3},
        {3, {"--op", "allreduce", "--algorithm", "ring-chunked"}, 2.0 * 2 / 3},
        {3, {"--op", "allreduce", "--algorithm", "halving-doubling"}, 2.0 * 2 / 3},
        {4, {"--op", "allreduce", "--algorithm", "bcube"}, 2.0 * 3 / 4},
        {3, {"--op", "allgather"}, 2.0 / 3},
        {3, {"--op", "broadcast"}, 1.0},
    };
    for (const auto& c : cases)
    {
        auto args = c.args;
        args.insert(args.end(), {"--bytes", "12KB,96KB", "-n", "3", "-w", "1", "--timeout", "30"});
        CAPTURE(args[1]);
        CAPTURE(args[3 % args.size()]);
        const auto runs = RunRanks(c.ranks, args);
        for (int r = 0; r < c.ranks; ++r)
        {
            CAPTURE(r);
            INFO(runs[r].out);
            CHECK(runs[r].exitCode == 0);
            const auto m = fabemu::CollectiveTableMetrics(runs[r].out);
            REQUIRE(m.contains("correct"));
            CHECK(m["correct"] == true);
            CHECK(m["wrong"] == 0);
            CHECK(m["sizes"] == 2);
            CHECK(m["size_bytes"] == 96 * 1024);
            CHECK(m["time_s"].get<double>() > 0);
            CHECK(m["busbw_gbs"].get<double>() > 0);
            CHECK(m["busbw_gbs"].get<double>() ==
                  doctest::Approx(m["algbw_gbs"].get<double>() * c.busFactor).epsilon(0.01));
        }
    }
}

TEST_CASE("torchrun's variables stand in for the flags")
{
    const auto runs = RunRanks(
        2, {"--bytes", "4KB"},
        {"RANK={rank}", "WORLD_SIZE=2", "MASTER_ADDR=127.0.0.1", "MASTER_PORT={port}"}, false);
    for (int r = 0; r < 2; ++r)
    {
        INFO(runs[r].out);
        CHECK(runs[r].exitCode == 0);
        CHECK(runs[r].out.find("2 ranks, rank " + std::to_string(r)) != std::string::npos);
    }
}

TEST_CASE("one wrong element on one rank makes that rank fail, and the table counts it")
{
    const auto runs = RunRanks(3, {"--bytes", "4KB", "-w", "0", "-n", "2", "--inject-wrong", "1"});
    INFO(runs[1].out);
    CHECK(runs[0].exitCode == 0);
    CHECK(runs[1].exitCode == 1);
    CHECK(runs[2].exitCode == 0);
    const auto m = fabemu::CollectiveTableMetrics(runs[1].out);
    CHECK(m["correct"] == false);
    CHECK(m["wrong"] == 2); // one per iteration
    CHECK(runs[1].out.find("Out of bounds values : 2 FAILED") != std::string::npos);
}

TEST_CASE("bad input is refused with the culprit named")
{
    auto one = [](const std::vector<std::string>& args) { return RunRanks(1, args)[0]; };
    auto r = one({"--bytes", "3"});
    CHECK(r.exitCode == 2);
    CHECK(r.out.find("'3'") != std::string::npos);
    r = one({"--bytes", "8XB"});
    CHECK(r.exitCode == 2);
    CHECK(r.out.find("'8XB' is not a size") != std::string::npos);
    r = one({"--bytes", "99999999999999999999G"}); // no wrap-around to a small size
    CHECK(r.exitCode == 2);
    CHECK(r.out.find("2 GB") != std::string::npos);
    r = one({"--bytes", "0004096", "-n", "1", "-w", "0"}); // leading zeros are fine
    CHECK(r.exitCode == 0);
    r = one({"--algorithm", "tree"});
    CHECK(r.exitCode == 2);
    CHECK(r.out.find("tree") != std::string::npos);
    r = RunRanks(1, {"--size", "1000", "--rank", "0", "--master", "127.0.0.1"}, {}, false)[0];
    CHECK(r.exitCode == 2);
    CHECK(r.out.find("at most 740") != std::string::npos);
    // 3 floats do not split over 2 ranks: both say so.
    for (const auto& rank : RunRanks(2, {"--op", "allgather", "--bytes", "12"}))
    {
        CHECK(rank.exitCode == 2);
        CHECK(rank.out.find("does not split into 2") != std::string::npos);
    }

    // No rank, size or master anywhere.
    const auto none =
        RunRanks(1, {"--bytes", "4KB"}, {"RANK=", "WORLD_SIZE=", "MASTER_ADDR="}, false);
    CHECK(none[0].exitCode == 2);
    CHECK(none[0].out.find("--rank (or RANK) is not set") != std::string::npos);

    // Rank 1 of 2 whose rank 0 never comes: it gives up at its timeout and says why.
    const auto alone = RunRanks(1,
                                {"--rank", "1", "--size", "2", "--master", "127.0.0.1",
                                 "--master-port", std::to_string(FreePort()), "--timeout", "2"},
                                {}, false);
    INFO(alone[0].out);
    CHECK(alone[0].exitCode == 1);
    CHECK(alone[0].out.find("rank 1:") != std::string::npos);
    CHECK(alone[0].out.find("rank 0 running") != std::string::npos);
}

TEST_CASE("the collective table parser reads nccl-tests' own output")
{
    // all_reduce_perf's format: out-of-place then in-place columns.
    const std::string nccl = R"(# nThread 1 nGpus 8 minBytes 8 maxBytes 134217728 step: 2(factor)
#
#                                                              out-of-place                       in-place
#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)
    67108864      16777216     float     sum      -1    709.2   94.62  165.59      0    707.8   94.81  165.92      0
   134217728      33554432     float     sum      -1   1342.5   99.98  174.96      0   1340.1  100.15  175.27      0
# Out of bounds values : 0 OK
# Avg bus bandwidth    : 170.43
)";
    const auto m = fabemu::CollectiveTableMetrics(nccl);
    CHECK(m["size_bytes"] == 134217728);
    CHECK(m["busbw_gbs"] == doctest::Approx(174.96));
    CHECK(m["algbw_gbs"] == doctest::Approx(99.98));
    CHECK(m["time_s"] == doctest::Approx(1342.5e-6));
    CHECK(m["avg_busbw_gbs"] == doctest::Approx((165.59 + 174.96) / 2));
    CHECK(m["correct"] == true);
    // -c 0: not checked, so no verdict either way.
    std::string unchecked = nccl;
    for (auto pos = unchecked.find("      0 "); pos != std::string::npos;
         pos = unchecked.find("      0 ", pos))
    {
        unchecked.replace(pos, 8, "    N/A ");
    }
    CHECK_FALSE(fabemu::CollectiveTableMetrics(unchecked).contains("correct"));
    CHECK(fabemu::CollectiveTableMetrics("no table here\n").empty());
    // perftest output is not a collective table.
    CHECK(fabemu::CommandMetrics(" #bytes     #iterations    BW peak[MB/sec]    BW "
                                 "average[MB/sec]   MsgRate[Mpps]\n 65536      200     "
                                 "     4.76               4.75                 0.000076\n")
              .contains("bw_average_mb_sec"));
}

TEST_CASE("ucx_perftest's summary line becomes metrics, latency or overhead by its header")
{
    const std::string bw =
        R"(+--------------+--------------+------------------------------+---------------------+-----------------------+
|              |              |       overhead (usec)        |   bandwidth (MB/s)  |  message rate (msg/s) |
+--------------+--------------+----------+---------+---------+----------+----------+-----------+-----------+
|    Stage     | # iterations | 50.0%ile | average | overall |  average |  overall |  average  |  overall  |
+--------------+--------------+----------+---------+---------+----------+----------+-----------+-----------+
[thread 0]               145   6349.000  6908.821  6908.821        9.05       9.05         145         145
Final:                   500   6233.000  5857.738  6813.422       10.67       9.17         173         147
)";
    const auto m = fabemu::CommandMetrics(bw);
    CHECK(m["iterations"] == 500);
    CHECK(m["overhead_overall_us"] == doctest::Approx(6813.422));
    CHECK(m["bw_overall_mb_sec"] == doctest::Approx(9.17));
    CHECK(m["msg_rate_overall"] == 147);
    std::string lat = bw;
    lat.replace(lat.find("overhead (usec)"), 15, "latency (usec) ");
    CHECK(fabemu::UcxPerftestMetrics(lat)["latency_average_us"] == doctest::Approx(5857.738));
    // CI's run through a bridge: the last interval had no iteration, so its averages are nan.
    std::string nan = bw;
    nan.replace(
        nan.find("Final:"), std::string::npos,
        "Final:                   300   6243.000      -nan  6681.760        -nan       9.35 "
        "       -nan         150\n");
    const auto n = fabemu::UcxPerftestMetrics(nan);
    CHECK(n["bw_overall_mb_sec"] == doctest::Approx(9.35));
    CHECK(n["overhead_overall_us"] == doctest::Approx(6681.760));
    CHECK(n["msg_rate_overall"] == 150);
    CHECK_FALSE(n.contains("bw_average_mb_sec"));
    CHECK_FALSE(n.contains("overhead_average_us"));
    CHECK(fabemu::UcxPerftestMetrics("Final: 1 2 3\n").empty());           // cut short
    CHECK(fabemu::UcxPerftestMetrics("Final: 1 2 3 4 5 6 7 x\n").empty()); // not a number
    CHECK(fabemu::UcxPerftestMetrics("no summary\n").empty());
}
