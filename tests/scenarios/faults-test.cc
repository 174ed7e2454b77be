// Faults as scenario events (faults:): a link degraded mid-flow on every fabric, what the
// results say of it (faults.csv, summary.json), and fault items refused at FILE:LINE:COL.
#include "../run-in-process.h"
#include "../scratch-dir.h"
#include "emulator/fabemu/exit-codes.h"
#include "parse-error.h"
#include "scenarios/src/results.h"
#include "scenarios/src/scenario.h"

#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

using namespace fabemu;
namespace fs = std::filesystem;

namespace
{

/// Runs scenario \p text (without its name) as \p name; its summary.json.
nlohmann::json
RunText(const ScratchDir& dir, const std::string& name, const std::string& text)
{
    const fs::path file = dir / (name + ".yaml");
    std::ofstream(file) << "name: " << name << "\n" << text;
    const auto r = RunInProcess(file, dir / name);
    REQUIRE_MESSAGE(r.code == kExitOk, r.err);
    return Summary(dir / name);
}

/// Flow \p i's FCT in summary \p s.
double
Fct(const nlohmann::json& s, size_t i)
{
    return s["flows"][i]["fct_s"].get<double>();
}

/// Two hosts on one 100 Gb/s link (pair) on \p fabric, one 10 MiB bulk flow, and \p faults.
nlohmann::json
RunPair(const ScratchDir& dir, const std::string& name, const std::string& fabric,
        const std::string& faults)
{
    return RunText(dir, name,
                   "duration: 50ms\nfabric: {type: " + fabric +
                       "}\ntopology: {builder: pair, link: {rate: 100Gbps, delay: 1us}}\n"
                       "workloads:\n  - {type: bulk, src: h0, dst: h1, bytes: 10MiB}\n" +
                       faults);
}

} // namespace

TEST_CASE("a link degraded mid-flow: the bytes before at the old rate, the rest at the new, on "
          "every fabric")
{
    for (const std::string fabric : {"roce", "infiniband", "iwarp"})
    {
        CAPTURE(fabric);
        const ScratchDir dir("faults-" + fabric);
        // Undisturbed, the flow's goodput gives the fabric's efficiency at either rate.
        const auto base = RunPair(dir, "base", fabric, "");
        REQUIRE(base["flows"][0]["state"] == "completed");
        const double bytes = 10.0 * (1 << 20);
        const double good = base["flows"][0]["throughput_gbps"].get<double>() * 1e9 / 8;
        const double at = 400e-6;
        // At 400 us the link drops to 10 Gb/s: what is left goes at a tenth of the goodput.
        // expect reads the faults too: the run exits 0 only if it was applied.
        const auto hit = RunPair(dir, "hit", fabric,
                                 "faults:\n  - {at: 400us, link: h1, rate: 10Gbps}\n"
                                 "expect: {faults.0.applied: 1}\n");
        const auto& f = hit["flows"][0];
        REQUIRE(f["state"] == "completed");
        const double expected = at + (bytes - good * at) / (good / 10);
        MESSAGE(fabric << ": FCT " << f["fct_s"].get<double>() << " s, expected " << expected);
        CHECK(f["fct_s"].get<double>() == doctest::Approx(expected).epsilon(0.02));
        REQUIRE(hit["faults"].size() == 1);
        CHECK(hit["faults"][0]["link"] == "h0-h1"); // the host's own link, as the topology names it
        CHECK(hit["faults"][0]["applied"] == true);
        const auto rows = ReadCsv(dir / "hit" / "faults.csv");
        REQUIRE(rows.size() == 1);
        CHECK(std::stod(rows[0][0]) == doctest::Approx(at));
        CHECK(rows[0][1] == "h0-h1");
        CHECK(rows[0][2] == "rate");
        CHECK(rows[0][3] == "10Gbps");
        CHECK(!fs::exists(dir / "base" / "faults.csv")); // no faults, no file
        // report.md shows it as people read it.
        const std::string report = Slurp(dir / "hit" / "report.md");
        CHECK(report.find("## Faults") != std::string::npos);
        CHECK(report.find("| 0.000400 | h0-h1 | rate | 10Gbps | yes |") != std::string::npos);
        CHECK(Slurp(dir / "base" / "report.md").find("## Faults") == std::string::npos);
    }
}

TEST_CASE("bit errors at 1e-6: drops as many as the bits crossing predict, the transport "
          "recovers every byte, on every fabric")
{
    struct Fabric
    {
        const char* type;
        double frameBits; ///< a full data packet on the wire, every header in
        double payload;   ///< its payload bytes
    };
    // Path MTU 1024 (the default). RoCEv2: Ethernet 14 + IP 20 + UDP 8 + BTH 12 + ICRC 4 +
    // FCS 4 (RETH only on a message's first). InfiniBand: LRH 8, BTH 12, ICRC 4, VCRC 2.
    // iWARP: 1448-byte TCP segments in 1500-byte IP packets, a 14-byte Ethernet header;
    // MPA, DDP and RDMAP headers take some of the segment.
    const std::vector<Fabric> fabrics{{"roce", 8.0 * (1024 + 62), 1024},
                                      {"infiniband", 8.0 * (1024 + 26), 1024},
                                      {"iwarp", 8.0 * 1514, 1448 - 14}};
    for (const auto& fab : fabrics)
    {
        const std::string type = fab.type;
        CAPTURE(type);
        const ScratchDir dir("faults-ber-" + type);
        const auto base = RunPair(dir, "base", fab.type, "");
        const auto hit = RunPair(dir, "hit", fab.type,
                                 "faults:\n  - {link: h0-h1, ber: 1e-6}\n"
                                 "expect: {totals.bit_error_drops: \">0\"}\n");
        const auto& f = hit["flows"][0];
        REQUIRE(f["state"] == "completed");
        CHECK(f["delivered_bytes"] == 10u << 20); // every byte, once
        CHECK(f["fct_s"].get<double>() > base["flows"][0]["fct_s"].get<double>());
        const auto& totals = hit["totals"];
        const double p = -std::expm1(fab.frameBits * std::log1p(-1e-6));
        const double frames = 10.0 * (1 << 20) / fab.payload;
        const double drops = totals["bit_error_drops"].get<double>();
        MESSAGE(type << ": " << drops << " drops, " << frames * p << " expected");
        // The data frames alone (retransmissions and ACKs add a few): within a factor of 2.
        CHECK(drops > 0.5 * frames * p);
        CHECK(drops < 2 * frames * p);
        if (totals.contains("retransmitted_packets"))
        {
            // Go-back-N: each lost data packet is sent again with those sent after it
            // before the NAK came back, about one round trip (2 us and two packet times at
            // 100 Gb/s) of packets.
            const double rtt = 2e-6 + 2 * fab.frameBits / 100e9;
            const double perLoss = 1 + rtt * 100e9 / fab.frameBits;
            const double resent = totals["retransmitted_packets"].get<double>();
            MESSAGE(type << ": " << resent << " resent, " << frames * p * perLoss << " expected");
            CHECK(resent > 0.5 * frames * p * perLoss);
            // A lost retransmission is not NAKed again (IBA 9.7.5.2.2): the sender's timer
            // fires, after it has sent at most the rest of the message.
            const double timeouts = totals["retransmission_timeouts"].get<double>();
            MESSAGE(type << ": " << timeouts << " timeouts");
            CHECK(resent < 2 * frames * p * perLoss + timeouts * frames);
        }
        CHECK(!base["totals"].contains("bit_error_drops")); // counted where a fault asks
        // The same file and seed hit the same bits, whatever the process ran before.
        const auto again =
            RunPair(dir, "again", fab.type, "faults:\n  - {link: h0-h1, ber: 1e-6}\n");
        CHECK(again["totals"] == totals);
        const auto rows = ReadCsv(dir / "hit" / "faults.csv");
        REQUIRE(rows.size() == 1);
        CHECK(rows[0][2] == "ber");
        CHECK(rows[0][3] == "1e-06");
    }
}

namespace
{

/// A 30 MiB flow from h0 to h1 across a leaf-spine of \p spines spines on \p fabric, where
/// routing reacts to a link's change 100 us after it (ECMP's detection; the subnet
/// manager's sweep), and \p faults.
nlohmann::json
RunAcross(const ScratchDir& dir, const std::string& name, const std::string& fabric,
          uint32_t spines, const std::string& faults)
{
    return RunText(dir, name,
                   "duration: 40ms\nfabric:\n  type: " + fabric +
                       "\n  set: {ns3::RoceSwitch::LinkDetectionTime: 100us, "
                       "ns3::IbSubnetManager::SweepInterval: 100us}\n"
                       "topology: {builder: leaf-spine, leaves: 2, spines: " +
                       std::to_string(spines) +
                       ", hosts_per_leaf: 1, link: {rate: 100Gbps, delay: 1us}}\n"
                       "workloads:\n  - {type: bulk, src: h0, dst: h1, bytes: 30MiB}\n" +
                       faults);
}

} // namespace

TEST_CASE("a link down for 500 us: ECMP and the subnet manager route around it once they have "
          "seen it; with no other path the flow waits out the outage")
{
    const double outage = 500e-6;
    const double detection = 100e-6;
    // h0's leaf (s0) to spine s2: the path the flow's hash takes on two spines, too.
    const std::string fault = "faults:\n  - {at: 300us, link: s0-s2, down: 500us}\n"
                              "expect: {faults.0.applied: 1, totals.link_down_drops: \">0\"}\n";
    for (const std::string fabric : {"roce", "infiniband"})
    {
        for (const uint32_t spines : {1u, 2u})
        {
            CAPTURE(fabric);
            CAPTURE(spines);
            const ScratchDir dir("faults-down-" + fabric);
            const double base = Fct(RunAcross(dir, "base", fabric, spines, ""), 0);
            const auto hit = RunAcross(dir, "hit", fabric, spines, fault);
            REQUIRE(hit["flows"][0]["state"] == "completed");
            const double grew = Fct(hit, 0) - base;
            MESSAGE(fabric << ", " << spines << " spine(s): the FCT grew by " << grew * 1e6
                           << " us");
            // What the flow lost: what it sent until routing took the link out (two spines:
            // the rest goes by the other), or until the link was back and routing had seen
            // it (one spine); then a NAK for the first lost packet, a round trip or so.
            const double lost = spines == 2 ? detection : outage + detection;
            CHECK(grew >= lost);
            CHECK(grew <= lost + 30e-6);
            // Routing changed twice: the link withdrawn, and given back.
            CHECK(hit["totals"][fabric == "roce" ? "reroutes" : "sm_sweeps"] == 2);
            CHECK(hit["totals"]["congestion_drops"] == 0);
            // One spine: while no route reached h1 the leaf dropped for it.
            CHECK((hit["totals"]["drops"].get<uint64_t>() > 0) == (spines == 1));
            const auto rows = ReadCsv(dir / "hit" / "faults.csv");
            REQUIRE(rows.size() == 2);
            CHECK(rows[0] == std::vector<std::string>{"0.000300000", "s0-s2", "down", "500us"});
            CHECK(rows[1] == std::vector<std::string>{"0.000800000", "s0-s2", "up", "500us"});
            CHECK(hit["faults"][0]["up_s"].get<double>() == doctest::Approx(800e-6));
            // report.md says in words what the outage cost and how routing answered.
            const std::string report = Slurp(dir / "hit" / "report.md");
            const std::string answered =
                fabric == "roce" ? "switches rerouted 2 times" : "the subnet manager swept 2 times";
            CHECK(report.find("packets were lost on links while they were down; " + answered) !=
                  std::string::npos);
        }
    }
    // iWARP keeps its static routes: TCP's retransmission timer carries the connection
    // over the outage, and fires again only after the link is back.
    const ScratchDir dir("faults-down-iwarp");
    const double base = Fct(RunAcross(dir, "base", "iwarp", 2, ""), 0);
    const auto hit = RunAcross(dir, "hit", "iwarp", 2, fault);
    REQUIRE(hit["flows"][0]["state"] == "completed");
    const double grew = Fct(hit, 0) - base;
    MESSAGE("iwarp: the FCT grew by " << grew * 1e6 << " us");
    CHECK(grew >= outage);
    CHECK(hit["totals"]["tcp_retransmissions"].get<uint64_t>() > 0);
    CHECK(hit["totals"]["link_down_drops"].get<uint64_t>() > 0);
}

TEST_CASE("a rail NIC's link down: its copy alone waits out the outage, named h0.nic3; down "
          "for good it fails, the others never notice")
{
    // Two dgx-h100 on rail-only NDR InfiniBand: GPU k of h0 copies to GPU k of h1 over
    // NIC k and rail switch k, which is the only path between them.
    const auto rail = [](const std::string& faults) {
        std::string text = "duration: 60ms\nfabric:\n  type: infiniband\n  mtu: 4096\n"
                           "  set: {ns3::IbPort::BufferBlocks: 2048}\n"
                           "topology: {builder: rail, nodes: 2, spines: 0, node: dgx-h100, "
                           "link: {rate: 400Gbps, delay: 100ns}}\nworkloads:\n";
        for (int g = 0; g < 8; ++g)
        {
            text += "  - {type: copy, src: h0.gpu" + std::to_string(g) + ", dst: h1.gpu" +
                    std::to_string(g) + ", bytes: 16MB}\n";
        }
        return text + faults;
    };
    const ScratchDir dir("faults-rail");
    const auto base = RunText(dir, "base", rail(""));
    const auto hit =
        RunText(dir, "hit", rail("faults:\n  - {at: 100us, link: h0.nic3, down: 300us}\n"));
    REQUIRE(hit["flow_stats"]["completed"] == 8);
    for (size_t g = 0; g < 8; ++g)
    {
        CAPTURE(g);
        if (g != 3)
        {
            CHECK(Fct(hit, g) == Fct(base, g));
        }
    }
    // No other path: everything in flight on rail 3 is lost, and the QP recovers only
    // when its retransmission timer (ns3::RdmaQueuePair::Timeout, 1 ms) fires, after
    // the link is back. The copy then sends the rest, so its FCT grows by the timeout.
    const double grew = Fct(hit, 3) - Fct(base, 3);
    MESSAGE("rail 3 down 300 us: the copy's FCT grew by " << grew * 1e6 << " us");
    CHECK(grew >= 0.95e-3);
    CHECK(grew <= 1.05e-3);
    CHECK(hit["totals"]["retransmission_timeouts"] == 1);
    CHECK(hit["totals"]["link_down_drops"].get<uint64_t>() > 0);
    CHECK(ReadCsv(dir / "hit" / "faults.csv").at(0) ==
          std::vector<std::string>{"0.000100000", "h0.nic3-s3", "down", "300us"});

    // Down for good: the copy fails once its retries run out, and says where and why.
    const fs::path file = dir / "cut.yaml";
    std::ofstream(file) << "name: cut\n"
                        << rail("faults:\n  - {at: 100us, link: h0.nic3, down: 50ms}\n");
    const auto r = RunInProcess(file, dir / "cut");
    CHECK(r.code == kExitFailure);
    const auto cut = Summary(dir / "cut");
    CHECK(cut["flow_stats"]["completed"] == 7);
    CHECK(cut["flows"][3]["state"] == "failed");
    CHECK(cut["flows"][3]["reason"] == "retry count exceeded; no path from h0.gpu3 to h1.gpu3 "
                                       "while h0.nic3-s3 was down (faults.0, 100us for 50ms)");
}

TEST_CASE("outages of one link that overlap keep it down until the later ends; bit errors set "
          "meanwhile come back with it")
{
    const ScratchDir dir("faults-overlap");
    const double base = Fct(RunAcross(dir, "base", "roce", 1, ""), 0);
    // Down 300..800 us and 500..1500 us; bit errors from 600 us, while it is down.
    const auto hit = RunAcross(dir, "hit", "roce", 1,
                               "faults:\n  - {at: 300us, link: s0-s2, down: 500us}\n"
                               "  - {at: 500us, link: s0-s2, down: 1ms}\n"
                               "  - {at: 600us, link: s0-s2, ber: 1e-6}\n");
    REQUIRE(hit["flows"][0]["state"] == "completed");
    const double grew = Fct(hit, 0) - base;
    MESSAGE("two overlapping outages, 300 us to 1.5 ms: the FCT grew by " << grew * 1e6 << " us");
    // Lost from 300 us until routing saw the link back at 1.6 ms (one spine: no other way);
    // the bit errors cost more on top (go-back-N, and timeouts for lost ACKs).
    CHECK(grew >= 1.3e-3);
    CHECK(hit["totals"]["reroutes"] == 2);                       // down once, up once
    CHECK(hit["totals"]["bit_error_drops"].get<uint64_t>() > 0); // after it came back
    const auto rows = ReadCsv(dir / "hit" / "faults.csv");
    REQUIRE(rows.size() == 4);
    CHECK(rows[0][2] == "down");
    CHECK(rows[1][2] == "down");
    CHECK(rows[2][2] == "ber");
    // One up row: when the later outage ended (the earlier one's end kept it down).
    CHECK(rows[3] == std::vector<std::string>{"0.001500000", "s0-s2", "up", "1ms"});
    CHECK(hit["faults"][0]["up_s"].get<double>() == doctest::Approx(1.5e-3));
    CHECK(hit["faults"][1]["up_s"].get<double>() == doctest::Approx(1.5e-3));

    // InfiniBand's up/down routing keeps the fabric's orientation while a link is down:
    // the sweeps route round it on two spines, and give it back.
    const auto updown =
        RunText(dir, "updown",
                "duration: 40ms\nfabric:\n  type: infiniband\n  routing: updown\n"
                "  set: {ns3::IbSubnetManager::SweepInterval: 100us}\n"
                "topology: {builder: leaf-spine, leaves: 2, spines: 2, hosts_per_leaf: 2}\n"
                "workloads:\n  - {type: bulk, src: h0, dst: h2, bytes: 30MiB}\n"
                "  - {type: bulk, src: h3, dst: h1, bytes: 30MiB}\n"
                "faults:\n  - {at: 300us, link: s0-s2, down: 500us}\n");
    CHECK(updown["flow_stats"]["completed"] == 2);
    CHECK(updown["totals"]["sm_sweeps"] == 2);
    // Every host reachable all along; spine s2 has no legal way down to h0 and h1 while
    // s0-s2 is down (down, up, down again), so only what was in it for them when the
    // tables changed is dropped for no route.
    MESSAGE("up/down with s0-s2 down: " << updown["totals"]["drops"] << " no_route drops");
    CHECK(updown["totals"]["drops"].get<uint64_t>() < 100);
}

TEST_CASE("a link down for good: the flow fails, and its reason says no path was left")
{
    const ScratchDir dir("faults-cut");
    const fs::path file = dir / "cut.yaml";
    std::ofstream(file) << "name: cut\nduration: 30ms\nfabric: {type: roce}\n"
                        << "topology: {builder: leaf-spine, leaves: 2, spines: 2, "
                        << "hosts_per_leaf: 1}\n"
                        << "workloads:\n  - {type: bulk, src: h0, dst: h1, bytes: 10MiB}\n"
                        << "faults:\n  - {at: 300us, link: h1, down: 25ms}\n";
    const auto r = RunInProcess(file, dir / "out");
    CHECK(r.code == kExitFailure);
    const auto s = Summary(dir / "out");
    const auto& f = s["flows"][0];
    CHECK(f["state"] == "failed");
    CHECK(f["reason"] == "retry count exceeded; no path from h0 to h1 while h1-s1 was down "
                         "(faults.0, 300us for 25ms)");
    // The QP gave up (its retries ran out) long before the link would have come back.
    CHECK(s["faults"][0].count("up_s") == 0);
    CHECK(s["totals"]["reroutes"] == 1);
    CHECK(s["switch_drops"]["no_route"].get<uint64_t>() > 0);
}

TEST_CASE("fault mistakes: FILE:LINE:COL, exit 2, the culprit named")
{
    const ScratchDir dir("faults-bad");
    struct Case
    {
        const char* what;
        std::string faults;
        std::string says;
    };
    const std::vector<Case> cases{
        {"a link the topology lacks, the closest suggested",
         "  - {at: 1ms, link: s0-h7, rate: 1Gbps}\n",
         "bad.yaml:6:5: faults.0: no link 's0-h7' in this topology; did you mean"},
        {"after the run ends", "  - {at: 1s, link: h1, rate: 1Gbps}\n",
         "bad.yaml:6:10: faults.0.at is after the run ends (1s > duration 10ms)"},
        {"a rate of 0", "  - {link: h1, rate: 0Gbps}\n",
         "bad.yaml:6:22: faults.0.rate must be a rate such as 100Gbps"},
        {"both a rate and bit errors", "  - {link: h1, rate: 1Gbps, ber: 1e-6}\n",
         "bad.yaml:6:5: faults.0 needs one of rate (a degraded link), ber (bit errors) or "
         "down (the link down this long)"},
        {"a link down and degraded at once", "  - {link: h1, rate: 1Gbps, down: 1ms}\n",
         "bad.yaml:6:5: faults.0 needs one of rate"},
        {"a link down for no time", "  - {link: h1, down: 0us}\n",
         "bad.yaml:6:22: faults.0.down is out of range: 0us"},
        {"a host's link down by host", "  - {host: h1, down: 1ms}\n",
         "bad.yaml:6:22: faults.0: a straggler (host, delay) has no down"},
        {"neither", "  - {link: h1}\n", "bad.yaml:6:5: faults.0 needs one of rate"},
        {"bit errors past 1e-3", "  - {link: h1, ber: 0.01}\n", "bad.yaml:6:21: faults.0.ber"},
        {"no link", "  - {at: 1ms, rate: 1Gbps}\n",
         "bad.yaml:6:5: faults.0 needs link (and rate, ber or down), or host (and delay, "
         "pause_storm or crash)"},
        {"a key faults do not have", "  - {at: 1ms, link: h1, rate: 1Gbps, up: 1ms}\n",
         "bad.yaml:6:38: unknown key 'up' in faults.0"},
        {"a straggler without its delay", "  - {host: h2}\n",
         "bad.yaml:6:5: faults.0: a host's fault needs one of delay"},
        {"a straggler and a storm at once", "  - {host: h2, delay: 5us, pause_storm: 1ms}\n",
         "bad.yaml:6:5: faults.0: a host's fault needs one of delay"},
        {"a straggler with a link's rate", "  - {host: h2, delay: 5us, rate: 1Gbps}\n",
         "bad.yaml:6:34: faults.0: a straggler (host, delay) has no rate"},
        {"a delay on a link", "  - {link: h2, rate: 1Gbps, delay: 5us}\n",
         "bad.yaml:6:36: faults.0: delay belongs to a host's fault (host), not a link's"},
        {"a straggler the topology lacks", "  - {host: h9, delay: 5us}\n",
         "bad.yaml:6:12: faults.0.host names host 'h9', but the topology has h0..h2"},
        {"a delay of 0", "  - {host: h1, delay: 0us}\n",
         "bad.yaml:6:23: faults.0.delay is out of range: 0us"},
        {"not a list", "  at: 1ms\n", "bad.yaml:6:3: faults must be a list"},
        {"a crash of a simulated host", "  - {at: 1ms, host: h1, crash: vm}\n",
         "bad.yaml:6:5: faults.0: crash: vm kills a VM endpoint's QEMU, and h1 is simulated "
         "(endpoints: {h1: {kind: vm}} makes it a VM)"},
        {"a crash of something else", "  - {host: h1, crash: switch}\n",
         "bad.yaml:6:23: faults.0.crash must be one of vm, not 'switch'"},
        {"a crash and a delay at once", "  - {host: h1, crash: vm, delay: 5us}\n",
         "bad.yaml:6:5: faults.0: a host's fault needs one of delay"},
        {"a crash on a link", "  - {link: h1, rate: 1Gbps, crash: vm}\n",
         "faults.0: crash belongs to a host's fault (host), not a link's"},
    };
    for (const auto& c : cases)
    {
        CAPTURE(c.what);
        const fs::path file = dir / "bad.yaml";
        std::ofstream(file) << "name: bad\ntopology: {builder: star, hosts: 3}\nworkloads:\n"
                            << "  - {type: bulk, src: h0, dst: h1, bytes: 1MB}\nfaults:\n"
                            << c.faults;
        const auto r = RunInProcess(file, dir / "out");
        CHECK(r.code == kExitBadInput);
        CAPTURE(r.err);
        CHECK(r.err.find(c.says) != std::string::npos);
        CHECK(!fs::exists(dir / "out" / "summary.json")); // refused before anything ran
    }
    // The analytical mode simulates nothing for a fault to break.
    const fs::path file = dir / "analytical.yaml";
    std::ofstream(file) << "name: a\nfidelity: analytical\ntopology: {builder: star, hosts: 4}\n"
                        << "workloads:\n  - {type: collective, bytes: 1MB, ranks: all}\n"
                        << "faults:\n  - {link: h1, rate: 1Gbps}\n";
    const auto r = RunInProcess(file, dir / "out");
    CHECK(r.code == kExitBadInput);
    CHECK(r.err.find("analytical.yaml:7:3: faults: fidelity analytical simulates nothing") !=
          std::string::npos);
}

TEST_CASE("a straggler: every message its host starts leaves late, its flows and its ranks'")
{
    const ScratchDir dir("faults-straggler");
    const auto run = [&dir](const std::string& name, const std::string& fault) {
        return RunText(dir, name,
                       "duration: 20ms\nfabric: {type: roce}\n"
                       "topology: {builder: star, hosts: 4}\nfaults:\n" +
                           fault +
                           "workloads:\n"
                           "  - {type: bulk, src: h2, dst: h3, bytes: 1MB}\n"
                           "  - {type: bulk, src: h1, dst: h0, bytes: 1MB}\n"
                           "  - {type: collective, algorithm: ring, bytes: 16MB, ranks: all, "
                           "start: 2ms}\n");
    };
    // The same run with the straggler, and with one that comes too late to matter.
    const auto slow = run("slow", "  - {host: h2, delay: 50us}\n");
    const auto late = run("late", "  - {at: 19ms, host: h2, delay: 50us}\n");
    const double d = 50e-6;
    // h2's flow leaves 50 us late and its FCT counts them; h1's is untouched.
    CHECK(Fct(slow, 0) - Fct(late, 0) == doctest::Approx(d).epsilon(0.001));
    CHECK(Fct(slow, 1) == Fct(late, 1));
    // The ring all-reduce: each of h2's 6 sends leaves late and each rank waits for its
    // predecessor, so the chain of 6 steps crosses h2's sends at least once; at most every
    // step waits, 2(n-1) d in all (measured 2.8 d: the late pieces also queue behind the
    // next step's).
    const double ring = slow["collectives"][0]["time_s"].get<double>();
    const double alone = late["collectives"][0]["time_s"].get<double>();
    MESSAGE("straggler h2 at 50 us: flow +" << (Fct(slow, 0) - Fct(late, 0)) * 1e6
                                            << " us, ring all-reduce of 16 MB " << alone * 1e3
                                            << " -> " << ring * 1e3 << " ms");
    CHECK(ring - alone >= d);
    CHECK(ring - alone <= 6 * d);
    // The fault is on record: faults.csv names the host.
    const auto rows = ReadCsv(dir / "slow" / "faults.csv");
    REQUIRE(rows.size() == 1);
    CHECK(rows[0][1] == "h2");
    CHECK(rows[0][2] == "delay");
    CHECK(rows[0][3] == "50us");
    CHECK(slow["faults"][0]["host"] == "h2");
    // A VM's messages are real: no straggler there.
    CHECK(ParseErrorOf("name: v\nfabric: {type: roce}\ntopology: {builder: star, hosts: 2}\n"
                       "endpoints:\n  h1: {kind: vm, device: rxe}\nworkloads:\n"
                       "  - {type: command, on: h1, run: \"true\"}\nfaults:\n"
                       "  - {host: h1, delay: 5us}\n")
              .find("bad.yaml:9:5: faults.0: h1 is a VM endpoint, whose messages are real") == 0);
}

TEST_CASE("a pause storm stalls what crosses the stormed port until the PFC watchdog lets it go")
{
    const ScratchDir dir("faults-storm");
    const auto run = [&dir](const std::string& name, const std::string& set) {
        return RunText(dir, name,
                       "duration: 10ms\nfabric:\n  type: roce\n  pfc: true\n" + set +
                           "topology: {builder: star, hosts: 3, link: {rate: 100Gbps, "
                           "delay: 1us}}\nfaults:\n"
                           "  - {at: 100us, host: h1, pause_storm: 3ms}\n"
                           "workloads:\n"
                           "  - {type: bulk, src: h0, dst: h1, bytes: 4MB}\n"
                           "  - {type: bulk, src: h2, dst: h0, bytes: 4MB}\n");
    };
    const auto off = run("off", "");
    const auto on = run("on", "  set: {ns3::RoceNetDevice::PfcWatchdogTime: 200us}\n");
    MESSAGE("h1's NIC storms 3 ms from 100 us: h0 -> h1 "
            << Fct(off, 0) * 1e3 << " ms, h2 -> h0 " << Fct(off, 1) * 1e3
            << " ms without the watchdog; " << Fct(on, 0) * 1e3 << " and " << Fct(on, 1) * 1e3
            << " ms with it");
    // Without the watchdog the switch's port to h1 stays paused until the storm's last pause
    // runs out: h0's flow cannot end before 3.1 ms, and the back-pressure holds h0's NIC,
    // so h2's flow to h0 waits too. Nothing is dropped: PFC holds it all.
    CHECK(Fct(off, 0) > 3.1e-3);
    CHECK(Fct(off, 1) > 1e-3);
    CHECK(off["totals"]["pfc_watchdog_triggers"] == 0);
    CHECK(off["totals"]["congestion_drops"] == 0);
    // With the watchdog (200 us; its detection time is checked in roce-link) the port
    // ignores h1's pauses after it fires: both flows end long before the storm does.
    CHECK(on["totals"]["pfc_watchdog_triggers"].get<uint64_t>() >= 1);
    CHECK(Fct(on, 0) < 1.5e-3);
    CHECK(Fct(on, 1) < 1e-3);
    CHECK(on["totals"]["congestion_drops"] == 0);
    // The Drop action (ns3::RoceSwitch::PfcWatchdogAction): the port throws away what
    // waits for h1 and what comes during each 500 us recovery. Nothing backs up into h0's
    // NIC, so h2's flow is as quick as with Forward; h0's loses packets again at each
    // firing while the storm lasts and completes only after it, by go-back-N.
    const auto drop = run("drop", "  set: {ns3::RoceNetDevice::PfcWatchdogTime: 200us, "
                                  "ns3::RoceSwitch::PfcWatchdogAction: Drop, "
                                  "ns3::RoceSwitch::PfcWatchdogRecovery: 500us}\n");
    MESSAGE("with the Drop action: h0 -> h1 " << Fct(drop, 0) * 1e3 << " ms, h2 -> h0 "
                                              << Fct(drop, 1) * 1e3 << " ms, "
                                              << drop["switch_drops"].dump());
    CHECK(drop["switch_drops"]["pfc_watchdog"].get<uint64_t>() > 0);
    CHECK(drop["totals"]["congestion_drops"] == 0); // a watchdog's drop is not congestion
    CHECK(drop["totals"]["pfc_watchdog_triggers"].get<uint64_t>() >= 2);
    CHECK(Fct(drop, 1) < 1e-3);
    CHECK(Fct(drop, 0) > 3.1e-3);
    for (const auto* s : {&off, &on, &drop})
    {
        CHECK((*s)["flows"][0]["state"] == "completed");
        CHECK((*s)["faults"][0]["kind"] == "pause_storm");
        CHECK((*s)["faults"][0]["value"] == "3ms");
        CHECK((*s)["faults"][0]["host"] == "h1");
    }
    // expect reaches the count.
    CHECK(ParseScenario("name: e\nfabric: {type: roce}\ntopology: {builder: star, hosts: 2}\n"
                        "workloads:\n  - {type: bulk, src: h0, dst: h1, bytes: 1MB}\nfaults:\n"
                        "  - {host: h1, pause_storm: 1ms}\n"
                        "expect: {totals.pfc_watchdog_triggers: \">0\"}\n",
                        "e.yaml")
              .faults.size() == 1);
    // Only where PFC is.
    CHECK(ParseErrorOf("name: p\nfabric: {type: infiniband}\ntopology: {builder: star, hosts: 2}\n"
                       "workloads:\n  - {type: bulk, src: h0, dst: h1, bytes: 1MB}\nfaults:\n"
                       "  - {host: h1, pause_storm: 1ms}\n")
              .find("bad.yaml:7:5: faults.0: a pause storm needs PFC: fabric roce with pfc on "
                    "(this fabric is infiniband)") == 0);
    CHECK(ParseErrorOf("name: p\nfabric: {type: roce, pfc: false}\ntopology: {builder: star, "
                       "hosts: 2}\nworkloads:\n  - {type: bulk, src: h0, dst: h1, bytes: 1MB}\n"
                       "faults:\n  - {host: h1, pause_storm: 1ms}\n")
              .find("(this fabric is roce, pfc off)") != std::string::npos);
}
