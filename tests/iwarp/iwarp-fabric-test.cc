// The iWARP model end to end on ns-3 TCP: bytes land where RDMAP says, goodput
// is TCP's times the framing efficiency, TCP recovers losses under the RDMA
// traffic, DCTCP shares a bottleneck fairly, a malformed FPDU ends in the
// Terminate the RFCs prescribe, and tshark decodes the pcap as iWARP.
#include "../shell.h"
#include "../skip.h"

#include "ns3/applications-module.h"
#include "ns3/boolean.h"
#include "ns3/config.h"
#include "ns3/host-address.h"
#include "ns3/inet-socket-address.h"
#include "ns3/ipv4.h"
#include "ns3/iwarp-fabric-helper.h"
#include "ns3/packet.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <memory>
#include <random>
#include <unistd.h>

using namespace ns3;

namespace
{

void
Reset()
{
    Simulator::Destroy();
    Config::Reset();
}

std::shared_ptr<std::vector<uint8_t>>
RandomBytes(size_t n, uint32_t seed)
{
    auto v = std::make_shared<std::vector<uint8_t>>(n);
    std::mt19937 rng(seed);
    for (auto& b : *v)
    {
        b = static_cast<uint8_t>(rng());
    }
    return v;
}

struct Done
{
    std::vector<RdmaCompletion> completions;
};

void
Collect(Done* d, const RdmaCompletion& c)
{
    d->completions.push_back(c);
}

IwarpQp&
Qp(const Ptr<RdmaQp>& q)
{
    return *DynamicCast<IwarpQp>(q);
}

LinkParams
Link(const char* rate, Time delay = MicroSeconds(1))
{
    return LinkParams{DataRate(rate), delay};
}

/// Two hosts on one 10 Gb/s cable, one connection, completions collected at both ends.
struct QpPair
{
    IwarpFabricHelper f;
    Ptr<IwarpQp> a;
    Ptr<IwarpQp> b;
    Done da;
    Done db;

    QpPair()
    {
        f.Install(TopologySpec::Pair(Link("10Gbps")));
        const auto c = f.Connect(0, 1);
        a = DynamicCast<IwarpQp>(c.requester);
        b = DynamicCast<IwarpQp>(c.responder);
        a->SetCompletionCallback(MakeBoundCallback(&Collect, &da));
        b->SetCompletionCallback(MakeBoundCallback(&Collect, &db));
    }
};

} // namespace

TEST_CASE("an RDMA Write of 10 MB lands every byte at its offset; Read and Send likewise")
{
    Reset();
    for (bool markers : {false, true})
    {
        CAPTURE(markers);
        Config::SetDefault("ns3::IwarpQp::Markers", BooleanValue(markers));
        IwarpFabricHelper f;
        f.Install(TopologySpec::Star(2, Link("10Gbps")));
        const auto c = f.Connect(0, 1);
        IwarpQp& a = Qp(c.requester);
        IwarpQp& b = Qp(c.responder);
        constexpr size_t kBytes = 10 * 1000 * 1000;
        auto src = RandomBytes(kBytes, 1);
        auto dst = std::make_shared<std::vector<uint8_t>>(kBytes + 8192, 0);
        a.RegisterMemory(0x11, 0x100000, src);
        b.RegisterMemory(0x22, 0x700000, dst);
        // READ target on a, READ source on b, SEND source on a and receive buffer on b.
        auto readBack = std::make_shared<std::vector<uint8_t>>(300000, 0);
        a.RegisterMemory(0x33, 0x0, readBack);
        auto sendSrc = RandomBytes(100000, 2);
        a.RegisterMemory(0x44, 0x0, sendSrc);
        auto recvBuf = std::make_shared<std::vector<uint8_t>>(120000, 0);
        b.RegisterMemory(0x55, 0x9000, recvBuf);
        b.PostRecv(0x55, 0x9000, 120000);

        Done da;
        Done db;
        a.SetCompletionCallback(MakeBoundCallback(&Collect, &da));
        b.SetCompletionCallback(MakeBoundCallback(&Collect, &db));
        RdmaWorkRequest w;
        w.op = RdmaWorkRequest::Op::Write;
        w.bytes = kBytes;
        w.wrId = 1;
        w.lkey = 0x11;
        w.localAddr = 0x100000;
        w.rkey = 0x22;
        w.remoteAddr = 0x700000 + 4096; // 4 KiB into the region
        a.PostSend(w);
        RdmaWorkRequest r;
        r.op = RdmaWorkRequest::Op::Read;
        r.bytes = 250000;
        r.wrId = 2;
        r.lkey = 0x33;
        r.localAddr = 1000;
        r.rkey = 0x22;
        r.remoteAddr = 0x700000 + 4096 + 123456; // READ back part of what the WRITE put there
        a.PostSend(r);
        RdmaWorkRequest s;
        s.op = RdmaWorkRequest::Op::Send;
        s.bytes = 100000;
        s.wrId = 3;
        s.lkey = 0x44;
        s.localAddr = 0;
        a.PostSend(s);
        Simulator::Stop(MilliSeconds(100));
        Simulator::Run();

        REQUIRE(da.completions.size() == 3);
        for (size_t i = 0; i < 3; ++i)
        {
            CHECK(da.completions[i].wrId == i + 1); // in posting order
            CHECK(da.completions[i].status == RdmaCompletion::Status::Success);
        }
        CHECK(a.MarkersOnTx() == markers);
        CHECK(a.CrcInUse());
        CHECK(a.Revision() == 2);
        // WRITE: every byte at 4096 + i, nothing before or after touched.
        CHECK(std::equal(src->begin(), src->end(), dst->begin() + 4096));
        CHECK(std::all_of(dst->begin(), dst->begin() + 4096, [](uint8_t x) { return x == 0; }));
        CHECK(std::all_of(dst->begin() + 4096 + kBytes, dst->end(),
                          [](uint8_t x) { return x == 0; }));
        // READ: the bytes at that remote offset, placed at local offset 1000.
        CHECK(std::equal(readBack->begin() + 1000, readBack->begin() + 251000,
                         src->begin() + 123456));
        CHECK(readBack->at(999) == 0);
        // SEND: into the posted buffer, and a receive completion of its length.
        CHECK(std::equal(sendSrc->begin(), sendSrc->end(), recvBuf->begin()));
        REQUIRE(db.completions.size() == 1);
        CHECK(db.completions[0].receive);
        CHECK(db.completions[0].bytes == 100000);
        CHECK(b.GetTerminateSent() == std::nullopt);
        Reset();
    }
}

TEST_CASE(
    "MPA negotiation: revision 1 with a revision-2 peer, markers one way only, no CRC unless asked")
{
    Reset();
    QpPair q;
    Ptr<IwarpQp> a = q.a;
    Ptr<IwarpQp> b = q.b;
    // Before the run: the MPA request goes out once TCP is connected.
    a->SetAttribute("MpaRevision", UintegerValue(1));
    a->SetAttribute("Crc", BooleanValue(false));
    b->SetAttribute("Crc", BooleanValue(false));
    b->SetAttribute("Markers", BooleanValue(true)); // b wants markers on what it receives
    auto src = RandomBytes(1 << 20, 7);
    auto dst = std::make_shared<std::vector<uint8_t>>(1 << 20, 0);
    auto back = std::make_shared<std::vector<uint8_t>>(1 << 20, 0);
    a->RegisterMemory(1, 0, src);
    a->RegisterMemory(3, 0, back);
    b->RegisterMemory(2, 0, dst);
    const Done& da = q.da;
    RdmaWorkRequest w;
    w.op = RdmaWorkRequest::Op::Write;
    w.bytes = src->size();
    w.lkey = 1;
    w.rkey = 2;
    a->PostSend(w);
    RdmaWorkRequest r;
    r.op = RdmaWorkRequest::Op::Read;
    r.bytes = src->size();
    r.lkey = 3;
    r.rkey = 2;
    a->PostSend(r);
    Simulator::Stop(MilliSeconds(50));
    Simulator::Run();
    CHECK(a->Revision() == 1);
    CHECK(b->Revision() == 1);
    CHECK(a->MarkersOnTx());       // toward b, which asked
    CHECK_FALSE(b->MarkersOnTx()); // toward a, which did not
    CHECK_FALSE(a->CrcInUse());
    CHECK_FALSE(b->CrcInUse());
    REQUIRE(da.completions.size() == 2);
    CHECK(da.completions[1].status == RdmaCompletion::Status::Success);
    CHECK(*dst == *src);  // through markers
    CHECK(*back == *src); // and back without
    // Markers cost 4 octets per 512: a sent more stream octets than b for the same payload.
    CHECK(a->GetStreamBytesSent() > b->GetStreamBytesSent());
    Reset();
}

TEST_CASE(
    "SEND with Solicited Event and Invalidate: the event is flagged, the STag is gone after it")
{
    Reset();
    QpPair q;
    Ptr<IwarpQp> a = q.a;
    Ptr<IwarpQp> b = q.b;
    const Done& da = q.da;
    const Done& db = q.db;
    b->RegisterMemory(0x22, 0, std::make_shared<std::vector<uint8_t>>(4096, 0));
    RdmaWorkRequest send;
    send.op = RdmaWorkRequest::Op::Send;
    send.bytes = 64;
    send.solicited = true;
    send.invalidateKey = 0x22;
    a->PostSend(send);
    // Then a WRITE into the STag the SEND invalidated.
    RdmaWorkRequest w;
    w.op = RdmaWorkRequest::Op::Write;
    w.bytes = 100;
    w.rkey = 0x22;
    Simulator::Schedule(MicroSeconds(200), &IwarpQp::PostSend, a, w);
    Simulator::Stop(MilliSeconds(5));
    Simulator::Run();
    REQUIRE(db.completions.size() == 1);
    CHECK(db.completions[0].receive);
    CHECK(db.completions[0].solicited);
    REQUIRE(b->GetTerminateSent());
    CHECK(*b->GetTerminateSent() == TerminateCause{TerminateCause::Ddp, terminate::kDdpTagged,
                                                   terminate::kDdpTaggedInvalidStag});
    // The WRITE itself completed once TCP had it acknowledged (iWARP has no RDMAP ACK);
    // the peer's verdict comes back as a Terminate, and the QP is in error.
    REQUIRE(a->GetTerminateReceived());
    CHECK(*a->GetTerminateReceived() == *b->GetTerminateSent());
    CHECK(a->IsError());
    CHECK(da.completions[0].status == RdmaCompletion::Status::Success);
    Reset();
}

namespace
{

/// Bytes delivered between \p from and \p to by a counter sampled at both.
struct Window
{
    uint64_t atFrom{0};
    uint64_t atTo{0};
    double Gbps(Time from, Time to) const
    {
        return (atTo - atFrom) * 8.0 / (to - from).GetSeconds() / 1e9;
    }
};

template <typename F>
void
Sample(Window& w, Time from, Time to, F counter)
{
    Simulator::Schedule(from, [&w, counter]() { w.atFrom = counter(); });
    Simulator::Schedule(to, [&w, counter]() { w.atTo = counter(); });
}

} // namespace

TEST_CASE("one flow on a 10 Gb/s link: goodput is TCP's times the MPA/DDP/RDMAP framing "
          "efficiency, within 3%")
{
    const Time from = MilliSeconds(5);
    const Time to = MilliSeconds(25);
    const auto spec = TopologySpec::Star(2, Link("10Gbps"));

    // Plain TCP on the same fabric, same MSS and buffers: BulkSend to a PacketSink.
    Reset();
    double tcpGbps = 0;
    uint32_t mss = 0;
    {
        IwarpFabricHelper f;
        f.Install(spec);
        mss = f.GetMss();
        Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(mss));
        Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(4 << 20));
        Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(4 << 20));
        const Address sinkAddr = InetSocketAddress(Ipv4Address(f.GetHostIpv4(1)), 5001);
        PacketSinkHelper sink("ns3::TcpSocketFactory",
                              InetSocketAddress(Ipv4Address::GetAny(), 5001));
        ApplicationContainer sinkApp = sink.Install(f.GetHostNode(1));
        BulkSendHelper bulk("ns3::TcpSocketFactory", sinkAddr);
        bulk.SetAttribute("MaxBytes", UintegerValue(0));
        bulk.SetAttribute("SendSize", UintegerValue(mss));
        bulk.Install(f.GetHostNode(0));
        Ptr<PacketSink> ps = DynamicCast<PacketSink>(sinkApp.Get(0));
        Window w;
        Sample(w, from, to, [ps]() { return ps->GetTotalRx(); });
        Simulator::Stop(to);
        Simulator::Run();
        tcpGbps = w.Gbps(from, to);
        Reset();
    }
    // One RDMA WRITE, long enough to outlast the window.
    double iwarpGbps = 0;
    uint64_t fpdus = 0;
    {
        IwarpFabricHelper f;
        f.Install(spec);
        const auto c = f.Connect(0, 1);
        RdmaWorkRequest w;
        w.op = RdmaWorkRequest::Op::Write;
        w.bytes = 100 * 1000 * 1000;
        c.requester->PostSend(w);
        Window win;
        Ptr<RdmaQp> rx = c.responder;
        Sample(win, from, to, [rx]() { return rx->GetBytesReceived(); });
        Simulator::Stop(to);
        Simulator::Run();
        iwarpGbps = win.Gbps(from, to);
        fpdus = Qp(c.requester).GetFpdusSent();
        Reset();
    }
    // A full FPDU fills one TCP segment: MPA length 2, tagged header 14, payload, CRC 4.
    const double efficiency = double(mss - 2 - 14 - 4) / mss;
    MESSAGE("TCP " << tcpGbps << " Gb/s, iWARP " << iwarpGbps << " Gb/s, framing efficiency "
                   << efficiency);
    CHECK(fpdus > 10000);
    CHECK(tcpGbps > 9.0);
    CHECK(iwarpGbps / (tcpGbps * efficiency) == doctest::Approx(1.0).epsilon(0.03));
}

namespace
{

struct FourFlows
{
    std::vector<RdmaFabric::Connection> conns;
    std::vector<std::shared_ptr<std::vector<uint8_t>>> src;
    std::vector<std::shared_ptr<std::vector<uint8_t>>> dst;
    std::vector<Window> windows{4};
    Done done;
};

/// Hosts 0..3 on one switch WRITE \p bytes each to hosts 4..7 on the other, through
/// one 10 Gb/s bottleneck.
void
RunFourFlows(const IwarpFabricOptions& o, uint64_t bytes, FourFlows& ff, IwarpFabricHelper& f,
             Time from, Time to)
{
    f.Install(TopologySpec::Dumbbell(8, Link("25Gbps"), Link("10Gbps")), o);
    for (uint32_t i = 0; i < 4; ++i)
    {
        ff.conns.push_back(f.Connect(i, i + 4));
        ff.src.push_back(RandomBytes(bytes, 10 + i));
        ff.dst.push_back(std::make_shared<std::vector<uint8_t>>(bytes, 0));
        IwarpQp& a = Qp(ff.conns[i].requester);
        IwarpQp& b = Qp(ff.conns[i].responder);
        a.RegisterMemory(1, 0, ff.src[i]);
        b.RegisterMemory(2, 0, ff.dst[i]);
        a.SetCompletionCallback(MakeBoundCallback(&Collect, &ff.done));
        RdmaWorkRequest w;
        w.op = RdmaWorkRequest::Op::Write;
        w.bytes = bytes;
        w.lkey = 1;
        w.rkey = 2;
        a.PostSend(w);
        Ptr<RdmaQp> rx = ff.conns[i].responder;
        Sample(ff.windows[i], from, to, [rx]() { return rx->GetBytesReceived(); });
    }
    Simulator::Stop(Seconds(1));
    Simulator::Run();
}

} // namespace

TEST_CASE(
    "four flows through a lossy drop-tail bottleneck: TCP recovers and every byte arrives intact")
{
    Reset();
    IwarpFabricOptions o;
    o.queueBytes = 60 * 1024; // 40 packets: the incast overflows it
    FourFlows ff;
    IwarpFabricHelper f;
    RunFourFlows(o, 4 * 1000 * 1000, ff, f, MilliSeconds(1), MilliSeconds(2));
    MESSAGE("switch drops " << f.SwitchDrops() << ", TCP retransmissions "
                            << f.TotalTcpRetransmissions());
    CHECK(f.SwitchDrops() > 0);
    CHECK(f.TotalTcpRetransmissions() > 0);
    for (uint32_t i = 0; i < 4; ++i)
    {
        MESSAGE("flow " << i << " received " << ff.conns[i].responder->GetBytesReceived()
                        << " sent " << Qp(ff.conns[i].requester).GetPayloadBytesSent() << " error "
                        << ff.conns[i].requester->IsError() << " tx avail "
                        << Qp(ff.conns[i].requester).GetSocket()->GetTxAvailable());
    }
    REQUIRE(ff.done.completions.size() == 4);
    for (uint32_t i = 0; i < 4; ++i)
    {
        CHECK(ff.done.completions[i].status == RdmaCompletion::Status::Success);
        CHECK(*ff.src[i] == *ff.dst[i]);
    }
    CHECK(f.TotalTerminates() == 0);
    Reset();
}

TEST_CASE(
    "four flows with DCTCP and RED/ECN at the bottleneck: shares within 20% of each other, no loss")
{
    Reset();
    IwarpFabricOptions o;
    o.congestionControl = "ns3::TcpDctcp";
    o.red = true;
    o.markBytes = 60 * 1024;
    o.queueBytes = 1024 * 1024;
    FourFlows ff;
    IwarpFabricHelper f;
    const Time from = MilliSeconds(5);
    const Time to = MilliSeconds(25);
    RunFourFlows(o, 20 * 1000 * 1000, ff, f, from, to);
    std::vector<double> share;
    for (auto& w : ff.windows)
    {
        share.push_back(w.Gbps(from, to));
    }
    const double lo = *std::min_element(share.begin(), share.end());
    const double hi = *std::max_element(share.begin(), share.end());
    const double sum = share[0] + share[1] + share[2] + share[3];
    MESSAGE("shares " << share[0] << " " << share[1] << " " << share[2] << " " << share[3]
                      << " Gb/s; ECN marks " << f.SwitchEcnMarks() << ", echoes "
                      << f.TotalEcnEchoes() << ", peak queue " << f.PeakSwitchQueueBytes() << " B");
    CHECK(hi - lo <= 0.2 * sum / 4);
    CHECK(sum > 9.0); // the bottleneck stays busy
    CHECK(f.SwitchEcnMarks() > 0);
    CHECK(f.TotalEcnEchoes() > 0);
    CHECK(f.SwitchDrops() == 0);
    CHECK(f.PeakSwitchQueueBytes() < 4 * o.markBytes);
    REQUIRE(ff.done.completions.size() == 4);
    for (uint32_t i = 0; i < 4; ++i)
    {
        CHECK(*ff.src[i] == *ff.dst[i]);
    }
    Reset();
}

namespace
{

/// Writes raw octets into the initiator's TCP stream once the connection is up.
void
Inject(Ptr<IwarpQp> qp, std::vector<uint8_t> bytes)
{
    qp->GetSocket()->Send(Create<Packet>(bytes.data(), static_cast<uint32_t>(bytes.size())));
}

} // namespace

TEST_CASE(
    "a malformed FPDU on the wire ends in the prescribed Terminate at both ends; nothing hangs")
{
    struct Case
    {
        const char* what;
        TerminateCause expect;
        std::function<void(std::vector<uint8_t>&)> spoil;
    };
    DdpSegment w;
    w.opcode = uint8_t(RdmapOpcode::Write);
    w.tagged = true;
    w.payload.assign(200, 0x42);
    const std::vector<Case> cases{
        {"bad CRC", {TerminateCause::Llp, 0, terminate::kMpaCrc}, [](auto& b) { b[100] ^= 0xff; }},
        {"bad length",
         {TerminateCause::Llp, 0, terminate::kMpaFpduStart},
         [](auto& b) {
             b[0] = 0;
             b[1] = 3;
         }},
        {"unknown opcode",
         {TerminateCause::Rdmap, terminate::kRdmapRemoteOperation, terminate::kRdmapOpcode},
         [](auto& b) {
             b[3] = 0x4d; // RDMAP opcode 13; the CRC is recomputed below, so only RDMAP objects
         }},
    };
    for (const auto& c : cases)
    {
        CAPTURE(c.what);
        Reset();
        QpPair q;
        Ptr<IwarpQp> a = q.a;
        Ptr<IwarpQp> b = q.b;
        const Done& da = q.da;
        const IwarpFabricHelper& f = q.f;
        std::vector<uint8_t> ulpdu;
        w.Serialize(ulpdu);
        std::vector<uint8_t> bytes;
        MpaFramer framer(false, true);
        framer.Frame(ulpdu, bytes);
        c.spoil(bytes);
        if (std::string(c.what) == "unknown opcode")
        {
            const uint32_t crc = Crc32c(bytes.data(), bytes.size() - 4);
            for (int i = 0; i < 4; ++i)
            {
                bytes[bytes.size() - 4 + i] = uint8_t(crc >> (8 * i));
            }
        }
        // A WRITE still under way when the bad FPDU, queued behind its first part, arrives.
        RdmaWorkRequest big;
        big.op = RdmaWorkRequest::Op::Write;
        big.bytes = 50 * 1000 * 1000;
        a->PostSend(big);
        Simulator::Schedule(MicroSeconds(100), &Inject, a, bytes);
        Simulator::Stop(MilliSeconds(200));
        Simulator::Run();
        REQUIRE(b->GetTerminateSent());
        CHECK(*b->GetTerminateSent() == c.expect);
        REQUIRE(a->GetTerminateReceived());
        CHECK(*a->GetTerminateReceived() == c.expect);
        CHECK(a->IsError());
        CHECK(b->IsError());
        REQUIRE(da.completions.size() == 1);
        CHECK(da.completions[0].status == RdmaCompletion::Status::RemoteError);
        CHECK(b->GetBytesReceived() < big.bytes); // nothing was taken in after the bad FPDU
        CHECK(f.TotalTerminates() == 1);
        Reset();
    }
}

TEST_CASE("the model's pcap decodes in tshark as iWARP: MPA request/reply, DDP/RDMAP, good CRCs")
{
    if (!HaveTool("tshark"))
    {
        FABEMU_SKIP("tshark is not installed (scripts/install-deps installs it)");
    }
    const std::string prefix =
        (std::filesystem::temp_directory_path() / ("fabemu-iwarp-" + std::to_string(getpid())))
            .string();
    Reset();
    {
        IwarpFabricHelper f;
        f.Install(TopologySpec::Star(2, Link("10Gbps")));
        f.EnablePcap(prefix + "-h0.pcap", 0);
        const auto c = f.Connect(0, 1);
        for (auto op :
             {RdmaWorkRequest::Op::Write, RdmaWorkRequest::Op::Read, RdmaWorkRequest::Op::Send})
        {
            RdmaWorkRequest wr;
            wr.op = op;
            wr.bytes = 5000;
            c.requester->PostSend(wr);
        }
        Simulator::Stop(MilliSeconds(5));
        Simulator::Run();
        Reset();
    }
    const std::string file = prefix + "-h0.pcap";
    const std::string out =
        RunCommand("tshark -r " + file +
                   " -T fields -e iwarp_mpa.rep -e iwarp_mpa.req -e iwarp_rdma.opcode "
                   "-e iwarp_mpa.crc_check -e _ws.expert.message 2>/dev/null");
    const std::string crcs = RunCommand(
        "tshark -r " + file + " -V 2>/dev/null | grep -o '[A-Za-z]* CRC32)' | sort | uniq -c");
    // Nanosecond timestamps, as the other fabrics' pcaps: the SYN leaves h0 at 0 and the
    // SYN-ACK is back one round trip through the switch later (4.185 us: four 1 us links
    // and the frames' serialisation), to the nanosecond; the file says nanoseconds.
    const std::string times =
        RunCommand("tshark -r " + file + " -t r -T fields -e frame.time_relative 2>/dev/null");
    const std::string resolution = RunCommand("capinfos -t " + file + " 2>/dev/null");
    std::filesystem::remove(file);
    MESSAGE(times.substr(0, 60));
    CHECK(times.find("0.000000000\n0.000004185\n") != std::string::npos);
    CHECK(resolution.find("nanosecond pcap") != std::string::npos);
    MESSAGE(out);
    MESSAGE(crcs);
    CHECK(crcs.find("Good CRC32") != std::string::npos);
    CHECK(crcs.find("Bad CRC32") == std::string::npos);
    CHECK(out.find("0x00") != std::string::npos); // RDMA Write
    CHECK(out.find("0x01") != std::string::npos); // Read Request
    CHECK(out.find("0x02") != std::string::npos); // Read Response
    CHECK(out.find("0x03") != std::string::npos); // Send
    CHECK(out.find("Malformed") == std::string::npos);
}

TEST_CASE("hosts have the address every fabric gives hN; flows cross a leaf-spine between them")
{
    Reset();
    IwarpFabricHelper f;
    f.Install(TopologySpec::LeafSpine(2, 2, 2, Link("10Gbps"), Link("10Gbps")));
    for (uint32_t h = 0; h < f.GetNHosts(); ++h)
    {
        CHECK(f.GetHostIpv4(h) == HostIpv4(h));
        Ptr<Ipv4> ip = f.GetHostNode(h)->GetObject<Ipv4>();
        CHECK(ip->GetInterfaceForAddress(Ipv4Address(HostIpv4(h))) >= 0);
    }
    // h0 to h3 and h3 to h1: across the spines and within a leaf.
    std::vector<Done> done(2);
    std::vector<Ptr<IwarpQp>> qps;
    for (auto [k, ab] :
         std::vector<std::pair<int, std::pair<uint32_t, uint32_t>>>{{0, {0, 3}}, {1, {3, 2}}})
    {
        const auto c = f.Connect(ab.first, ab.second);
        auto a = DynamicCast<IwarpQp>(c.requester);
        a->SetCompletionCallback(MakeBoundCallback(&Collect, &done[k]));
        RdmaWorkRequest wr;
        wr.op = RdmaWorkRequest::Op::Write;
        wr.bytes = 200000;
        a->PostSend(wr);
        qps.push_back(a);
    }
    Simulator::Stop(MilliSeconds(50));
    Simulator::Run();
    for (const auto& d : done)
    {
        REQUIRE(d.completions.size() == 1);
        CHECK(d.completions[0].status == RdmaCompletion::Status::Success);
    }
    Reset();
}
