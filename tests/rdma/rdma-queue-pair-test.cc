#include "ns3/enum.h"
#include "ns3/ib-opcode.h"
#include "ns3/rdma-queue-pair.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

#include <doctest/doctest.h>

#include <functional>
#include <random>
#include <vector>

using namespace ns3;

namespace
{

/// Two QPs joined by a wire of fixed delay: each pulls its packets as a NIC
/// at a given packet rate would, and a drop rule may lose any packet.
struct Wire
{
    Ptr<RdmaQueuePair> a = CreateObject<RdmaQueuePair>();
    Ptr<RdmaQueuePair> b = CreateObject<RdmaQueuePair>();
    std::function<bool(const TransportPacket&, bool fromA)> drop = [](const TransportPacket&,
                                                                      bool) { return false; };
    Time delay = MicroSeconds(2);
    Time perPacket = NanoSeconds(100);
    std::vector<RdmaCompletion> doneA;
    std::vector<RdmaCompletion> doneB;
    uint64_t sentA = 0;
    EventId pumpA;
    EventId pumpB;

    Wire()
    {
        a->SetQpn(0x11);
        b->SetQpn(0x22);
        a->SetRemoteQpn(0x22);
        b->SetRemoteQpn(0x11);
        a->SetWakeCallback(MakeCallback(&Wire::WakeA, this));
        b->SetWakeCallback(MakeCallback(&Wire::WakeB, this));
        a->SetCompletionCallback(MakeCallback(&Wire::DoneA, this));
        b->SetCompletionCallback(MakeCallback(&Wire::DoneB, this));
    }
    ~Wire() { Simulator::Destroy(); }

    void DoneA(const RdmaCompletion& c) { doneA.push_back(c); }
    void DoneB(const RdmaCompletion& c) { doneB.push_back(c); }
    void WakeA()
    {
        if (!pumpA.IsRunning())
        {
            pumpA = Simulator::ScheduleNow(&Wire::Pump, this, true);
        }
    }
    void WakeB()
    {
        if (!pumpB.IsRunning())
        {
            pumpB = Simulator::ScheduleNow(&Wire::Pump, this, false);
        }
    }
    void Pump(bool fromA)
    {
        Ptr<RdmaQueuePair> src = fromA ? a : b;
        Ptr<RdmaQueuePair> dst = fromA ? b : a;
        auto p = src->NextPacket();
        if (!p)
        {
            return;
        }
        sentA += fromA;
        if (!drop(*p, fromA))
        {
            Simulator::Schedule(delay, &RdmaQueuePair::Receive, dst, *p);
        }
        (fromA ? pumpA : pumpB) = Simulator::Schedule(perPacket, &Wire::Pump, this, fromA);
    }
};

RdmaWorkRequest
Wr(RdmaWorkRequest::Op op, uint64_t bytes, uint64_t id = 1)
{
    RdmaWorkRequest wr;
    wr.op = op;
    wr.bytes = bytes;
    wr.wrId = id;
    return wr;
}

} // namespace

TEST_CASE("a 10 MB RDMA WRITE is cut into MTU packets and completes once acknowledged")
{
    Wire w;
    w.a->PostSend(Wr(RdmaWorkRequest::Op::Write, 10'000'000));
    Simulator::Run();
    REQUIRE(w.doneA.size() == 1);
    CHECK(w.doneA[0].status == RdmaCompletion::Status::Success);
    CHECK(w.b->GetBytesReceived() == 10'000'000);
    CHECK(w.sentA == (10'000'000 + 1023) / 1024);
    CHECK(w.a->GetRetransmittedPackets() == 0);
    CHECK(w.doneB.empty()); // a plain WRITE makes no receive completion
}

TEST_CASE("random loss both ways: go-back-N delivers every byte exactly once")
{
    Wire w;
    std::mt19937 rng(7);
    std::bernoulli_distribution lose(0.01);
    w.drop = [&](const TransportPacket&, bool) { return lose(rng); };
    w.a->PostSend(Wr(RdmaWorkRequest::Op::Write, 4'000'000, 1));
    w.a->PostSend(Wr(RdmaWorkRequest::Op::Send, 1'000'000, 2));
    Simulator::Run();
    REQUIRE(w.doneA.size() == 2);
    CHECK(w.doneA[0].status == RdmaCompletion::Status::Success);
    CHECK(w.doneA[1].status == RdmaCompletion::Status::Success);
    CHECK(w.doneA[0].wrId == 1);
    CHECK(w.b->GetBytesReceived() == 5'000'000); // in-order bytes only: no duplicate counted
    CHECK(w.a->GetRetransmittedPackets() > 0);
    CHECK(w.b->GetNaksSent() > 0);
    REQUIRE(w.doneB.size() == 1);
    CHECK(w.doneB[0].bytes == 1'000'000);
}

TEST_CASE("a lost last packet is recovered by the retransmission timeout")
{
    Wire w;
    bool dropped = false;
    w.drop = [&](const TransportPacket& p, bool fromA) {
        if (fromA && !dropped && p.opcode == IbOpcode(IbTransport::RC, IbOperation::WriteLast))
        {
            dropped = true;
            return true;
        }
        return false;
    };
    w.a->PostSend(Wr(RdmaWorkRequest::Op::Write, 64 * 1024));
    Simulator::Run();
    REQUIRE(w.doneA.size() == 1);
    CHECK(w.doneA[0].status == RdmaCompletion::Status::Success);
    CHECK(w.a->GetTimeouts() == 1);
    CHECK(w.b->GetNaksSent() == 0); // nothing followed the lost packet to reveal a gap
    CHECK(w.doneA[0].completed > MilliSeconds(1));
}

TEST_CASE("a dead link fails the QP after RetryCount timeouts and flushes what is queued")
{
    Wire w;
    w.a->SetAttribute("RetryCount", UintegerValue(3));
    w.drop = [&](const TransportPacket&, bool fromA) { return fromA && w.sentA > 10; };
    w.a->PostSend(Wr(RdmaWorkRequest::Op::Write, 1'000'000, 1));
    w.a->PostSend(Wr(RdmaWorkRequest::Op::Write, 1'000, 2));
    Simulator::Run();
    REQUIRE(w.doneA.size() == 2);
    CHECK(w.doneA[0].status == RdmaCompletion::Status::RetryExceeded);
    CHECK(w.doneA[1].status == RdmaCompletion::Status::Flushed);
    CHECK(w.a->GetTimeouts() == 4);
    CHECK(w.a->IsError());
    w.a->PostSend(Wr(RdmaWorkRequest::Op::Write, 1'000, 3));
    REQUIRE(w.doneA.size() == 3);
    CHECK(w.doneA[2].status == RdmaCompletion::Status::Flushed);
}

TEST_CASE("an RDMA READ under loss returns every byte, in order")
{
    Wire w;
    std::mt19937 rng(11);
    std::bernoulli_distribution lose(0.02);
    w.drop = [&](const TransportPacket&, bool) { return lose(rng); };
    w.a->PostSend(Wr(RdmaWorkRequest::Op::Read, 2'000'000));
    Simulator::Run();
    REQUIRE(w.doneA.size() == 1);
    CHECK(w.doneA[0].status == RdmaCompletion::Status::Success);
    CHECK(w.a->GetBytesAcked() == 2'000'000);
}

TEST_CASE("SEND with immediate gives the responder a receive completion with the value")
{
    Wire w;
    RdmaWorkRequest wr = Wr(RdmaWorkRequest::Op::SendWithImm, 5000);
    wr.imm = 0xfeedbeef;
    w.a->PostSend(wr);
    Simulator::Run();
    REQUIRE(w.doneB.size() == 1);
    CHECK(w.doneB[0].receive);
    CHECK(w.doneB[0].imm == 0xfeedbeef);
    CHECK(w.doneB[0].bytes == 5000);
    CHECK(w.doneB[0].op == RdmaWorkRequest::Op::SendWithImm);
}

TEST_CASE("PSNs wrap at 2^24 without a stall, even under loss")
{
    Wire w;
    w.a->SetInitialPsn(0xffff00, 0);
    w.b->SetInitialPsn(0, 0xffff00);
    std::mt19937 rng(3);
    std::bernoulli_distribution lose(0.01);
    w.drop = [&](const TransportPacket&, bool) { return lose(rng); };
    w.a->PostSend(Wr(RdmaWorkRequest::Op::Write, 1024 * 1024));
    Simulator::Run();
    REQUIRE(w.doneA.size() == 1);
    CHECK(w.doneA[0].status == RdmaCompletion::Status::Success);
    CHECK(w.b->GetBytesReceived() == 1024 * 1024);
}

TEST_CASE("completions come back in the order the requests were posted")
{
    Wire w;
    w.a->PostSend(Wr(RdmaWorkRequest::Op::Write, 100'000, 1));
    w.a->PostSend(Wr(RdmaWorkRequest::Op::Read, 50'000, 2));
    w.a->PostSend(Wr(RdmaWorkRequest::Op::Write, 10, 3));
    w.a->PostSend(Wr(RdmaWorkRequest::Op::Send, 0, 4));
    Simulator::Run();
    REQUIRE(w.doneA.size() == 4);
    for (uint64_t i = 0; i < 4; ++i)
    {
        CHECK(w.doneA[i].wrId == i + 1);
        CHECK(w.doneA[i].status == RdmaCompletion::Status::Success);
    }
}

TEST_CASE("UD: datagrams arrive with their immediate, and a lost one stays lost")
{
    Wire w;
    for (auto qp : {w.a, w.b})
    {
        qp->SetAttribute("Service", EnumValue(RdmaQueuePair::UD));
    }
    int n = 0;
    w.drop = [&n](const TransportPacket& p, bool) {
        CHECK(p.opcode == 0x64 + (p.imm ? 1 : 0)); // UD SEND Only (with immediate)
        CHECK(p.deth.srcQp == 0x11);
        return ++n == 2; // the second datagram is lost
    };
    for (uint32_t i = 1; i <= 3; ++i)
    {
        RdmaWorkRequest wr =
            Wr(i == 3 ? RdmaWorkRequest::Op::SendWithImm : RdmaWorkRequest::Op::Send, 100 * i, i);
        wr.imm = i == 3 ? 0xabcd : 0;
        w.a->PostSend(wr);
    }
    Simulator::Run();
    REQUIRE(w.doneA.size() == 3); // every send completes once it has left
    CHECK(n == 3);                // and none was sent again
    REQUIRE(w.doneB.size() == 2);
    CHECK(w.doneB[0].bytes == 100);
    CHECK(w.doneB[1].bytes == 300);
    CHECK(w.doneB[1].imm == 0xabcd);
    CHECK(w.a->GetTimeouts() == 0);
}

TEST_CASE("UD refuses what it cannot do: more than the path MTU, or RDMA")
{
    Wire w;
    w.a->SetAttribute("Service", EnumValue(RdmaQueuePair::UD));
    w.a->PostSend(Wr(RdmaWorkRequest::Op::Send, 1025, 1));
    w.a->PostSend(Wr(RdmaWorkRequest::Op::Write, 10, 2));
    REQUIRE(w.doneA.size() == 2);
    CHECK(w.doneA[0].status == RdmaCompletion::Status::LengthError);
    CHECK(w.doneA[1].status == RdmaCompletion::Status::LengthError);
    CHECK_FALSE(w.a->HasPacket());
}

TEST_CASE("UD drops a datagram whose Q_Key is not the receiver's")
{
    Wire w;
    for (auto qp : {w.a, w.b})
    {
        qp->SetAttribute("Service", EnumValue(RdmaQueuePair::UD));
    }
    w.b->SetAttribute("Qkey", UintegerValue(0x2222));
    w.a->PostSend(Wr(RdmaWorkRequest::Op::Send, 64));
    Simulator::Run();
    CHECK(w.doneB.empty());
    CHECK(w.b->GetDatagramsDropped() == 1);
}
