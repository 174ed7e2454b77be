#include "ns3/bth-header.h"
#include "ns3/ib-extension-headers.h"
#include "ns3/ib-opcode.h"
#include "ns3/packet.h"

#include <doctest/doctest.h>

using namespace ns3;

TEST_CASE("a BTH survives serialisation with every field at its edge values")
{
    BthHeader bth;
    bth.SetOpcode(IbOpcode(IbTransport::RC, IbOperation::WriteLastImm));
    bth.SetSolicitedEvent(true);
    bth.SetPadCount(3);
    bth.SetPkey(0x8001);
    bth.SetFecn(true);
    bth.SetBecn(true);
    bth.SetDestQp(0xabcdef);
    bth.SetAckRequest(true);
    bth.SetPsn(0xfffffe);

    Ptr<Packet> p = Create<Packet>(100);
    p->AddHeader(bth);
    CHECK(p->GetSize() == 112);

    uint8_t raw[12];
    p->CopyData(raw, 12);
    CHECK(raw[0] == 0x09);
    CHECK(raw[1] == 0xb0); // SE | pad 3 | TVer 0
    CHECK(raw[4] == 0xc0); // FECN | BECN
    CHECK(raw[5] == 0xab);
    CHECK(raw[8] == 0x80); // AckReq

    BthHeader back;
    p->RemoveHeader(back);
    CHECK(back.GetOpcode() == 0x09);
    CHECK(back.GetSolicitedEvent());
    CHECK(back.GetPadCount() == 3);
    CHECK(back.GetPkey() == 0x8001);
    CHECK(back.GetFecn());
    CHECK(back.GetBecn());
    CHECK(back.GetDestQp() == 0xabcdef);
    CHECK(back.GetAckRequest());
    CHECK(back.GetPsn() == 0xfffffe);
}

TEST_CASE("PSNs wrap at 24 bits")
{
    BthHeader bth;
    bth.SetPsn(0x1000005);
    CHECK(bth.GetPsn() == 5);
}

TEST_CASE("the pad brings any payload to a multiple of four bytes")
{
    for (uint32_t n = 0; n < 64; ++n)
    {
        CHECK((n + BthPadFor(n)) % 4 == 0);
        CHECK(BthPadFor(n) < 4);
    }
}

TEST_CASE("extension header sizes follow rxe's opcode table")
{
    // Header lengths after the BTH, from rxe_opcode.c (length - RXE_BTH_BYTES).
    struct Case
    {
        uint8_t opcode;
        uint32_t ext;
    };
    const Case cases[] = {
        {0x00, 0},  {0x03, 4}, {0x05, 4}, {0x06, 16}, {0x07, 0}, {0x0a, 16}, {0x0b, 20},
        {0x0c, 16}, {0x0d, 4}, {0x0e, 0}, {0x10, 4},  {0x11, 4}, {0x12, 12}, {0x13, 28},
        {0x14, 28}, {0x17, 4}, {0x24, 0}, {0x2b, 20}, {0x64, 8}, {0x65, 12}, {0x81, 0},
    };
    for (const auto& c : cases)
    {
        CAPTURE(IbOpcodeName(c.opcode));
        auto info = LookupIbOpcode(c.opcode);
        REQUIRE(info != nullptr);
        CHECK(info->ExtensionBytes() == c.ext);
    }
    CHECK(LookupIbOpcode(0x81)->fixedPayload == 16);
}

TEST_CASE("opcodes no transport defines are rejected by name")
{
    for (uint8_t op : {0x15, 0x18, 0x1f, 0x2c, 0x31, 0x60, 0x66, 0xa0, 0xff})
    {
        CAPTURE(op);
        CHECK(LookupIbOpcode(op) == nullptr);
        CHECK(IbOpcodeName(op).find("unknown") != std::string::npos);
    }
    CHECK(IbOpcodeName(0x06) == "RC RDMA WRITE First");
    CHECK(IbOpcodeName(0x64) == "UD SEND Only");
}

TEST_CASE("extension headers round-trip in wire order")
{
    RethHeader reth;
    reth.virtualAddress = 0x0123456789abcdefULL;
    reth.rkey = 0xdeadbeef;
    reth.dmaLength = 65536;
    AethHeader aeth;
    aeth.syndrome =
        static_cast<uint8_t>(AckSyndrome::Nak) | static_cast<uint8_t>(NakCode::PsnSequenceError);
    aeth.msn = 0x123456;
    DethHeader deth;
    deth.qkey = 0x11111111;
    deth.srcQp = 0xfedcba;
    ImmDtHeader imm;
    imm.value = 0xcafef00d;

    Ptr<Packet> p = Create<Packet>();
    p->AddHeader(imm);
    p->AddHeader(deth);
    p->AddHeader(aeth);
    p->AddHeader(reth);
    CHECK(p->GetSize() == 16 + 4 + 8 + 4);

    RethHeader r;
    AethHeader a;
    DethHeader d;
    ImmDtHeader i;
    p->RemoveHeader(r);
    p->RemoveHeader(a);
    p->RemoveHeader(d);
    p->RemoveHeader(i);
    CHECK(r.virtualAddress == reth.virtualAddress);
    CHECK(r.rkey == reth.rkey);
    CHECK(r.dmaLength == 65536);
    CHECK(a.GetKind() == AckSyndrome::Nak);
    CHECK(a.GetValue() == 0);
    CHECK(a.msn == 0x123456);
    CHECK(d.qkey == 0x11111111);
    CHECK(d.srcQp == 0xfedcba);
    CHECK(i.value == 0xcafef00d);
}
