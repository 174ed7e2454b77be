// Fuzz target: the iWARP wire formats on one direction of a TCP stream, as IwarpQp reads
// it: the MPA request or reply first (MpaRequestReply::FrameBytes, Parse), then FPDUs
// (MpaDeframer, with the markers and CRCs the handshake chose) whose ULPDUs are DDP
// segments (DdpSegment::Parse). Without a valid handshake the first byte picks markers
// and CRC, so that the deframer is reached either way. The parsers report faults as values
// (a Terminate cause, an error string): any exception is a finding. Oracles: the deframer
// gives the same ULPDUs whether the stream comes at once or in pieces; what parses
// serializes to something that parses the same; a ULPDU framed again deframes to itself.
#include "fuzz/fuzz-check.h"

#include "ns3/iwarp-wire.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

using namespace ns3;

namespace
{

using Bytes = std::vector<uint8_t>;

/// IwarpQp's default MaxUlpduAccepted.
constexpr uint32_t kMaxUlpdu = 16384;

struct Deframed
{
    std::vector<Bytes> ulpdus;
    std::optional<TerminateCause> error;
};

/// The stream pushed in pieces of the given sizes (cycled), every whole ULPDU taken out
/// after each, as IwarpQp::HandleRead and ProcessFpdus do.
Deframed
Deframe(bool markers, bool crc, const uint8_t* data, size_t size, const std::vector<size_t>& pieces)
{
    MpaDeframer d(markers, crc, kMaxUlpdu);
    Deframed out;
    size_t at = 0;
    for (size_t k = 0; at < size && !out.error; ++k)
    {
        const size_t n = std::min(size - at, pieces[k % pieces.size()]);
        d.Push(data + at, n);
        at += n;
        while (auto ulpdu = d.Next(out.error))
        {
            out.ulpdus.push_back(std::move(*ulpdu));
        }
    }
    return out;
}

bool
SameSegment(const DdpSegment& a, const DdpSegment& b)
{
    return a.opcode == b.opcode && a.tagged == b.tagged && a.last == b.last &&
           a.ddpVersion == b.ddpVersion && a.rdmapVersion == b.rdmapVersion && a.stag == b.stag &&
           a.to == b.to && a.rsvdUlp == b.rsvdUlp && a.qn == b.qn && a.msn == b.msn &&
           a.mo == b.mo && a.sinkStag == b.sinkStag && a.sinkTo == b.sinkTo &&
           a.readSize == b.readSize && a.srcStag == b.srcStag && a.srcTo == b.srcTo &&
           a.cause == b.cause && a.payload == b.payload;
}

void
CheckUlpdu(const Bytes& ulpdu, bool markers, bool crc)
{
    TerminateCause cause;
    const auto seg = DdpSegment::Parse(ulpdu.data(), ulpdu.size(), cause);
    if (!seg)
    {
        FUZZ_CHECK(cause.layer <= TerminateCause::Llp, "a Terminate cause of no layer");
        (void)cause.ToString();
        return;
    }
    FUZZ_CHECK(seg->HeaderBytes() + seg->payload.size() == ulpdu.size(),
               "a segment's header and payload are not its ULPDU");
    Bytes again;
    seg->Serialize(again);
    TerminateCause cause2;
    const auto seg2 = DdpSegment::Parse(again.data(), again.size(), cause2);
    FUZZ_CHECK(seg2 && SameSegment(*seg, *seg2), "a segment does not parse back as serialized");

    // Framed again from a fresh stream, it deframes to itself.
    MpaFramer framer(markers, crc);
    Bytes fpdu;
    framer.Frame(ulpdu, fpdu);
    MpaDeframer d(markers, crc, kMaxUlpdu);
    d.Push(fpdu.data(), fpdu.size());
    std::optional<TerminateCause> error;
    const auto back = d.Next(error);
    FUZZ_CHECK(back && *back == ulpdu && !error && d.Buffered() == 0,
               "a ULPDU framed by MpaFramer does not deframe to itself");
}

} // namespace

extern "C" int
LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    bool markers = size > 0 && (data[0] & 1);
    bool crc = size > 0 && (data[0] & 2);
    size_t start = size > 0 ? 1 : 0;
    const size_t need = MpaRequestReply::FrameBytes(data, size);
    if (need > 0 && size >= need)
    {
        std::string error;
        if (const auto frame = MpaRequestReply::Parse(data, need, error))
        {
            const Bytes again = frame->Serialize();
            const auto back = MpaRequestReply::Parse(again.data(), again.size(), error);
            FUZZ_CHECK(back && back->reply == frame->reply && back->markers == frame->markers &&
                           back->crc == frame->crc && back->reject == frame->reject &&
                           back->revision == frame->revision && back->enhanced == frame->enhanced &&
                           back->ird == frame->ird && back->ord == frame->ord &&
                           back->privateData == frame->privateData,
                       "an MPA request/reply does not parse back as serialized");
            markers = frame->markers;
            crc = frame->crc;
            start = need;
        }
        else
        {
            FUZZ_CHECK(!error.empty(), "an MPA request/reply refused without a reason");
        }
    }

    const uint8_t* stream = data + start;
    const size_t n = size - start;
    const Deframed whole = Deframe(markers, crc, stream, n, {n + 1});
    // Pieces of 1 to 16 bytes, from the stream's own length: the same ULPDUs, the same error.
    const Deframed pieces = Deframe(markers, crc, stream, n, {1 + n % 7, 1 + n % 16, 3});
    FUZZ_CHECK(whole.ulpdus == pieces.ulpdus && whole.error == pieces.error,
               "the deframer's ULPDUs depend on how TCP cut the stream");
    for (const auto& ulpdu : whole.ulpdus)
    {
        CheckUlpdu(ulpdu, markers, crc);
    }
    return 0;
}
