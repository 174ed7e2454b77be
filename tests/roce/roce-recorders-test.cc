#include "../idle-gap-sampling.h"
#include "../shell.h"
#include "../skip.h"

#include "ns3/config.h"
#include "ns3/enum.h"
#include "ns3/rdma-workload.h"
#include "ns3/roce-recorders.h"
#include "ns3/simulator.h"

#include <doctest/doctest.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <sstream>
#include <unistd.h>

using namespace ns3;

namespace
{

bool
HaveTshark()
{
    return HaveTool("tshark");
}

std::string
TempPath(const std::string& name)
{
    return (std::filesystem::temp_directory_path() /
            ("fabemu-" + std::to_string(getpid()) + "-" + name))
        .string();
}

} // namespace

TEST_CASE("frames the model writes to pcap decode in tshark as RoCEv2 BTH, none malformed")
{
    if (!HaveTshark())
    {
        FABEMU_SKIP("tshark is not installed (scripts/install-deps installs it)");
    }
    Config::Reset();
    const std::string path = TempPath("h0.pcap");
    uint64_t frames = 0;
    {
        RoceFabricHelper fabric;
        fabric.Install(TopologySpec::Star(2, LinkParams{}));
        auto pcap = Create<PcapWriter>(fabric.GetNic(0)->GetDevice(), path);
        const auto c = fabric.Connect(1, 0);
        for (auto op : {RdmaWorkRequest::Op::Write, RdmaWorkRequest::Op::Read,
                        RdmaWorkRequest::Op::SendWithImm, RdmaWorkRequest::Op::WriteWithImm})
        {
            RdmaWorkRequest wr;
            wr.op = op;
            wr.bytes = 5000;
            c.requester->PostSend(wr);
        }
        const auto ud = fabric.Connect(1, 0);
        for (auto qp : {ud.requester, ud.responder})
        {
            qp->SetAttribute("Service", EnumValue(RdmaQueuePair::UD));
        }
        RdmaWorkRequest datagram;
        datagram.op = RdmaWorkRequest::Op::Send;
        datagram.bytes = 512;
        ud.requester->PostSend(datagram);
        Simulator::Run();
        frames = pcap->Frames();
        pcap = nullptr;
        Simulator::Destroy();
    }
    REQUIRE(frames > 10);
    const std::string opcodes =
        RunCommand("tshark -r " + path + " -T fields -e infiniband.bth.opcode 2>/dev/null");
    std::map<int, int> seen;
    std::istringstream lines(opcodes);
    std::string line;
    uint64_t decoded = 0;
    while (std::getline(lines, line))
    {
        if (!line.empty())
        {
            ++decoded;
            ++seen[std::stoi(line)];
        }
    }
    CHECK(decoded == frames); // every frame is RoCEv2 with a BTH
    // WRITE F/M/L, READ request and responses F/M/L, SEND F/M/L with immediate,
    // WRITE Last with immediate, ACK, UD SEND Only.
    for (int op : {6, 7, 8, 12, 13, 14, 15, 0, 1, 3, 9, 17, 100})
    {
        CAPTURE(op);
        CHECK(seen[op] > 0);
    }
    const std::string bad = RunCommand("tshark -r " + path +
                                       " -Y '_ws.malformed || _ws.expert.severity >= 6291456' "
                                       "2>/dev/null | wc -l");
    CHECK(std::stoi(bad) == 0);
    // Timestamps are nanoseconds: frames within one microsecond are told apart.
    const std::string ns = RunCommand(
        "tshark -r " + path + " -T fields -e frame.time_epoch 2>/dev/null | sort -u | wc -l");
    const std::string us = RunCommand("tshark -r " + path +
                                      " -T fields -e frame.time_epoch 2>/dev/null | "
                                      "sed -E 's/([0-9]+[.][0-9]{6}).*/\\1/' | sort -u | wc -l");
    CHECK(std::stoul(ns) > std::stoul(us));
    std::filesystem::remove(path);
}

TEST_CASE("a lone flow on an idle leaf-spine finishes in its ideal FCT")
{
    Config::Reset();
    RoceFabricHelper fabric;
    fabric.Install(TopologySpec::LeafSpine(2, 2, 2,
                                           LinkParams{DataRate("100Gbps"), MicroSeconds(1)},
                                           LinkParams{DataRate("400Gbps"), MicroSeconds(1)}));
    FlowRunner runner(fabric);
    for (uint64_t bytes : {1000ULL, 100'000ULL, 10'000'000ULL})
    {
        runner.Add(workload::Bulk(0, 3, bytes, MilliSeconds(bytes / 1000)));
    }
    runner.Start();
    Simulator::Run();
    REQUIRE(runner.Records().size() == 3);
    for (const auto& r : runner.Records())
    {
        CAPTURE(r.spec.bytes);
        CHECK(r.Completed());
        // Alone on the fabric a flow takes exactly its ideal: back-to-back frames,
        // store and forward, the ACK back (within a nanosecond of rounding).
        CHECK(std::abs((r.fct - r.idealFct).GetPicoSeconds()) <= 1000);
    }
    Simulator::Destroy();
}

TEST_CASE("web-search at 30% load on a leaf-spine: every flow completes, FCT file in HPCC format")
{
    Config::Reset();
    RoceFabricHelper fabric;
    fabric.Install(TopologySpec::LeafSpine(2, 2, 4,
                                           LinkParams{DataRate("100Gbps"), MicroSeconds(1)},
                                           LinkParams{DataRate("400Gbps"), MicroSeconds(1)}));
    std::ostringstream pfc;
    PfcLog pfcLog(fabric, pfc);
    Ptr<UniformRandomVariable> rng = CreateObject<UniformRandomVariable>();
    rng->SetStream(1);
    std::vector<uint32_t> hosts{0, 1, 2, 3, 4, 5, 6, 7};
    const auto cdf =
        FlowSizeCdf::Load(std::string(FABEMU_SOURCE_DIR) + "/scenarios/cdf/websearch.txt");
    const auto flows =
        workload::Poisson(hosts, 0.3, cdf, DataRate("100Gbps"), Time(0), MilliSeconds(2), rng);
    REQUIRE(flows.size() > 20);
    FlowRunner runner(fabric);
    runner.Add(flows);
    runner.Start();
    Simulator::Stop(Seconds(1));
    Simulator::Run();
    CHECK(runner.Pending() == 0);
    CHECK(fabric.TotalDrops() == 0);
    for (const auto& r : runner.Records())
    {
        CHECK(r.Completed());
        CHECK(r.fct >= r.idealFct - NanoSeconds(1)); // nobody beats the idle fabric
    }
    std::ostringstream fct;
    runner.WriteFct(fct);
    std::istringstream lines(fct.str());
    std::string sip, dip;
    unsigned sport = 0, dport = 0;
    unsigned long long bytes = 0, start = 0, dur = 0, ideal = 0;
    size_t n = 0;
    while (lines >> sip >> dip >> sport >> dport >> bytes >> start >> dur >> ideal)
    {
        CHECK(sip.size() == 8);
        CHECK(sip.rfind("0a0000", 0) == 0); // 10.0.0.x in hex
        CHECK(dport == 4791);
        CHECK(dur + 1 >= ideal);
        ++n;
    }
    CHECK(n == flows.size());
    Simulator::Destroy();
}

TEST_CASE("the PFC log records pauses and resumes of an incast")
{
    Config::Reset();
    RoceFabricHelper fabric;
    fabric.Install(TopologySpec::Star(9, LinkParams{}));
    std::ostringstream log;
    PfcLog pfcLog(fabric, log);
    FlowRunner runner(fabric);
    runner.Add(workload::Incast(0, {1, 2, 3, 4, 5, 6, 7, 8}, 1'000'000, Time(0)));
    runner.Start();
    Simulator::Run();
    CHECK(pfcLog.Events() > 0);
    std::istringstream lines(log.str());
    long long t = 0;
    unsigned node = 0, port = 0, prio = 0;
    std::string what;
    int pauses = 0, resumes = 0;
    while (lines >> t >> node >> port >> prio >> what)
    {
        CHECK(prio == 3);
        pauses += what == "pause";
        resumes += what == "resume";
    }
    CHECK(pauses > 0);
    CHECK(resumes == pauses); // every pause ended by the time the incast was done
    Simulator::Destroy();
}

TEST_CASE(
    "the queue sampler sleeps while every queue is empty and resumes on its grid when frames come")
{
    Config::Reset();
    RoceFabricHelper fabric;
    fabric.Install(TopologySpec::Star(9, LinkParams{}));
    std::ostringstream rows;
    QueueSampler sampler(fabric, rows, NanoSeconds(fabemu_test::kGridNs));
    const auto g =
        fabemu_test::RunTwoIncasts(fabric, rows, [&sampler] { return sampler.Watching(); });
    fabemu_test::CheckSleptThroughGap(g, sampler.Samples(), sampler.Peak());
    Simulator::Destroy();
}
