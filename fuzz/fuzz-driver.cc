// A standalone driver for the fuzz targets in the gcc build (CTest: ctest -L fuzz), where
// there is no libFuzzer: it runs every file it is given (the seed corpus, the regressions),
// then deterministic random mutations of them (bit flips, byte inserts and deletes, copies,
// splices, dictionary words) until a time or run bound. An input that crashes, hangs or
// throws out of the target is printed as hex and written to --crash-dir, and the test fails.
//
//   fuzz-<target> [--seconds S] [--runs N] [--seed N] [--max-len N] [--timeout S]
//                 [--dict FILE] [--crash-dir DIR] FILE|DIR...
//
// scripts/fuzz links the same targets with libFuzzer instead (clang, coverage-guided).
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>
#include <string>
#include <unistd.h>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);
extern "C" __attribute__((weak)) int LLVMFuzzerInitialize(int* argc, char*** argv);

namespace
{

namespace fs = std::filesystem;
using Bytes = std::vector<uint8_t>;

struct Options
{
    double seconds{10};
    uint64_t runs{UINT64_MAX};
    uint64_t seed{1};
    size_t maxLen{1 << 16};
    unsigned timeout{20};
    std::string dict;
    std::string crashDir{"."};
    std::vector<std::string> paths;
};

// What the signal handlers report: the input being run, where to write it.
const uint8_t* g_input = nullptr;
size_t g_inputSize = 0;
char g_crashDir[4096] = ".";

/// write(2) all of \p s (async-signal-safe).
void
WriteAll(int fd, const char* s, size_t n)
{
    while (n > 0)
    {
        const ssize_t w = write(fd, s, n);
        if (w <= 0)
        {
            return;
        }
        s += w;
        n -= static_cast<size_t>(w);
    }
}

void
WriteText(int fd, const char* s)
{
    WriteAll(fd, s, std::strlen(s));
}

/// Prints the current input as hex on stderr and writes it to crash-DIR/<kind>-<hash>; only
/// async-signal-safe calls, as it runs in signal handlers too.
void
ReportInput(const char* kind)
{
    static const char kHex[] = "0123456789abcdef";
    uint64_t hash = 1469598103934665603ULL; // FNV-1a
    for (size_t i = 0; i < g_inputSize; ++i)
    {
        hash = (hash ^ g_input[i]) * 1099511628211ULL;
    }
    char name[4200];
    size_t n = 0;
    for (const char* p = g_crashDir; *p && n < 4096; ++p)
    {
        name[n++] = *p;
    }
    name[n++] = '/';
    for (const char* p = kind; *p && n < 4150; ++p)
    {
        name[n++] = *p;
    }
    name[n++] = '-';
    for (int s = 60; s >= 0; s -= 4)
    {
        name[n++] = kHex[(hash >> s) & 0xf];
    }
    name[n] = '\0';

    WriteText(2, "\n==== fuzz: ");
    WriteText(2, kind);
    WriteText(2, " on this input (hex):\n");
    char line[66];
    for (size_t i = 0; i < g_inputSize; i += 32)
    {
        size_t k = 0;
        for (size_t j = i; j < g_inputSize && j < i + 32; ++j)
        {
            line[k++] = kHex[g_input[j] >> 4];
            line[k++] = kHex[g_input[j] & 0xf];
        }
        line[k++] = '\n';
        WriteAll(2, line, k);
    }
    const int fd = open(name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd >= 0)
    {
        WriteAll(fd, reinterpret_cast<const char*>(g_input), g_inputSize);
        close(fd);
        WriteText(2, "==== written to ");
        WriteText(2, name);
        WriteText(2, "\n");
    }
}

void
OnSignal(int sig)
{
    ReportInput(sig == SIGALRM ? "timeout" : "crash");
    signal(sig == SIGALRM ? SIGABRT : sig, SIG_DFL);
    raise(sig == SIGALRM ? SIGABRT : sig);
}

void
InstallHandlers()
{
    static std::vector<char> altStack(1 << 16); // a stack overflow still reports its input
    stack_t ss{};
    ss.ss_sp = altStack.data();
    ss.ss_size = altStack.size();
    sigaltstack(&ss, nullptr);
    struct sigaction sa
    {
    };
    sa.sa_handler = OnSignal;
    sa.sa_flags = SA_ONSTACK | SA_RESETHAND;
    sigemptyset(&sa.sa_mask);
    for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGALRM})
    {
        sigaction(sig, &sa, nullptr);
    }
}

/// Runs one input; an exception the target let out is a finding: reported, exit 1.
void
RunOne(const Bytes& input, unsigned timeout)
{
    // A copy of exactly the input's size, so that reading past it is what it is.
    const std::unique_ptr<uint8_t[]> copy(new uint8_t[input.size() + 1]);
    std::copy(input.begin(), input.end(), copy.get());
    g_input = copy.get();
    g_inputSize = input.size();
    alarm(timeout);
    try
    {
        LLVMFuzzerTestOneInput(copy.get(), input.size());
    }
    catch (const std::exception& e)
    {
        alarm(0);
        std::cerr << "\n==== fuzz: the target let out an exception: " << e.what() << "\n";
        ReportInput("exception");
        std::exit(1);
    }
    catch (...)
    {
        alarm(0);
        std::cerr << "\n==== fuzz: the target let out an exception of unknown type\n";
        ReportInput("exception");
        std::exit(1);
    }
    alarm(0);
}

/// xoshiro256** seeded by splitmix64: the same seed, the same mutations everywhere.
class Random
{
  public:
    explicit Random(uint64_t seed)
    {
        for (auto& s : m_s)
        {
            seed += 0x9e3779b97f4a7c15ULL;
            uint64_t z = seed;
            z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
            z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
            s = z ^ (z >> 31);
        }
    }
    uint64_t Next()
    {
        const uint64_t result = Rotl(m_s[1] * 5, 7) * 9;
        const uint64_t t = m_s[1] << 17;
        m_s[2] ^= m_s[0];
        m_s[3] ^= m_s[1];
        m_s[1] ^= m_s[2];
        m_s[0] ^= m_s[3];
        m_s[2] ^= t;
        m_s[3] = Rotl(m_s[3], 45);
        return result;
    }
    /// Uniform in [0, n); 0 when n is 0.
    size_t Below(size_t n) { return n == 0 ? 0 : static_cast<size_t>(Next() % n); }

  private:
    static uint64_t Rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
    uint64_t m_s[4];
};

/// One random change to \p b (which may be empty); \p pool gives splices, \p dict words.
void
Mutate(Bytes& b, Random& rng, const std::vector<Bytes>& pool, const std::vector<Bytes>& dict)
{
    static const uint8_t kInteresting[] = {0, 1, 2, 0x7f, 0x80, 0xff, 0xfe, 16, 32, 64, 100};
    const auto at = [&](size_t extra) { return rng.Below(b.size() + extra); };
    switch (rng.Below(11))
    {
    case 0: // flip a bit
        if (!b.empty())
        {
            b[at(0)] ^= static_cast<uint8_t>(1u << rng.Below(8));
        }
        break;
    case 1: // a random byte
        if (!b.empty())
        {
            b[at(0)] = static_cast<uint8_t>(rng.Next());
        }
        break;
    case 2: // an interesting byte, or a 16-bit big-endian edge value
        if (!b.empty())
        {
            const size_t i = at(0);
            if (i + 1 < b.size() && rng.Below(2))
            {
                const uint16_t v =
                    rng.Below(2) ? 0xffff : static_cast<uint16_t>(0x8000 >> rng.Below(16));
                b[i] = static_cast<uint8_t>(v >> 8);
                b[i + 1] = static_cast<uint8_t>(v);
            }
            else
            {
                b[i] = kInteresting[rng.Below(sizeof kInteresting)];
            }
        }
        break;
    case 3: // add or subtract a little
        if (!b.empty())
        {
            b[at(0)] += static_cast<uint8_t>(rng.Below(17)) - 8;
        }
        break;
    case 4: // insert random bytes
    {
        const size_t i = at(1);
        const size_t n = 1 + rng.Below(rng.Below(2) ? 4 : 64);
        Bytes ins(n);
        for (auto& x : ins)
        {
            x = static_cast<uint8_t>(rng.Next());
        }
        b.insert(b.begin() + static_cast<std::ptrdiff_t>(i), ins.begin(), ins.end());
        break;
    }
    case 5: // delete a range
        if (!b.empty())
        {
            const size_t i = at(0);
            const size_t n = 1 + rng.Below(std::min<size_t>(b.size() - i, rng.Below(2) ? 4 : 256));
            b.erase(b.begin() + static_cast<std::ptrdiff_t>(i),
                    b.begin() + static_cast<std::ptrdiff_t>(i + n));
        }
        break;
    case 6: // copy a range of itself elsewhere (repeats a header, a line, a list item)
        if (!b.empty())
        {
            const size_t from = at(0);
            const size_t n = 1 + rng.Below(std::min<size_t>(b.size() - from, 128));
            const Bytes chunk(b.begin() + static_cast<std::ptrdiff_t>(from),
                              b.begin() + static_cast<std::ptrdiff_t>(from + n));
            const size_t to = at(1);
            b.insert(b.begin() + static_cast<std::ptrdiff_t>(to), chunk.begin(), chunk.end());
        }
        break;
    case 7: // splice: our head, another input's tail
        if (!pool.empty())
        {
            const Bytes& other = pool[rng.Below(pool.size())];
            const size_t cut = at(1);
            const size_t from = rng.Below(other.size() + 1);
            b.resize(cut);
            b.insert(b.end(), other.begin() + static_cast<std::ptrdiff_t>(from), other.end());
        }
        break;
    case 8: // insert a piece of another input
        if (!pool.empty())
        {
            const Bytes& other = pool[rng.Below(pool.size())];
            const size_t from = rng.Below(other.size() + 1);
            const size_t n = rng.Below(std::min<size_t>(other.size() - from, 64) + 1);
            b.insert(b.begin() + static_cast<std::ptrdiff_t>(at(1)),
                     other.begin() + static_cast<std::ptrdiff_t>(from),
                     other.begin() + static_cast<std::ptrdiff_t>(from + n));
        }
        break;
    case 9: // a dictionary word, inserted or over the bytes there
        if (!dict.empty())
        {
            const Bytes& w = dict[rng.Below(dict.size())];
            const size_t i = at(1);
            if (rng.Below(2) && i + w.size() <= b.size())
            {
                std::copy(w.begin(), w.end(), b.begin() + static_cast<std::ptrdiff_t>(i));
            }
            else
            {
                b.insert(b.begin() + static_cast<std::ptrdiff_t>(i), w.begin(), w.end());
            }
        }
        break;
    default: // truncate
        if (!b.empty())
        {
            b.resize(at(0));
        }
        break;
    }
}

Bytes
ReadFile(const fs::path& p)
{
    std::ifstream in(p, std::ios::binary);
    return Bytes(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

/// A libFuzzer dictionary: one "word" per line (name="word" too), \xNN \" \\ escapes.
std::vector<Bytes>
ReadDict(const std::string& path)
{
    std::vector<Bytes> words;
    std::ifstream in(path);
    if (!in)
    {
        throw std::runtime_error("cannot read dictionary " + path);
    }
    std::string line;
    while (std::getline(in, line))
    {
        const size_t open = line.find('"');
        const size_t close = line.rfind('"');
        if (line.empty() || line[0] == '#' || open == std::string::npos || close <= open)
        {
            continue;
        }
        Bytes w;
        for (size_t i = open + 1; i < close; ++i)
        {
            if (line[i] == '\\' && i + 1 < close)
            {
                if (line[i + 1] == 'x' && i + 3 < close)
                {
                    w.push_back(
                        static_cast<uint8_t>(std::stoi(line.substr(i + 2, 2), nullptr, 16)));
                    i += 3;
                    continue;
                }
                w.push_back(static_cast<uint8_t>(line[++i]));
                continue;
            }
            w.push_back(static_cast<uint8_t>(line[i]));
        }
        words.push_back(std::move(w));
    }
    return words;
}

Options
ParseArgs(int argc, char** argv)
{
    Options o;
    for (int i = 1; i < argc; ++i)
    {
        const std::string a = argv[i];
        const auto value = [&]() -> std::string {
            if (i + 1 >= argc)
            {
                throw std::invalid_argument(a + " needs a value");
            }
            return argv[++i];
        };
        if (a == "--seconds")
        {
            o.seconds = std::stod(value());
        }
        else if (a == "--runs")
        {
            o.runs = std::stoull(value());
        }
        else if (a == "--seed")
        {
            o.seed = std::stoull(value());
        }
        else if (a == "--max-len")
        {
            o.maxLen = std::stoul(value());
        }
        else if (a == "--timeout")
        {
            o.timeout = static_cast<unsigned>(std::stoul(value()));
        }
        else if (a == "--dict")
        {
            o.dict = value();
        }
        else if (a == "--crash-dir")
        {
            o.crashDir = value();
        }
        else if (!a.empty() && a[0] == '-')
        {
            throw std::invalid_argument("unknown option " + a);
        }
        else
        {
            o.paths.push_back(a);
        }
    }
    return o;
}

/// Every file under \p paths (a folder's files in name order; a missing folder is empty).
std::vector<fs::path>
InputFiles(const std::vector<std::string>& paths)
{
    std::vector<fs::path> files;
    for (const auto& p : paths)
    {
        if (fs::is_directory(p))
        {
            std::vector<fs::path> here;
            for (const auto& e : fs::recursive_directory_iterator(p))
            {
                if (e.is_regular_file())
                {
                    here.push_back(e.path());
                }
            }
            std::sort(here.begin(), here.end());
            files.insert(files.end(), here.begin(), here.end());
        }
        else if (fs::exists(p))
        {
            files.emplace_back(p);
        }
    }
    return files;
}

} // namespace

int
main(int argc, char** argv)
{
    const std::string self = fs::path(argv[0]).filename().string();
    Options o;
    std::vector<Bytes> dict;
    try
    {
        o = ParseArgs(argc, argv);
        if (!o.dict.empty())
        {
            dict = ReadDict(o.dict);
        }
        fs::create_directories(o.crashDir);
    }
    catch (const std::exception& e)
    {
        std::cerr << self << ": " << e.what() << "\n";
        return 2;
    }
    std::snprintf(g_crashDir, sizeof g_crashDir, "%s", o.crashDir.c_str());
    if (LLVMFuzzerInitialize)
    {
        LLVMFuzzerInitialize(&argc, &argv);
    }
    InstallHandlers();

    const auto t0 = std::chrono::steady_clock::now();
    std::vector<Bytes> pool;
    for (const auto& f : InputFiles(o.paths))
    {
        pool.push_back(ReadFile(f));
        RunOne(pool.back(), o.timeout);
    }
    const size_t seeds = pool.size();
    if (pool.empty())
    {
        pool.emplace_back(); // mutate from nothing
    }

    Random rng(o.seed);
    uint64_t runs = 0;
    const auto deadline = t0 + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                   std::chrono::duration<double>(o.seconds));
    while (runs < o.runs && std::chrono::steady_clock::now() < deadline)
    {
        Bytes b = pool[rng.Below(pool.size())];
        for (size_t k = 1 + rng.Below(rng.Below(4) ? 4 : 16); k > 0; --k)
        {
            Mutate(b, rng, pool, dict);
        }
        if (b.size() > o.maxLen)
        {
            b.resize(o.maxLen);
        }
        RunOne(b, o.timeout);
        ++runs;
    }
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::cout << self << ": " << seeds << " corpus and regression inputs, " << runs
              << " mutations (seed " << o.seed << ") in " << s << " s ("
              << static_cast<uint64_t>(static_cast<double>(seeds + runs) / std::max(s, 1e-9))
              << " inputs/s): no crash\n";
    return 0;
}
