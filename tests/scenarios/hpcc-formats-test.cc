// HPCC's fct.txt and pfc.txt on a tiny run, read as HPCC documents them (not with its
// scripts): fct.txt "sip dip sport dport bytes start_ns fct_ns ideal_ns", IPs in hex;
// pfc.txt "time_ns node nodetype ifindex 1|0". Golden copies in data/hpcc-incast/.
#include "../run-in-process.h"
#include "../scratch-dir.h"
#include "emulator/fabemu/exit-codes.h"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace
{

const fs::path kData = fs::path(FABEMU_SOURCE_DIR) / "tests" / "scenarios" / "data";

std::vector<std::string>
Lines(const fs::path& file)
{
    std::ifstream in(file);
    std::vector<std::string> lines;
    std::string line;
    while (std::getline(in, line))
    {
        lines.push_back(line);
    }
    return lines;
}

struct FctLine
{
    uint32_t sip{0};
    uint32_t dip{0};
    uint32_t sport{0};
    uint32_t dport{0};
    uint64_t bytes{0};
    uint64_t startNs{0};
    uint64_t fctNs{0};
    uint64_t idealNs{0};
};

/// One fct.txt line: 8 space-separated columns, IPs as 8 hex digits, the rest integers.
bool
ParseFct(const std::string& line, FctLine& f)
{
    static const std::regex re("([0-9a-f]{8}) ([0-9a-f]{8}) ([0-9]+) ([0-9]+) ([0-9]+) ([0-9]+) "
                               "([0-9]+) ([0-9]+)");
    std::smatch m;
    if (!std::regex_match(line, m, re))
    {
        return false;
    }
    f = {static_cast<uint32_t>(std::stoul(m[1], nullptr, 16)),
         static_cast<uint32_t>(std::stoul(m[2], nullptr, 16)),
         static_cast<uint32_t>(std::stoul(m[3])),
         static_cast<uint32_t>(std::stoul(m[4])),
         std::stoull(m[5]),
         std::stoull(m[6]),
         std::stoull(m[7]),
         std::stoull(m[8])};
    return true;
}

} // namespace

TEST_CASE("record.fct_dport: hpcc: fct.txt and pfc.txt as HPCC's analysis reads them")
{
    const ScratchDir dir("hpcc");
    const fs::path out = dir / "run";
    const auto r = RunInProcess(kData / "hpcc-incast.yaml", out);
    REQUIRE(r.code == fabemu::kExitOk);

    // fct.txt: every line parses; incast flows (into h0, 10.0.0.1) dport 200, the other 100.
    const auto fct = Lines(out / "fct.txt");
    REQUIRE(fct.size() == 3);
    int incast = 0;
    for (const auto& line : fct)
    {
        CAPTURE(line);
        FctLine f;
        REQUIRE(ParseFct(line, f));
        CHECK(f.dport == (f.dip == 0x0a000001 ? 200U : 100U));
        incast += f.dport == 200 ? 1 : 0;
        CHECK(f.bytes == 65536);
        CHECK(f.startNs == 10000); // 10us, in ns
        CHECK(f.fctNs >= f.idealNs);
        CHECK(f.idealNs > 0);
    }
    CHECK(incast == 2);

    // pfc.txt: "time_ns node 1 port 1|0", times in order, pause and resume alternating per
    // (node, port) starting with a pause; the same events as pfc.csv, one for one.
    const auto pfc = Lines(out / "pfc.txt");
    REQUIRE(!pfc.empty());
    const std::regex re("([0-9]+) ([0-9]+) 1 ([0-9]+) ([01])");
    std::map<std::pair<std::string, std::string>, std::string> last;
    uint64_t prev = 0;
    for (const auto& line : pfc)
    {
        CAPTURE(line);
        std::smatch m;
        REQUIRE(std::regex_match(line, m, re));
        const uint64_t t = std::stoull(m[1]);
        CHECK(t >= prev);
        prev = t;
        auto& was = last[{m[2], m[3]}];
        CHECK(m[4] == (was == "1" ? "0" : "1"));
        was = m[4];
    }
    CHECK(Lines(out / "pfc.csv").size() == pfc.size() + 1); // its header

    // The layout, byte for byte: a model change that moves these lines updates them
    // (copy the run's fct.txt and pfc.txt into tests/scenarios/data/hpcc-incast/).
    CHECK(Slurp(out / "fct.txt") == Slurp(kData / "hpcc-incast" / "fct.txt"));
    CHECK(Slurp(out / "pfc.txt") == Slurp(kData / "hpcc-incast" / "pfc.txt"));
}

TEST_CASE("record.fct_dport: real (the default) writes the flows' real ports")
{
    const ScratchDir dir("hpcc-real");
    const fs::path out = dir / "run";
    REQUIRE(RunInProcess(kData / "hpcc-incast.yaml", out, {"record.fct_dport=real"}).code ==
            fabemu::kExitOk);
    const auto fct = Lines(out / "fct.txt");
    REQUIRE(fct.size() == 3);
    for (const auto& line : fct)
    {
        CAPTURE(line);
        FctLine f;
        REQUIRE(ParseFct(line, f));
        CHECK(f.dport != 100);
        CHECK(f.dport != 200);
    }
}
