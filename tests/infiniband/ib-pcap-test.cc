// The InfiniBand model's pcap files, read back by tshark as InfiniBand.
#include "../idle-gap-sampling.h"
#include "../pcap-frames.h"
#include "../shell.h"
#include "../skip.h"

#include "ns3/boolean.h"
#include "ns3/config.h"
#include "ns3/ib-fabric-helper.h"
#include "ns3/ib-link.h"
#include "ns3/ib-recorders.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

#include <doctest/doctest.h>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <sstream>
#include <unistd.h>

using namespace ns3;

TEST_CASE(
    "packets the IB model writes to pcap decode in tshark: LRH, BTH, every field where it belongs")
{
    if (!HaveTool("tshark"))
    {
        FABEMU_SKIP("tshark is not installed (scripts/install-deps installs it)");
    }
    const std::string path = (std::filesystem::temp_directory_path() /
                              ("fabemu-ib-" + std::to_string(getpid()) + ".pcap"))
                                 .string();
    Simulator::Destroy();
    Config::Reset();
    Config::SetDefault("ns3::RdmaQueuePair::Mtu", UintegerValue(1024));
    {
        IbFabricHelper f;
        f.Install(TopologySpec::Pair(LinkParams{IbLinkRate("EDR", 4), NanoSeconds(100)}));
        auto pcap = Create<IbPcapWriter>(f.GetHca(0)->GetPort(), path);
        const auto conn = f.Connect(0, 1, 0);
        RdmaWorkRequest wr;
        wr.op = RdmaWorkRequest::Op::Write;
        wr.bytes = 3000; // First (1024 + RETH), Middle (1024), Last (952)
        conn.requester->PostSend(wr);
        Simulator::Stop(MicroSeconds(50));
        Simulator::Run();
        CHECK(pcap->Packets() == 3);
        pcap = nullptr;
        Simulator::Destroy();
    }
    const std::string fields = RunCommand(
        std::string("tshark ") + IbPcapWriter::kTsharkOptions + " -r " + path +
        " -T fields -e infiniband.lrh.dlid -e infiniband.lrh.slid -e infiniband.lrh.pktlen "
        "-e infiniband.bth.opcode -e infiniband.bth.psn -e _ws.malformed 2>/dev/null");
    std::istringstream in(fields);
    std::vector<std::vector<std::string>> rows;
    for (std::string line; std::getline(in, line);)
    {
        std::istringstream ls(line);
        std::vector<std::string> f;
        for (std::string x; std::getline(ls, x, '\t');)
        {
            f.push_back(x);
        }
        rows.push_back(f);
    }
    REQUIRE(rows.size() == 3);
    const char* opcodes[] = {"6", "7", "8"}; // RC RDMA WRITE First, Middle, Last
    const int words[] = {(8 + 12 + 16 + 1024 + 4) / 4, (8 + 12 + 1024 + 4) / 4,
                         (8 + 12 + 952 + 4) / 4};
    for (size_t i = 0; i < rows.size(); ++i)
    {
        CAPTURE(fields);
        REQUIRE(rows[i].size() >= 5);
        CHECK(rows[i][0] == "2"); // h1's LID
        CHECK(rows[i][1] == "1"); // h0's LID
        CHECK(rows[i][2] == std::to_string(words[i]));
        CHECK(rows[i][3] == opcodes[i]);
        CHECK((rows[i].size() < 6 || rows[i][5].empty())); // nothing malformed
    }
    CHECK(std::stoul(rows[1][4]) == std::stoul(rows[0][4]) + 1); // consecutive PSNs
    std::filesystem::remove(path);
}

TEST_CASE(
    "with UseGrh the pcap decodes as LNH 3: GRH with next header 0x1B and the GIDs, then the BTH")
{
    if (!HaveTool("tshark"))
    {
        FABEMU_SKIP("tshark is not installed (scripts/install-deps installs it)");
    }
    const std::string path = (std::filesystem::temp_directory_path() /
                              ("fabemu-ib-grh-" + std::to_string(getpid()) + ".pcap"))
                                 .string();
    Simulator::Destroy();
    Config::Reset();
    Config::SetDefault("ns3::RdmaQueuePair::Mtu", UintegerValue(1024));
    Config::SetDefault("ns3::IbHca::UseGrh", BooleanValue(true));
    {
        IbFabricHelper f;
        f.Install(TopologySpec::Star(2, LinkParams{IbLinkRate("EDR", 4), NanoSeconds(100)}));
        auto pcap = Create<IbPcapWriter>(f.GetHca(0)->GetPort(), path);
        const auto conn = f.Connect(0, 1, 0);
        RdmaWorkRequest wr;
        wr.op = RdmaWorkRequest::Op::Write;
        wr.bytes = 1000; // RDMA WRITE Only
        conn.requester->PostSend(wr);
        Simulator::Stop(MicroSeconds(50));
        Simulator::Run();
        pcap = nullptr;
        Simulator::Destroy();
    }
    Config::Reset();
    const std::string fields =
        RunCommand(std::string("tshark ") + IbPcapWriter::kTsharkOptions + " -r " + path +
                   " -Y 'infiniband.bth.opcode == 10' -T fields -e infiniband.lrh.lnh -e "
                   "infiniband.lrh.pktlen "
                   "-e infiniband.grh.nxthdr -e infiniband.grh.sgid -e infiniband.grh.dgid "
                   "-e infiniband.grh.paylen -e _ws.malformed 2>/dev/null");
    std::filesystem::remove(path);
    CAPTURE(fields);
    std::istringstream in(fields);
    std::string line;
    REQUIRE(std::getline(in, line));
    std::istringstream ls(line);
    std::vector<std::string> f;
    for (std::string x; std::getline(ls, x, '\t');)
    {
        f.push_back(x);
    }
    REQUIRE(f.size() >= 6);
    CHECK((f[0] == "3" || f[0] == "0x03"));                           // LNH: GRH next
    CHECK(f[1] == std::to_string((8 + 40 + 12 + 16 + 1000 + 4) / 4)); // PktLen in words
    CHECK((f[2] == "27" || f[2] == "0x1b"));                          // next header: BTH
    CHECK(f[3] == "fe80::2:c903:ff:1");                               // h0, LID 1
    CHECK(f[4] == "fe80::2:c903:ff:2");                               // h1, LID 2
    CHECK(f[5] == std::to_string(12 + 16 + 1000 + 4));                // PayLen: BTH to ICRC
    CHECK((f.size() < 7 || f[6].empty()));
}

TEST_CASE("captured packets carry their CRCs: the ICRC is the same at every hop, the VCRC follows "
          "the hop's VL")
{
    const std::string base =
        (std::filesystem::temp_directory_path() / ("fabemu-ib-crc-" + std::to_string(getpid())))
            .string();
    Simulator::Destroy();
    Config::Reset();
    Config::SetDefault("ns3::RdmaQueuePair::Mtu", UintegerValue(1024));
    Config::SetDefault("ns3::IbPort::NumDataVls", UintegerValue(2));
    {
        IbFabricHelper f;
        f.Install(TopologySpec::Star(2, LinkParams{IbLinkRate("EDR", 4), NanoSeconds(100)}));
        // The switch moves SL 0 from VL 0 (h0's link) to VL 1 (h1's link).
        f.GetSwitches()[0]->SetSl2Vl(0, 1, 0, 1);
        auto first = Create<IbPcapWriter>(f.GetHca(0)->GetPort(), base + "-hop1.pcap");
        auto second = Create<IbPcapWriter>(f.GetSwitches()[0]->GetPort(1), base + "-hop2.pcap");
        const auto conn = f.Connect(0, 1, 0);
        RdmaWorkRequest wr;
        wr.op = RdmaWorkRequest::Op::Write;
        wr.bytes = 3000;
        conn.requester->PostSend(wr);
        Simulator::Stop(MicroSeconds(50));
        Simulator::Run();
        first = nullptr;
        second = nullptr;
        Simulator::Destroy();
    }
    Config::Reset();
    const auto hop1 = ReadPcapFrames(base + "-hop1.pcap");
    const auto hop2 = ReadPcapFrames(base + "-hop2.pcap");
    std::filesystem::remove(base + "-hop1.pcap");
    std::filesystem::remove(base + "-hop2.pcap");
    REQUIRE(hop1.size() == 3);
    REQUIRE(hop2.size() == 3);
    for (size_t i = 0; i < 3; ++i)
    {
        CAPTURE(i);
        const auto& a = hop1[i];
        const auto& b = hop2[i];
        REQUIRE(a.size() == b.size());
        CHECK((a[0] >> 4) == 0); // VL 0 on the first hop
        CHECK((b[0] >> 4) == 1); // VL 1 on the second
        const size_t icrc = a.size() - 6;
        auto crc32At = [](const std::vector<uint8_t>& v, size_t at) {
            return uint32_t(v[at]) | uint32_t(v[at + 1]) << 8 | uint32_t(v[at + 2]) << 16 |
                   uint32_t(v[at + 3]) << 24;
        };
        CHECK(crc32At(a, icrc) != 0);
        CHECK(crc32At(a, icrc) == crc32At(b, icrc)); // invariant end to end
        CHECK(crc32At(a, icrc) == IbIcrc(a.data(), icrc));
        const auto vcrc = [](const std::vector<uint8_t>& v) {
            return uint16_t(v[v.size() - 2] << 8 | v.back());
        };
        CHECK(vcrc(a) == IbCrc16(a.data(), a.size() - 2)); // covers LRH to ICRC
        CHECK(vcrc(b) == IbCrc16(b.data(), b.size() - 2));
        CHECK(vcrc(a) != vcrc(b)); // the VL differs, so does the VCRC
        // A changed payload byte changes the ICRC.
        auto c = a;
        c[40] ^= 1;
        CHECK(IbIcrc(c.data(), icrc) != crc32At(a, icrc));
    }
}

TEST_CASE("the IB queue sampler sleeps while every input buffer is empty and resumes on its grid")
{
    Config::Reset();
    IbFabricHelper fabric;
    fabric.Install(TopologySpec::Star(9, LinkParams{IbLinkRate("EDR", 4), NanoSeconds(100)}));
    std::ostringstream rows;
    IbQueueSampler sampler(fabric, rows, NanoSeconds(fabemu_test::kGridNs));
    const auto g =
        fabemu_test::RunTwoIncasts(fabric, rows, [&sampler] { return sampler.Watching(); });
    fabemu_test::CheckSleptThroughGap(g, sampler.Samples(), sampler.Peak());
    Simulator::Destroy();
}
