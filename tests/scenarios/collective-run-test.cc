// Collectives through fabemu run: packet and analytical modes agree on uncongested
// topologies and the analytical one is the alpha-beta formula; two jobs sharing a spine
// both slow down, losslessly under PFC, and DCQCN changes what each gets; a collective
// that fails fails the run, one that cannot finish is pending, and neither has a time.
#include "emulator/fabemu/exit-codes.h"
#include "emulator/runner/collective-jobs.h"
#include "run-text.h"
#include "scenarios/src/results.h"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>

using namespace fabemu;
namespace fs = std::filesystem;

namespace
{

using Run = TextRun;

double
Time(const nlohmann::json& c)
{
    return c["time_s"].get<double>();
}

/// The two-job leaf-spine: job a's ring alternates leaves at every step (two flows each
/// way on the one spine), job b's two ranks one flow each way; \p cc, and \p jobs "a",
/// "b" or "ab".
std::string
SpineJobs(const std::string& cc, const std::string& jobs)
{
    std::string text = "duration: 50ms\n"
                       "fabric: {type: roce, pfc: true, cc: " +
                       cc +
                       "}\n"
                       "topology: {builder: leaf-spine, leaves: 2, spines: 1, hosts_per_leaf: 4}\n"
                       "workloads:\n";
    if (jobs.find('a') != std::string::npos)
    {
        text += "  - {type: collective, job: a, algorithm: ring, ranks: [h0, h4, h1, h5], bytes: "
                "16MB}\n";
    }
    if (jobs.find('b') != std::string::npos)
    {
        text += "  - {type: collective, job: b, algorithm: ring, ranks: [h2, h6], bytes: 16MB}\n";
    }
    return text;
}

} // namespace

TEST_CASE("packet and analytical modes agree within 5 % at 64 MB on uncongested topologies")
{
    ScratchDir dir("collective-agree");
    const std::string topologies[] = {
        "{builder: star, hosts: 4}",
        "{builder: leaf-spine, leaves: 2, spines: 2, hosts_per_leaf: 2}",
        "{builder: fat-tree, k: 4}",
    };
    int i = 0;
    for (const auto& topology : topologies)
    {
        CAPTURE(topology);
        const std::string body =
            "duration: 100ms\nfabric: {type: roce}\ntopology: " + topology +
            "\nworkloads:\n"
            "  - {type: collective, algorithm: ring, ranks: [h0, h1, h2, h3], bytes: 64MB}\n";
        const Run packet = RunText(dir, "p" + std::to_string(i), body);
        REQUIRE_MESSAGE(packet.code == kExitOk, packet.err);
        const Run analytical =
            RunText(dir, "a" + std::to_string(i), "fidelity: analytical\n" + body);
        REQUIRE_MESSAGE(analytical.code == kExitOk, analytical.err);
        ++i;
        const auto& p = packet.summary["collectives"][0];
        const auto& a = analytical.summary["collectives"][0];
        CHECK(p["state"] == "completed");
        // The analytical mode's time is the formula the packet run reports beside its own.
        CHECK(Time(a) == p["analytical_time_s"].get<double>());
        CHECK(Time(p) == doctest::Approx(Time(a)).epsilon(0.05));
        CHECK(packet.err.find("apart") == std::string::npos); // nothing to say when they agree
        // Every byte: each of 4 ranks receives 2(n-1)/n of 64 MB.
        CHECK(packet.summary["totals"]["bytes_delivered"] == 4ull * 2 * 3 * (64ull << 20) / 4);
        // busBw = algBw * 2(n-1)/n, algBw = bytes / time.
        CHECK(p["algbw_gbs"].get<double>() ==
              doctest::Approx((64 << 20) / Time(p) / 1e9).epsilon(1e-9));
        CHECK(p["busbw_gbs"].get<double>() ==
              doctest::Approx(p["algbw_gbs"].get<double>() * 1.5).epsilon(1e-9));
        CHECK(fs::exists(dir / ("p" + std::to_string(i - 1)) / "collectives.csv"));
        // Nothing is simulated analytically: no queue or rate records.
        CHECK_FALSE(fs::exists(dir / ("a" + std::to_string(i - 1)) / "queue.csv"));
    }
}

TEST_CASE("broadcast, reduce and send-recv: every byte where it belongs, near their alpha-beta")
{
    // Four hosts of a 100 Gb/s star, in one run one after another: a broadcast from h2,
    // a reduce to h2, a send from h3 to h1; 64 MB each. Each moves S into every rank but
    // one (busBw factor 1).
    ScratchDir dir("collective-rooted");
    const Run r = RunText(
        dir, "rooted",
        "duration: 100ms\nfabric: {type: roce, mtu: 4096}\n"
        "topology: {builder: star, hosts: 4}\nworkloads:\n"
        "  - {type: collective, job: b, op: broadcast, ranks: [h2, h0, h1, h3], bytes: 64MB}\n"
        "  - {type: collective, job: r, op: reduce, ranks: [h2, h0, h1, h3], bytes: 64MB, "
        "start: 20ms}\n"
        "  - {type: collective, job: s, op: send-recv, ranks: [h3, h1], bytes: 64MB, start: "
        "40ms}\n");
    REQUIRE_MESSAGE(r.code == kExitOk, r.err);
    const auto& c = r.summary["collectives"];
    REQUIRE(c.size() == 3);
    for (const auto& one : c)
    {
        CAPTURE(one.dump());
        CHECK(one["state"] == "completed");
        CHECK(Time(one) == doctest::Approx(one["analytical_time_s"].get<double>()).epsilon(0.05));
        CHECK(one["busbw_gbs"].get<double>() == one["algbw_gbs"].get<double>());
    }
    CHECK(c[0]["algorithm"] == "ring");
    CHECK(c[2]["algorithm"] == "direct");
    // A chain of 8 pieces per rank ends near one link's rate: 100 Gb/s less headers and
    // the 3-hop fill; the send at the link's rate.
    CHECK(c[0]["algbw_gbs"].get<double>() > 10);
    CHECK(c[2]["algbw_gbs"].get<double>() > 11.5);
    CHECK(r.summary["totals"]["bytes_delivered"] == (3ull + 3 + 1) * (64ull << 20));
}

TEST_CASE("when the modes disagree at 64 MB or more, the run says so")
{
    // Two jobs at once on the same four hosts: each sees half the links the alpha-beta
    // model gives it, so the packet times are far above the analytical ones.
    ScratchDir dir("collective-disagree");
    const Run r = RunText(dir, "both",
                          "duration: 100ms\nfabric: {type: roce}\n"
                          "topology: {builder: star, hosts: 4}\nworkloads:\n"
                          "  - {type: collective, job: x, algorithm: ring, bytes: 64MB}\n"
                          "  - {type: collective, job: y, algorithm: ring, bytes: 64MB}\n");
    REQUIRE_MESSAGE(r.code == kExitOk, r.err);
    for (const auto& c : r.summary["collectives"])
    {
        CHECK(Time(c) > 1.5 * c["analytical_time_s"].get<double>());
    }
    // Said on stderr, even with --quiet (as this in-process run is).
    CHECK(r.err.find("collective x iteration 0: packet mode took") != std::string::npos);
    CHECK(r.err.find("collective y iteration 0: packet mode took") != std::string::npos);
    CHECK(r.err.find("% apart: congestion, or paths the model does not see") != std::string::npos);
}

TEST_CASE("one 100 Gb/s NIC per host: ring all-reduce busBw near nccl-tests' measured 12.2 GB/s")
{
    // nccl-tests#29 measured 12.2 GB/s of busBw through a single 100G NIC (ref 2.4): the
    // link less its headers. Here: RoCEv2 frames of 4096-byte payload, 64 MB.
    ScratchDir dir("collective-nic");
    const Run r = RunText(dir, "nic",
                          "duration: 100ms\nfabric: {type: roce, mtu: 4096}\n"
                          "topology: {builder: star, hosts: 4}\n"
                          "workloads:\n  - {type: collective, algorithm: ring, bytes: 64MB}\n");
    REQUIRE_MESSAGE(r.code == kExitOk, r.err);
    CHECK(r.summary["collectives"][0]["busbw_gbs"].get<double>() ==
          doctest::Approx(12.2).epsilon(0.03));
}

TEST_CASE("GPU ranks on one dgx-h100: NCCL's ~370 GB/s ring busBw, both modes")
{
    ScratchDir dir("collective-dgx");
    const std::string body =
        "duration: 50ms\nfabric:\n  set:\n    ns3::NvlinkLink::MaxPayload: 65536\n"
        "topology: {builder: node, node: dgx-h100}\nworkloads:\n"
        "  - {type: collective, algorithm: ring, bytes: 1GB, ranks: [h0.gpu0, h0.gpu1, h0.gpu2, "
        "h0.gpu3, h0.gpu4, h0.gpu5, h0.gpu6, h0.gpu7]}\n";
    const Run packet = RunText(dir, "packet", body);
    REQUIRE_MESSAGE(packet.code == kExitOk, packet.err);
    const Run analytical = RunText(dir, "analytical", "fidelity: analytical\n" + body);
    REQUIRE_MESSAGE(analytical.code == kExitOk, analytical.err);
    const auto& p = packet.summary["collectives"][0];
    CHECK(p["ranks"][3] == "h0.gpu3");
    // nccl-tests#212: ~370 GB/s for 8 x H100 ring (reference 2.4), within 10 %.
    CHECK(p["busbw_gbs"].get<double>() == doctest::Approx(370).epsilon(0.10));
    CHECK(Time(p) == doctest::Approx(Time(analytical.summary["collectives"][0])).epsilon(0.05));
    CHECK(packet.summary["totals"]["nvlink_replays"] == 0);
}

TEST_CASE("GPUs without NVLink (pcie-8gpu): collectives over PCIe at its framing rate, both modes")
{
    ScratchDir dir("collective-pcie");
    const std::string body =
        "duration: 50ms\ntopology: {builder: node, node: pcie-8gpu}\nworkloads:\n"
        "  - {type: collective, algorithm: ring, bytes: 64MB, ranks: [h0.gpu0, h0.gpu1, "
        "h0.gpu2, h0.gpu3, h0.gpu4, h0.gpu5, h0.gpu6, h0.gpu7]}\n"
        "  - {type: collective, job: pair, op: all-gather, algorithm: ring, bytes: 64MB, "
        "start: 20ms, ranks: [h0.gpu0, h0.gpu1]}\n";
    const Run packet = RunText(dir, "packet", body);
    REQUIRE_MESSAGE(packet.code == kExitOk, packet.err);
    const Run analytical = RunText(dir, "analytical", "fidelity: analytical\n" + body);
    REQUIRE_MESSAGE(analytical.code == kExitOk, analytical.err);
    // Every link is Gen5 x16: 256-byte TLPs with their framing, F(5, 16, 256) = 58.449 GB/s
    // (docs/pcie.md). A ring's busBw is its slowest edge's rate: gpu1 -> gpu2 crosses sw0's
    // uplink, the root complex and sw1's, each carrying one flow each way.
    const double framing = 58.449;
    const auto& ring = packet.summary["collectives"][0];
    MESSAGE("pcie-8gpu ring all-reduce 64 MB: busBw " << ring["busbw_gbs"].get<double>()
                                                      << " GB/s, framing " << framing);
    CHECK(ring["busbw_gbs"].get<double>() == doctest::Approx(framing).epsilon(0.05));
    CHECK(ring["busbw_gbs"].get<double>() < framing);
    CHECK(Time(ring) == doctest::Approx(Time(analytical.summary["collectives"][0])).epsilon(0.05));
    // Two GPUs under one switch: peer to peer, nothing through the root complex.
    const auto& pair = packet.summary["collectives"][1];
    CHECK(pair["state"] == "completed");
    CHECK(Time(pair) == doctest::Approx(Time(analytical.summary["collectives"][1])).epsilon(0.05));
    CHECK(packet.summary["totals"]["pcie_replays"] == 0);
}

TEST_CASE("dgx-1: rings follow its NVLink cube mesh, pairs NVLink does not join go over PCIe")
{
    ScratchDir dir("collective-dgx1");
    const std::string gpus =
        "[h0.gpu0, h0.gpu1, h0.gpu2, h0.gpu3, h0.gpu4, h0.gpu5, h0.gpu6, h0.gpu7]";
    const std::string body =
        "duration: 70ms\ntopology: {builder: node, node: dgx-1}\nworkloads:\n"
        "  - {type: collective, algorithm: ring, bytes: 64MiB, ranks: " +
        gpus +
        "}\n"
        "  - {type: collective, job: a2a, op: all-to-all, bytes: 8MiB, start: 20ms, ranks: " +
        gpus +
        "}\n"
        "  - {type: collective, job: pair, algorithm: ring, bytes: 8MiB, start: 40ms, ranks: "
        "[h0.gpu0, h0.gpu5]}\n"
        "  - {type: collective, job: quad, algorithm: ring, bytes: 16MiB, start: 45ms, ranks: "
        "[h0.gpu0, h0.gpu1, h0.gpu2, h0.gpu3]}\n"
        "  - {type: collective, job: apart, algorithm: ring, bytes: 16MiB, start: 50ms, ranks: "
        "[h0.gpu0, h0.gpu5, h0.gpu1, h0.gpu6]}\n";
    const Run packet = RunText(dir, "packet", body);
    REQUIRE_MESSAGE(packet.code == kExitOk, packet.err);
    const Run analytical = RunText(dir, "analytical", "fidelity: analytical\n" + body);
    REQUIRE_MESSAGE(analytical.code == kExitOk, analytical.err);
    const auto& c = packet.summary["collectives"];
    REQUIRE(c.size() == 5);
    for (size_t j = 0; j < c.size(); ++j)
    {
        CHECK_MESSAGE(c[j]["state"] == "completed", c[j].dump()); // every byte where it belongs
    }
    // NVLink1 carries 18.0 GB/s a link (docs/nvlink.md). The ring search finds two cycles
    // through the 8 GPUs that share no link, each run both ways: 4 rings, each link
    // carrying one each way, so a GPU sends on its 4 links at once.
    const double link = 18.0;
    MESSAGE("dgx-1 ring all-reduce 64 MiB: busBw " << c[0]["busbw_gbs"].get<double>()
                                                   << " GB/s (4 rings x " << link << ")");
    CHECK(c[0]["busbw_gbs"].get<double>() == doctest::Approx(4 * link).epsilon(0.05));
    CHECK(Time(c[0]) == doctest::Approx(Time(analytical.summary["collectives"][0])).epsilon(0.05));
    for (const auto& row : ReadCsv(dir / "packet" / "collective-steps.csv"))
    {
        if (row[0] != "job0")
        {
            continue;
        }
        const int a = row[2].back() - '0';
        const int b = row[3].back() - '0';
        CHECK_MESSAGE((a / 4 == b / 4 || a % 4 == b % 4), row[2] << " -> " << row[3]);
    }
    // gpu0 and gpu5 share no NVLink: Gen3 x16 through the root complex, F(3, 16, 256) =
    // 14.6 GB/s (docs/pcie.md); a 2-rank all-reduce's busBw is its link's rate.
    MESSAGE("dgx-1 gpu0 <-> gpu5 all-reduce 8 MiB over PCIe: busBw "
            << c[2]["busbw_gbs"].get<double>() << " GB/s");
    CHECK(c[2]["busbw_gbs"].get<double>() == doctest::Approx(14.6).epsilon(0.05));
    CHECK(Time(c[2]) == doctest::Approx(Time(analytical.summary["collectives"][2])).epsilon(0.05));
    // All-to-all sends between every pair, NVLink's and PCIe's at once: the unlinked pairs
    // share the PCIe switches' uplinks, which the analytical mode does not see (it takes
    // each pair alone), so the packet run is slower (measured 1.20 times), never faster.
    const double a2a = Time(c[1]) / Time(analytical.summary["collectives"][1]);
    MESSAGE("dgx-1 all-to-all 8 MiB: packet / analytical " << a2a);
    CHECK(a2a >= 1.0);
    CHECK(a2a <= 1.5);
    // The quad, NVLink alone: K4 has one cycle's worth of links to spare, so 2 rings
    // (it and its reverse) and 2 links' rate.
    MESSAGE("dgx-1 quad ring all-reduce 16 MiB: busBw " << c[3]["busbw_gbs"].get<double>());
    CHECK(c[3]["busbw_gbs"].get<double>() == doctest::Approx(2 * link).epsilon(0.05));
    CHECK(Time(c[3]) == doctest::Approx(Time(analytical.summary["collectives"][3])).epsilon(0.05));
    // gpu0, gpu5, gpu1, gpu6: no cycle on NVLink; the ring leaves it once (gpu6 -> gpu0 on
    // PCIe), which paces it.
    MESSAGE("dgx-1 gpu0,5,1,6 ring all-reduce 16 MiB: busBw " << c[4]["busbw_gbs"].get<double>());
    CHECK(c[4]["busbw_gbs"].get<double>() == doctest::Approx(14.6).epsilon(0.06));
    CHECK(Time(c[4]) == doctest::Approx(Time(analytical.summary["collectives"][4])).epsilon(0.05));
}

TEST_CASE("a straggler holds up every iteration by at least its delay")
{
    ScratchDir dir("collective-straggler");
    const std::string head = "duration: 100ms\nfabric: {type: roce}\n"
                             "topology: {builder: star, hosts: 4}\nworkloads:\n";
    const Run on = RunText(dir, "on-time",
                           head + "  - {type: collective, algorithm: ring, bytes: 16MB, "
                                  "iterations: 2}\n");
    const Run late = RunText(dir, "late",
                             head + "  - {type: collective, algorithm: ring, bytes: 16MB, "
                                    "iterations: 2, stragglers: {h2: 1ms}}\n");
    REQUIRE_MESSAGE(on.code == kExitOk, on.err);
    REQUIRE_MESSAGE(late.code == kExitOk, late.err);
    for (int i = 0; i < 2; ++i)
    {
        CAPTURE(i);
        const double extra =
            Time(late.summary["collectives"][i]) - Time(on.summary["collectives"][i]);
        // The others wait for h2's first piece, then the ring's steps fall out of step:
        // measured 1.24 and 1.15 ms more.
        CHECK(extra >= 1e-3);
        CHECK(extra < 1.5e-3);
    }
    // The resolved file keeps it; a straggler that is not a rank is refused.
    CHECK(Slurp(dir / "late" / "scenario.resolved.yaml").find("stragglers: {h2: 1ms}") !=
          std::string::npos);
}

TEST_CASE("two jobs sharing a spine both slow down, losslessly, and DCQCN changes the split")
{
    ScratchDir dir("collective-spine");
    std::map<std::string, double> algbw; // "cc/jobs/job"
    for (const std::string cc : {"none", "dcqcn"})
    {
        for (const std::string jobs : {"a", "b", "ab"})
        {
            const Run r = RunText(dir, cc + "-" + jobs, SpineJobs(cc, jobs));
            REQUIRE_MESSAGE(r.code == kExitOk, r.err);
            CHECK(r.summary["totals"]["congestion_drops"] == 0); // PFC: lossless
            for (const auto& c : r.summary["collectives"])
            {
                REQUIRE(c["state"] == "completed");
                algbw[cc + "/" + jobs + "/" + c["job"].get<std::string>()] = c["algbw_gbs"];
            }
            if (cc == "none" && jobs == "ab")
            {
                CHECK(r.summary["totals"]["pfc_pause_frames"].get<uint64_t>() > 0);
            }
        }
    }
    for (const std::string cc : {"none", "dcqcn"})
    {
        CAPTURE(cc);
        // Together, each job gets less of the spine than alone.
        CHECK(algbw[cc + "/ab/a"] < 0.8 * algbw[cc + "/a/a"]);
        CHECK(algbw[cc + "/ab/b"] < 0.8 * algbw[cc + "/b/b"]);
    }
    // Measured here (algBw, GB/s), within 10 %. Alone: a 3.75 (none) and 3.48 (DCQCN),
    // b 11.18 (its ring does not cross the spine's congested direction twice). Together,
    // PFC alone leaves a 75 % of its alone figure (2.82) and b 40 % (4.45); DCQCN's cuts
    // leave the spine short of full on 16 MB steps and move the split: a 38 % (1.31),
    // b 16 % (1.82).
    CHECK(algbw["none/a/a"] == doctest::Approx(3.75).epsilon(0.1));
    CHECK(algbw["dcqcn/a/a"] == doctest::Approx(3.48).epsilon(0.1));
    CHECK(algbw["none/b/b"] == doctest::Approx(11.18).epsilon(0.1));
    CHECK(algbw["none/ab/a"] == doctest::Approx(2.82).epsilon(0.1));
    CHECK(algbw["none/ab/b"] == doctest::Approx(4.45).epsilon(0.1));
    CHECK(algbw["dcqcn/ab/a"] == doctest::Approx(1.31).epsilon(0.1));
    CHECK(algbw["dcqcn/ab/b"] == doctest::Approx(1.82).epsilon(0.1));
    // The split moves: b's share of a's rate, PFC alone against DCQCN.
    CHECK(algbw["none/ab/b"] / algbw["none/ab/a"] >
          1.1 * algbw["dcqcn/ab/b"] / algbw["dcqcn/ab/a"]);
}

TEST_CASE("a collective that fails fails the run; one that cannot finish is pending; no time")
{
    ScratchDir dir("collective-fail");
    // Queue pairs that give up at their first timeout, on a lossy bottleneck.
    const Run failed =
        RunText(dir, "fail",
                "duration: 5ms\n"
                "fabric:\n  type: roce\n  pfc: false\n  cc: none\n  set:\n"
                "    ns3::RdmaQueuePair::RetryCount: 0\n    ns3::RdmaQueuePair::Timeout: 10us\n"
                "topology: {builder: dumbbell, hosts: 4, link: {rate: 25Gbps}, bottleneck: {rate: "
                "10Gbps}}\n"
                "workloads:\n  - {type: collective, op: all-to-all, bytes: 8MB}\n");
    CHECK(failed.code == kExitFailure);
    const auto& f = failed.summary["collectives"][0];
    CHECK(f["state"] == "failed");
    CHECK(f["time_s"].is_null());
    CHECK(f["busbw_gbs"].is_null());
    CHECK(f["reason"].get<std::string>().find("retry count exceeded") != std::string::npos);
    CHECK(failed.err.find("collective job0 iteration 0 failed") != std::string::npos);

    const Run pending = RunText(dir, "pending",
                                "duration: 100us\nfabric: {type: roce}\n"
                                "topology: {builder: star, hosts: 4}\n"
                                "workloads:\n  - {type: collective, bytes: 64MB, iterations: 2}\n");
    CHECK(pending.code == kExitOk); // as for pending flows, the expect block decides
    REQUIRE(pending.summary["collectives"].size() == 2);
    for (const auto& c : pending.summary["collectives"])
    {
        CHECK(c["state"] == "pending");
        CHECK(c["time_s"].is_null());
    }
    CHECK(pending.err.find("collective job0 iteration 1 pending") != std::string::npos);
    std::ifstream csv(dir / "pending" / "collectives.csv");
    std::string header, row;
    std::getline(csv, header);
    std::getline(csv, row);
    CHECK(row.find(",pending,") != std::string::npos);
    CHECK(row.find(",pending,0,,,,") != std::string::npos); // no time, algBw or busBw
}

TEST_CASE("a training step: compute, buckets overlapping it, the communication it exposes")
{
    ScratchDir dir("collective-training");
    // 4 hosts at 100 Gb/s: a 16 MB ring all-reduce takes about 2.1 ms, a little more than
    // the 2 ms of compute between buckets, so each bucket waits for the one before.
    const std::string head = "duration: 200ms\nfabric: {type: roce, mtu: 4096}\n"
                             "topology: {builder: star, hosts: 4}\nworkloads:\n";
    const std::string ddp = "  - {type: collective, job: ddp, algorithm: ring, bytes: 64MB, "
                            "compute: 8ms, buckets: 4, iterations: 3}\n";
    const std::string serial = "  - {type: collective, job: serial, algorithm: ring, bytes: "
                               "64MB, compute: 8ms, iterations: 2, start: 100ms}\n";
    for (const std::string fidelity : {"packet", "analytical"})
    {
        CAPTURE(fidelity);
        const std::string text =
            (fidelity == "analytical" ? "fidelity: analytical\n" : "") + head + ddp + serial;
        const Run r = RunText(dir, fidelity, text);
        REQUIRE_MESSAGE(r.code == kExitOk, r.err);
        const auto& steps = r.summary["training"];
        REQUIRE(steps.size() == 5);
        const auto& c = r.summary["collectives"];
        REQUIRE(c.size() == 3 * 4 + 2);
        // DDP: bucket k (16 MB) ready at 2 (k+1) ms into the step, each after the one before.
        for (uint32_t it = 0; it < 3; ++it)
        {
            CAPTURE(it);
            const auto& st = steps[it];
            CHECK(st["job"] == "ddp");
            CHECK(st["state"] == "completed");
            const double start = st["start_s"].get<double>();
            double end = start;
            for (uint32_t k = 0; k < 4; ++k)
            {
                const auto& b = c[it * 4 + k];
                CHECK(b["bucket"] == k);
                CHECK(b["bytes"] == (64u << 20) / 4);
                const double ready = start + 0.002 * (k + 1);
                CHECK(b["start_s"].get<double>() ==
                      doctest::Approx(std::max(ready, end)).epsilon(1e-6));
                end = b["start_s"].get<double>() + Time(b);
            }
            CHECK(st["step_s"].get<double>() ==
                  doctest::Approx(std::max(end, start + 0.008) - start).epsilon(1e-6));
            CHECK(st["exposed_s"].get<double>() ==
                  doctest::Approx(st["step_s"].get<double>() - 0.008).epsilon(1e-6));
            if (it > 0)
            {
                CHECK(start == doctest::Approx(steps[it - 1]["start_s"].get<double>() +
                                               steps[it - 1]["step_s"].get<double>())
                                   .epsilon(1e-9));
            }
        }
        // Without buckets the whole all-reduce follows the compute: all of it exposed.
        const auto& first = steps[3];
        CHECK(first["job"] == "serial");
        CHECK(first["exposed_s"].get<double>() == doctest::Approx(Time(c[12])).epsilon(1e-6));
        CHECK(c[12]["start_s"].get<double>() == doctest::Approx(0.108).epsilon(1e-9));
        // Buckets hide most of it: the last bucket and what queued behind it stay exposed.
        CHECK(steps[0]["exposed_s"].get<double>() < 0.5 * first["exposed_s"].get<double>());
        CHECK(steps[0]["exposed_s"].get<double>() > Time(c[3]));
        const auto csv = ReadCsv(dir / fidelity / "training.csv");
        REQUIRE(csv.size() == 5);
        CHECK(csv[0][0] == "ddp");
        CHECK(std::stod(csv[0][6]) == doctest::Approx(steps[0]["exposed_s"].get<double>()));
        std::ifstream report(dir / fidelity / "report.md");
        const std::string md{std::istreambuf_iterator<char>(report), {}};
        CHECK(md.find("## Training steps") != std::string::npos);
        CHECK(md.find("| serial | 1 | completed | 8 ms |") != std::string::npos);
        CHECK(md.find("| ddp | 2.3 | all-reduce |") != std::string::npos); // iteration.bucket
        CHECK(md.find("| serial | 1 | all-reduce |") != std::string::npos);
        // The terminal says it too.
        CHECK(TrainingTable(r.summary["training"]).find("training ddp: 3 of 3 steps") == 0);
    }
}
