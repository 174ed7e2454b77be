// fabemu-allreduce: a real collective over Gloo, as nccl-tests measures NCCL's.
//
// Each rank is one process (in FabricEmu, one endpoint VM). They meet through
// rank 0's TCP store (tcp-store.h), connect Gloo pairs over its ibverbs transport
// (rxe0 or siw0, the IPv4 GID) or its TCP transport, then run the collective at
// each size: warm-up iterations, then timed ones. Every iteration starts from
// known data and every element of the result is checked. The output is
// nccl-tests' table (size, count, time, algBw, busBw, #wrong); a wrong element
// anywhere makes the exit status 1.
//
// Rank, size and rendezvous come from the flags or, as torchrun sets them, from
// RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT (a scenario's launch workload
// sets those).
#include "containers/collectives/tcp-store.h"

#include <CLI/CLI.hpp>
#include <gloo/allgather_ring.h>
#include <gloo/allreduce_bcube.h>
#include <gloo/allreduce_halving_doubling.h>
#include <gloo/allreduce_ring.h>
#include <gloo/allreduce_ring_chunked.h>
#include <gloo/broadcast_one_to_all.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/prefix_store.h>
#include <gloo/transport/ibverbs/device.h>
#include <gloo/transport/tcp/device.h>

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <regex>
#include <string>
#include <thread>
#include <vector>

namespace
{

constexpr int kMaxRanks = 740; ///< the check's sums stay exact in a float (Base)

struct Options
{
    int rank{-1};
    int size{-1};
    std::string master;
    int port{-1};
    std::string op{"allreduce"};
    std::string algorithm{"ring"};
    std::vector<std::string> bytes{"1MB"};
    int iters{5};
    int warmup{1};
    std::string transport{"ibverbs"};
    std::string device;
    int ibPort{1};
    int gidIndex{1};
    std::string tcpHost;
    int timeoutS{120};
    int injectWrong{-1}; ///< a test's hook: this rank spoils one element of each result
};

/// "8MB" -> 8388608: K, M and G count in 1024s, as nccl-tests' -b and -e do.
uint64_t
ParseBytes(const std::string& text)
{
    static const std::regex re("^([0-9]+)\\s*([KkMmGg]?)(i?[Bb])?$");
    std::smatch m;
    if (!std::regex_match(text, m, re))
    {
        throw std::invalid_argument("'" + text + "' is not a size (for example 4096, 64KB, 8MB)");
    }
    std::string digits = m[1];
    digits.erase(0, std::min(digits.find_first_not_of('0'), digits.size() - 1)); // 0004096
    const char unit = m[2].str().empty() ? ' ' : static_cast<char>(std::tolower(m[2].str()[0]));
    const int shift = unit == 'k' ? 10 : unit == 'm' ? 20 : unit == 'g' ? 30 : 0;
    // At most 2 GB: ten digits before the unit is already too many (and cannot wrap).
    const uint64_t n = digits.size() > 10 ? ~0ull : std::stoull(digits) << shift;
    if (n == 0 || n % 4 != 0 || n > (1ull << 31))
    {
        throw std::invalid_argument("'" + text + "': sizes are whole floats (a multiple of 4 " +
                                    "bytes) from 4 bytes to 2 GB");
    }
    return n;
}

int
EnvInt(const char* name, int fallback)
{
    const char* v = std::getenv(name);
    return v != nullptr && *v != '\0' ? std::atoi(v) : fallback;
}

/// The element every rank starts with at \p i, times (rank + 1): small integers, so
/// every sum is exact in a float while 61 n(n+1)/2 < 2^24, n up to kMaxRanks.
float
Base(size_t i)
{
    return static_cast<float>(i % 61 + 1);
}

/// One collective at one size: its buffers, its Gloo algorithm, and its check.
class Collective
{
  public:
    Collective(const std::shared_ptr<gloo::Context>& ctx, const Options& o, uint64_t bytes)
        : m_ctx(ctx),
          m_op(o.op),
          m_count(bytes / sizeof(float))
    {
        const int n = ctx->size;
        if (m_op == "allgather")
        {
            m_in.resize(m_count / n); // Run checked that it splits
            m_data.resize(m_count);
            m_algorithm = std::make_unique<gloo::AllgatherRing<float>>(
                ctx, std::vector<const float*>{m_in.data()}, m_data.data(),
                static_cast<int>(m_in.size()));
            return;
        }
        m_data.resize(m_count);
        std::vector<float*> ptrs{m_data.data()};
        const int count = static_cast<int>(m_count);
        if (m_op == "broadcast")
        {
            m_algorithm = std::make_unique<gloo::BroadcastOneToAll<float>>(ctx, ptrs, m_count);
        }
        else if (o.algorithm == "ring")
        {
            m_algorithm = std::make_unique<gloo::AllreduceRing<float>>(ctx, ptrs, count);
        }
        else if (o.algorithm == "ring-chunked")
        {
            m_algorithm = std::make_unique<gloo::AllreduceRingChunked<float>>(ctx, ptrs, count);
        }
        else if (o.algorithm == "halving-doubling")
        {
            m_algorithm = std::make_unique<gloo::AllreduceHalvingDoubling<float>>(ctx, ptrs, count);
        }
        else
        {
            m_algorithm = std::make_unique<gloo::AllreduceBcube<float>>(ctx, ptrs, count);
        }
    }

    /// Known data in: rank r holds (r + 1) * Base(i); broadcast's root holds Base(i).
    void Fill()
    {
        const int r = m_ctx->rank;
        if (m_op == "allgather")
        {
            for (size_t i = 0; i < m_in.size(); ++i)
            {
                m_in[i] = static_cast<float>(r + 1) * Base(i);
            }
            std::fill(m_data.begin(), m_data.end(), -1.0f);
            return;
        }
        for (size_t i = 0; i < m_data.size(); ++i)
        {
            m_data[i] = m_op == "broadcast" ? (r == 0 ? Base(i) : 0.0f)
                                            : static_cast<float>(r + 1) * Base(i);
        }
    }

    void Run() { m_algorithm->run(); }

    /// One wrong element, for the test that shows the check catches one.
    void Spoil() { m_data[m_data.size() / 2] += 1.0f; }

    /// Elements of the result that differ from what the collective must give.
    uint64_t Wrong() const
    {
        const int n = m_ctx->size;
        uint64_t wrong = 0;
        if (m_op == "allgather")
        {
            const size_t part = m_in.size();
            for (size_t i = 0; i < m_data.size(); ++i)
            {
                const float want = static_cast<float>(i / part + 1) * Base(i % part);
                wrong += m_data[i] != want;
            }
            return wrong;
        }
        const float sum = static_cast<float>(n) * static_cast<float>(n + 1) / 2;
        for (size_t i = 0; i < m_data.size(); ++i)
        {
            const float want = m_op == "broadcast" ? Base(i) : sum * Base(i);
            wrong += m_data[i] != want;
        }
        return wrong;
    }

    /// nccl-tests' bus bandwidth factor: what each rank's link carries per byte.
    double BusFactor() const
    {
        const double n = m_ctx->size;
        if (m_op == "allreduce")
        {
            return 2 * (n - 1) / n;
        }
        return m_op == "allgather" ? (n - 1) / n : 1.0;
    }

    size_t Count() const { return m_count; }

  private:
    std::shared_ptr<gloo::Context> m_ctx;
    std::string m_op;
    size_t m_count;
    std::vector<float> m_in;
    std::vector<float> m_data;
    std::unique_ptr<gloo::Algorithm> m_algorithm;
};

std::shared_ptr<gloo::transport::Device>
MakeDevice(const Options& o, const std::string& localAddress)
{
    if (o.transport == "tcp")
    {
        gloo::transport::tcp::attr attr;
        attr.hostname = o.tcpHost.empty() ? localAddress : o.tcpHost;
        return gloo::transport::tcp::CreateDevice(attr);
    }
    gloo::transport::ibverbs::attr attr;
    attr.name = o.device;
    if (attr.name.empty())
    {
        const auto names = gloo::transport::ibverbs::getDeviceNames();
        if (names.empty())
        {
            throw std::runtime_error("no RDMA device: is rxe0 or siw0 up? (rdma link)");
        }
        attr.name = names.front();
    }
    attr.port = o.ibPort;
    attr.index = o.gidIndex;
    return gloo::transport::ibverbs::CreateDevice(attr);
}

int
Run(const Options& o)
{
    std::vector<uint64_t> sizes;
    for (const auto& b : o.bytes)
    {
        sizes.push_back(ParseBytes(b));
        // Refused here, before any rank waits for this one.
        if (o.op == "allgather" && sizes.back() / sizeof(float) % o.size != 0)
        {
            throw std::invalid_argument("allgather: " + b + " does not split into " +
                                        std::to_string(o.size) + " equal parts of whole floats");
        }
    }
    const auto timeout = std::chrono::seconds(o.timeoutS);
    std::unique_ptr<fabemu::TcpStoreServer> server;
    if (o.rank == 0)
    {
        server = std::make_unique<fabemu::TcpStoreServer>(static_cast<uint16_t>(o.port));
    }
    fabemu::TcpStore tcpStore(o.master, static_cast<uint16_t>(o.port), timeout);
    gloo::rendezvous::PrefixStore store("fabemu-allreduce", tcpStore);
    auto device = MakeDevice(o, tcpStore.LocalAddress());
    auto ctx = std::make_shared<gloo::rendezvous::Context>(o.rank, o.size);
    ctx->setTimeout(timeout);
    ctx->connectFullMesh(store, device);

    const std::string algo = o.op == "allreduce"   ? o.algorithm
                             : o.op == "allgather" ? "ring"
                                                   : "1-to-all";
    std::printf("# fabemu-allreduce: %s, algorithm %s, %d ranks, rank %d, transport %s (%s)\n",
                o.op.c_str(), algo.c_str(), o.size, o.rank, o.transport.c_str(),
                device->str().c_str());
    std::printf("# %d warm-up and %d timed iterations per size; every element checked\n#\n",
                o.warmup, o.iters);
    std::printf("# %10s %12s %8s %6s %18s %12s %10s %10s %8s\n", "size", "count", "type", "redop",
                "algo", "time", "algbw", "busbw", "#wrong");
    std::printf("# %10s %12s %8s %6s %18s %12s %10s %10s %8s\n", "(B)", "(elements)", "", "", "",
                "(us)", "(GB/s)", "(GB/s)", "");
    std::fflush(stdout);
    uint64_t wrongTotal = 0;
    double busSum = 0;
    // Gloo's ibverbs pairs hold at most 8 buffers, by slot modulo 8, so one
    // collective's buffers live at a time and the ranks line up through the store,
    // not through a Gloo barrier whose buffers could take a colliding slot.
    int barriers = 0;
    auto lineUp = [&store, &o, &barriers, timeout] {
        const std::string tag = "barrier/" + std::to_string(barriers++) + "/";
        store.set(tag + std::to_string(o.rank), {'1'});
        std::vector<std::string> keys;
        for (int r = 0; r < o.size; ++r)
        {
            keys.push_back(tag + std::to_string(r));
        }
        store.wait(keys, timeout);
    };
    for (const uint64_t bytes : sizes)
    {
        Collective c(ctx, o, bytes);
        uint64_t wrong = 0;
        double seconds = 0;
        for (int it = 0; it < o.warmup + o.iters; ++it)
        {
            c.Fill();
            lineUp(); // every rank's data in place before the clock starts
            const auto t0 = std::chrono::steady_clock::now();
            c.Run();
            const auto t1 = std::chrono::steady_clock::now();
            if (o.rank == o.injectWrong)
            {
                c.Spoil();
            }
            if (it >= o.warmup)
            {
                seconds += std::chrono::duration<double>(t1 - t0).count();
            }
            wrong += c.Wrong();
        }
        const double t = seconds / std::max(1, o.iters);
        const double algbw = t > 0 ? static_cast<double>(bytes) / t / 1e9 : 0;
        const double busbw = algbw * c.BusFactor();
        busSum += busbw;
        wrongTotal += wrong;
        // Six decimals: a real run over a slow emulated link is well under 1 GB/s.
        std::printf("  %10" PRIu64 " %12zu %8s %6s %18s %12.1f %10.6f %10.6f %8" PRIu64 "\n", bytes,
                    c.Count(), "float", o.op == "allreduce" ? "sum" : "none", algo.c_str(), t * 1e6,
                    algbw, busbw, wrong);
        std::fflush(stdout);
        // Every rank is through this size; Gloo aborts if a buffer is freed while a
        // send's completion is still to come (the last ring round's notification
        // may be), so its ACK gets time to arrive before the buffers go: as long as
        // an iteration took (a congested fabric's queues delay it), 0.2 to 5 s.
        lineUp();
        std::this_thread::sleep_for(std::chrono::duration<double>(std::clamp(t, 0.2, 5.0)));
    }
    std::printf("# Out of bounds values : %" PRIu64 " %s\n", wrongTotal,
                wrongTotal == 0 ? "OK" : "FAILED");
    std::printf("# Avg bus bandwidth    : %.6f\n#\n", busSum / static_cast<double>(sizes.size()));
    std::fflush(stdout);

    // Rank 0 serves the store: it stays until every rank is through with it.
    store.set("done/" + std::to_string(o.rank), {'1'});
    if (o.rank == 0)
    {
        std::vector<std::string> keys;
        for (int r = 0; r < o.size; ++r)
        {
            keys.push_back("done/" + std::to_string(r));
        }
        store.wait(keys, timeout);
    }
    return wrongTotal == 0 ? 0 : 1;
}

} // namespace

int
main(int argc, char** argv)
{
    std::signal(SIGPIPE, SIG_IGN);
    Options o;
    CLI::App app{"fabemu-allreduce: a Gloo collective across ranks, timed and checked, in "
                 "nccl-tests' table"};
    app.add_option("--rank", o.rank, "This process's rank (default: $RANK)");
    app.add_option("--size", o.size, "The number of ranks (default: $WORLD_SIZE)");
    app.add_option("--master", o.master,
                   "Rank 0's address, where its rendezvous store listens (default: $MASTER_ADDR)");
    app.add_option("--master-port", o.port, "The store's TCP port (default: $MASTER_PORT, 29500)")
        ->check(CLI::Range(1, 65535));
    app.add_option("--op", o.op, "The collective")
        ->check(CLI::IsMember({"allreduce", "allgather", "broadcast"}))
        ->capture_default_str();
    app.add_option("--algorithm,-a", o.algorithm, "Gloo's all-reduce algorithm")
        ->check(CLI::IsMember({"ring", "ring-chunked", "halving-doubling", "bcube"}))
        ->capture_default_str();
    app.add_option("--bytes", o.bytes, "Sizes, comma-separated; K, M, G count in 1024s (1MB, 8MB)")
        ->delimiter(',')
        ->capture_default_str();
    app.add_option("--iters,-n", o.iters, "Timed iterations per size")
        ->check(CLI::Range(1, 100000))
        ->capture_default_str();
    app.add_option("--warmup,-w", o.warmup, "Untimed iterations first")
        ->check(CLI::Range(0, 1000))
        ->capture_default_str();
    app.add_option("--transport", o.transport, "Gloo's transport")
        ->check(CLI::IsMember({"ibverbs", "tcp"}))
        ->capture_default_str();
    app.add_option("--device,-d", o.device, "The RDMA device (default: the first, rxe0 or siw0)");
    app.add_option("--ib-port", o.ibPort, "The RDMA device's port")->capture_default_str();
    app.add_option("--gid-index,-x", o.gidIndex,
                   "The GID index: 1 is rxe's IPv4 GID (0, link-local, fails: gloo#147)")
        ->capture_default_str();
    app.add_option("--tcp-host", o.tcpHost,
                   "tcp transport: the address to listen on (default: the one that reaches the "
                   "store)");
    app.add_option("--timeout", o.timeoutS,
                   "Seconds a rendezvous or a collective step may wait for a peer")
        ->check(CLI::Range(1, 3600))
        ->capture_default_str();
    app.add_option("--inject-wrong", o.injectWrong,
                   "Test hook: this rank adds 1 to one element of each result")
        ->group(""); // hidden
    try
    {
        app.parse(argc, argv);
    }
    catch (const CLI::ParseError& e)
    {
        const int rc = app.exit(e); // prints help, or the error
        return rc == 0 ? 0 : 2;     // bad input: 2, as every refusal here
    }

    if (o.rank < 0)
    {
        o.rank = EnvInt("RANK", -1);
    }
    if (o.size < 0)
    {
        o.size = EnvInt("WORLD_SIZE", -1);
    }
    if (o.master.empty() && std::getenv("MASTER_ADDR") != nullptr)
    {
        o.master = std::getenv("MASTER_ADDR");
    }
    if (o.port < 0)
    {
        o.port = EnvInt("MASTER_PORT", 29500);
    }
    const char* missing = o.rank < 0         ? "--rank (or RANK)"
                          : o.size < 1       ? "--size (or WORLD_SIZE)"
                          : o.master.empty() ? "--master (or MASTER_ADDR)"
                                             : nullptr;
    if (missing != nullptr)
    {
        std::cerr << "fabemu-allreduce: " << missing << " is not set\n";
        return 2;
    }
    if (o.size > kMaxRanks)
    {
        std::cerr << "fabemu-allreduce: " << o.size << " ranks: at most " << kMaxRanks
                  << " (the element check's sums must stay exact in a float)\n";
        return 2;
    }
    if (o.rank >= o.size)
    {
        std::cerr << "fabemu-allreduce: rank " << o.rank << " is not below size " << o.size << "\n";
        return 2;
    }
    if (o.port < 1 || o.port > 65535)
    {
        std::cerr << "fabemu-allreduce: MASTER_PORT " << o.port << " is not a TCP port\n";
        return 2;
    }
    try
    {
        return Run(o);
    }
    catch (const std::invalid_argument& e)
    {
        std::cerr << "fabemu-allreduce: " << e.what() << "\n";
        return 2;
    }
    catch (const std::exception& e)
    {
        std::cerr << "fabemu-allreduce: rank " << o.rank << ": " << e.what() << "\n";
        return 1;
    }
}
