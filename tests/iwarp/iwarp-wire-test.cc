// The iWARP wire formats against RFC 3720's CRC32c vectors and against the
// bytes the Linux siw driver really sent (tests/data/siw-rping-iwarp.pcap):
// MPA request/reply, FPDUs of each RDMAP opcode, markers, and the Terminate
// causes a malformed FPDU earns.
#include "../pcap-frames.h"

#include "ns3/iwarp-wire.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <numeric>

using namespace ns3;

namespace
{

/// TCP payloads of the capture's frames (Ethernet, IPv4, TCP), frame number (1-based) as index.
std::vector<std::vector<uint8_t>>
TcpPayloads(const std::string& file)
{
    std::vector<std::vector<uint8_t>> out{{}};
    for (const auto& f : ReadPcapFrames(TestData(file)))
    {
        std::vector<uint8_t> payload;
        if (f.size() > 34 && f[12] == 0x08 && f[13] == 0x00 && f[23] == 6)
        {
            const size_t ip = 14;
            const size_t tcp = ip + (f[ip] & 0x0f) * 4;
            const size_t data = tcp + (f[tcp + 12] >> 4) * 4;
            const size_t total = ip + (size_t(f[ip + 2]) << 8 | f[ip + 3]);
            if (data < total && total <= f.size())
            {
                payload.assign(f.begin() + data, f.begin() + total);
            }
        }
        out.push_back(payload);
    }
    return out;
}

std::vector<uint8_t>
Fpdu(const DdpSegment& s, bool markers = false, bool crc = false)
{
    std::vector<uint8_t> ulpdu;
    s.Serialize(ulpdu);
    std::vector<uint8_t> out;
    MpaFramer framer(markers, crc);
    framer.Frame(ulpdu, out);
    return out;
}

std::vector<uint8_t>
Slice(const std::vector<uint8_t>& v, size_t from, size_t n)
{
    return {v.begin() + from, v.begin() + from + n};
}

} // namespace

TEST_CASE("CRC32c: RFC 3720 appendix B.4 vectors, octets in the order they are sent")
{
    auto wire = [](const std::vector<uint8_t>& d) {
        const uint32_t c = Crc32c(d.data(), d.size());
        return std::vector<uint8_t>{uint8_t(c), uint8_t(c >> 8), uint8_t(c >> 16),
                                    uint8_t(c >> 24)};
    };
    std::vector<uint8_t> v(32, 0x00);
    CHECK(wire(v) == std::vector<uint8_t>{0xaa, 0x36, 0x91, 0x8a});
    std::fill(v.begin(), v.end(), 0xff);
    CHECK(wire(v) == std::vector<uint8_t>{0x43, 0xab, 0xa8, 0x62});
    std::iota(v.begin(), v.end(), 0);
    CHECK(wire(v) == std::vector<uint8_t>{0x4e, 0x79, 0xdd, 0x46});
    std::reverse(v.begin(), v.end());
    CHECK(wire(v) == std::vector<uint8_t>{0x5c, 0xdb, 0x3f, 0x11});
    const std::string check = "123456789";
    CHECK(Crc32c(reinterpret_cast<const uint8_t*>(check.data()), check.size()) == 0xe3069283u);
    // A running register in pieces (an FPDU's CRC over its header, payload and pad).
    std::vector<uint8_t> big(3000);
    std::iota(big.begin(), big.end(), 7);
    for (const size_t cut : {0, 1, 13, 64, 1459, 2999, 3000})
    {
        CAPTURE(cut);
        const uint32_t reg = Crc32cUpdate(0xffffffffu, big.data(), cut);
        CHECK(~Crc32cUpdate(reg, big.data() + cut, big.size() - cut) ==
              Crc32c(big.data(), big.size()));
    }
}

TEST_CASE("MPA request and reply are byte for byte what siw sent (revision 2, IRD/ORD 1/1)")
{
    const auto tcp = TcpPayloads("siw-rping-iwarp.pcap");
    MpaRequestReply req;
    req.markers = false;
    req.crc = false;
    req.revision = 2;
    req.enhanced = true;
    req.ird = 1;
    req.ord = 1;
    CHECK(req.Serialize() == tcp[20]);
    req.reply = true;
    CHECK(req.Serialize() == tcp[22]);

    std::string error;
    auto parsed = MpaRequestReply::Parse(tcp[22].data(), tcp[22].size(), error);
    REQUIRE(parsed);
    CHECK(parsed->reply);
    CHECK(parsed->revision == 2);
    CHECK(parsed->ird == 1);
    CHECK(parsed->ord == 1);
    CHECK(MpaRequestReply::FrameBytes(tcp[20].data(), tcp[20].size()) == tcp[20].size());

    std::vector<uint8_t> bad = tcp[20];
    bad[4] = 'X';
    CHECK_FALSE(MpaRequestReply::Parse(bad.data(), bad.size(), error));
    CHECK(error.find("key") != std::string::npos);
    bad = tcp[20];
    bad[17] = 3;
    CHECK_FALSE(MpaRequestReply::Parse(bad.data(), bad.size(), error));
    CHECK(error.find("revision 3") != std::string::npos);
}

TEST_CASE("FPDUs of Send, Read Request, Read Response and Write are byte for byte what siw sent")
{
    const auto tcp = TcpPayloads("siw-rping-iwarp.pcap");
    // Frame 24: Send, MSN 1, 16 bytes (rping's buffer advertisement).
    DdpSegment send;
    send.opcode = uint8_t(RdmapOpcode::Send);
    send.qn = kQnSend;
    send.msn = 1;
    send.payload = Slice(tcp[24], 20, 16);
    CHECK(Fpdu(send) == tcp[24]);

    // Frame 25: Read Request, QN 1, MSN 1, 256 bytes.
    DdpSegment rr;
    rr.opcode = uint8_t(RdmapOpcode::ReadRequest);
    rr.qn = kQnReadRequest;
    rr.msn = 1;
    rr.sinkStag = 0x23c22f00;
    rr.sinkTo = 0x000055c745f48bf0;
    rr.readSize = 256;
    rr.srcStag = 0xc49ac600;
    rr.srcTo = 0x0000558eaa4e47d0;
    CHECK(Fpdu(rr) == tcp[25]);
    CHECK(rr.HeaderBytes() + 2 == 48); // "Read Request: 48 bytes" with the MPA length

    // Frame 26: Read Response, tagged, 256 bytes into the sink STag/TO of the request.
    DdpSegment resp;
    resp.opcode = uint8_t(RdmapOpcode::ReadResponse);
    resp.tagged = true;
    resp.stag = rr.sinkStag;
    resp.to = rr.sinkTo;
    resp.payload = Slice(tcp[26], 16, 256);
    CHECK(Fpdu(resp) == tcp[26]);

    // Frame 29: RDMA Write of 256 bytes.
    DdpSegment write;
    write.opcode = uint8_t(RdmapOpcode::Write);
    write.tagged = true;
    write.stag = 0x5f9e4600;
    write.to = 0x0000558eaa4e4680;
    write.payload = Slice(tcp[29], 16, 256);
    CHECK(Fpdu(write) == tcp[29]);

    // And the parser reads back what siw sent.
    TerminateCause cause;
    auto got = DdpSegment::Parse(tcp[25].data() + 2, tcp[25].size() - 6, cause);
    REQUIRE(got);
    CHECK(got->opcode == uint8_t(RdmapOpcode::ReadRequest));
    CHECK(got->readSize == 256);
    CHECK(got->srcTo == rr.srcTo);
}

TEST_CASE("Send variants and Terminate: control bytes and header sizes of RFC 5040")
{
    for (uint8_t op : {uint8_t(RdmapOpcode::SendInvalidate), uint8_t(RdmapOpcode::SendSe),
                       uint8_t(RdmapOpcode::SendSeInvalidate)})
    {
        DdpSegment s;
        s.opcode = op;
        s.rsvdUlp = 0x1234;
        s.msn = 7;
        std::vector<uint8_t> b;
        s.Serialize(b);
        CHECK(b.size() == kDdpUntaggedHeaderBytes);
        CHECK(b[0] == 0x41);
        CHECK(b[1] == (0x40 | op));
        CHECK(b[5] == 0x34); // invalidate STag in the reserved-for-ULP field
    }
    DdpSegment t;
    t.opcode = uint8_t(RdmapOpcode::Terminate);
    t.qn = kQnTerminate;
    t.cause = {TerminateCause::Llp, 0, terminate::kMpaCrc};
    std::vector<uint8_t> b;
    t.Serialize(b);
    REQUIRE(b.size() == kDdpUntaggedHeaderBytes + kTerminateHeaderBytes);
    CHECK(b[1] == 0x47);
    CHECK(b[18] == 0x20); // layer 2 (LLP), error type 0
    CHECK(b[19] == 0x02); // CRC error
    TerminateCause c;
    auto back = DdpSegment::Parse(b.data(), b.size(), c);
    REQUIRE(back);
    CHECK(back->cause == t.cause);
}

TEST_CASE(
    "markers every 512 octets point back to their FPDU; the deframer removes them in any chunking")
{
    MpaFramer framer(true, true);
    std::vector<uint8_t> stream;
    std::vector<std::vector<uint8_t>> sent;
    for (uint32_t i = 0; i < 12; ++i)
    {
        DdpSegment w;
        w.opcode = uint8_t(RdmapOpcode::Write);
        w.tagged = true;
        w.stag = 0x100;
        w.to = i * 1000;
        w.payload.resize(200 + i * 97);
        for (size_t k = 0; k < w.payload.size(); ++k)
        {
            w.payload[k] = uint8_t(k * 7 + i);
        }
        std::vector<uint8_t> ulpdu;
        w.Serialize(ulpdu);
        sent.push_back(ulpdu);
        const size_t before = stream.size();
        framer.Frame(ulpdu, stream);
        CHECK((stream.size() - before) % 4 == 0);
        CHECK(stream.size() - before <= framer.MaxUlpdu(1448) + 6 + 4 * 3 + 3);
    }
    // Every 512th octet starts a marker: 16 reserved bits, then FPDUPTR.
    size_t markers = 0;
    for (size_t m = 0; m + 4 <= stream.size(); m += kMpaMarkerSpacing)
    {
        CHECK(stream[m] == 0);
        CHECK(stream[m + 1] == 0);
        const uint16_t ptr = uint16_t(stream[m + 2] << 8 | stream[m + 3]);
        CHECK(ptr < 1500);
        ++markers;
    }
    CHECK(markers == (stream.size() + kMpaMarkerSpacing - 1) / kMpaMarkerSpacing);

    for (size_t chunk : {size_t(1), size_t(7), size_t(512), size_t(1448), stream.size()})
    {
        MpaDeframer d(true, true, 16384);
        std::vector<std::vector<uint8_t>> got;
        for (size_t at = 0; at < stream.size(); at += chunk)
        {
            d.Push(stream.data() + at, std::min(chunk, stream.size() - at));
            std::optional<TerminateCause> err;
            while (auto u = d.Next(err))
            {
                got.push_back(*u);
            }
            REQUIRE_FALSE(err);
        }
        CHECK(got == sent);
        CHECK(d.Buffered() == 0);
    }
}

TEST_CASE("a malformed FPDU earns the Terminate cause RFC 5040/5041/5044 prescribe")
{
    DdpSegment w;
    w.opcode = uint8_t(RdmapOpcode::Write);
    w.tagged = true;
    w.payload.assign(100, 0x5a);
    const auto good = Fpdu(w, false, true);
    auto deframe = [](const std::vector<uint8_t>& bytes) {
        MpaDeframer d(false, true, 16384);
        d.Push(bytes.data(), bytes.size());
        std::optional<TerminateCause> err;
        auto u = d.Next(err);
        return std::make_pair(u, err);
    };
    {
        auto [u, err] = deframe(good);
        CHECK(u);
        CHECK_FALSE(err);
    }
    SUBCASE("bad CRC: MPA (layer 2), type 0, code 2")
    {
        auto bad = good;
        bad[40] ^= 0x01;
        auto [u, err] = deframe(bad);
        CHECK_FALSE(u);
        REQUIRE(err);
        CHECK(*err == TerminateCause{TerminateCause::Llp, 0, terminate::kMpaCrc});
    }
    SUBCASE("a ULPDU length shorter than any DDP header: MPA code 3")
    {
        auto bad = good;
        bad[0] = 0;
        bad[1] = 4;
        auto [u, err] = deframe(bad);
        REQUIRE(err);
        CHECK(*err == TerminateCause{TerminateCause::Llp, 0, terminate::kMpaFpduStart});
    }
    SUBCASE("a ULPDU length beyond what the receiver accepts: MPA code 3")
    {
        auto bad = good;
        bad[0] = 0xff;
        bad[1] = 0xff;
        auto [u, err] = deframe(bad);
        REQUIRE(err);
        CHECK(*err == TerminateCause{TerminateCause::Llp, 0, terminate::kMpaFpduStart});
    }
    SUBCASE("a marker that does not point to its FPDU: MPA code 3")
    {
        MpaFramer framer(true, true);
        std::vector<uint8_t> ulpdu;
        w.Serialize(ulpdu);
        std::vector<uint8_t> bytes;
        framer.Frame(ulpdu, bytes);
        bytes[3] = 8; // the marker at octet 0 claims its FPDU began 8 octets earlier
        MpaDeframer d(true, true, 16384);
        d.Push(bytes.data(), bytes.size());
        std::optional<TerminateCause> err;
        CHECK_FALSE(d.Next(err));
        REQUIRE(err);
        CHECK(*err == TerminateCause{TerminateCause::Llp, 0, terminate::kMpaFpduStart});
    }
    SUBCASE("unknown RDMAP opcode: RDMAP, remote operation error, invalid opcode")
    {
        std::vector<uint8_t> u;
        w.Serialize(u);
        u[1] = 0x4c; // opcode 12 (the atomics of RFC 7306 are not modelled either)
        TerminateCause c;
        CHECK_FALSE(DdpSegment::Parse(u.data(), u.size(), c));
        CHECK(c == TerminateCause{TerminateCause::Rdmap, terminate::kRdmapRemoteOperation,
                                  terminate::kRdmapOpcode});
    }
    SUBCASE("DDP version 2: DDP tagged-buffer error, invalid version")
    {
        std::vector<uint8_t> u;
        w.Serialize(u);
        u[0] = 0xc2;
        TerminateCause c;
        CHECK_FALSE(DdpSegment::Parse(u.data(), u.size(), c));
        CHECK(c == TerminateCause{TerminateCause::Ddp, terminate::kDdpTagged,
                                  terminate::kDdpTaggedVersion});
    }
    SUBCASE("a Send on the Read Request queue: DDP untagged-buffer error, invalid QN")
    {
        DdpSegment s;
        s.opcode = uint8_t(RdmapOpcode::Send);
        s.qn = kQnReadRequest;
        std::vector<uint8_t> u;
        s.Serialize(u);
        TerminateCause c;
        CHECK_FALSE(DdpSegment::Parse(u.data(), u.size(), c));
        CHECK(c == TerminateCause{TerminateCause::Ddp, terminate::kDdpUntagged,
                                  terminate::kDdpUntaggedInvalidQn});
    }
}
