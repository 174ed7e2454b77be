// Fuzz target: the InfiniBand edge. An endpoint's raw Ethernet frame, admitted by the edge
// filter, becomes an IB packet in IbGateway::Encapsulate (RoCEv2: LRH + GRH + its own BTH
// onwards; other IP: IPoIB as a UD SEND), whose headers must read back as written (LRH
// packet length, GRH payload length, ICRC and VCRC). A RoCEv2 frame's ICRC is made right
// first, so that mutations get past the filter. The same bytes are read as an IB packet by
// the header readers the switches and gateways use (LRH, GRH, flow-control packet, ICRC).
#include "emulator/edge/edge-frame-filter.h"
#include "emulator/edge/ib-gateway.h"
#include "fuzz/capture-hosts.h"
#include "fuzz/fuzz-check.h"

#include "ns3/ib-fabric-helper.h"
#include "ns3/ib-headers.h"
#include "ns3/nstime.h"
#include "ns3/roce-icrc.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

using namespace ns3;

namespace
{

/// Two external hosts on one IB switch, each behind a gateway, as the emulator wires them.
struct Edge
{
    IbFabricHelper fabric;
    std::shared_ptr<fabemu::IbTunnel> tunnel = std::make_shared<fabemu::IbTunnel>();
    std::unique_ptr<fabemu::IbGateway> gateway;
    uint16_t farLid{0};

    Edge()
    {
        fabric.SetExternalHosts({0, 1});
        fabric.Install(TopologySpec::Star(2, LinkParams{DataRate("100Gbps"), NanoSeconds(100)}));
        const std::vector<uint16_t> lids{fabric.GetLid(0), fabric.GetLid(1)};
        farLid = lids[1];
        gateway = std::make_unique<fabemu::IbGateway>(fabric.GetPort(0), 0, lids[0], tunnel,
                                                      CaptureHosts(), lids);
    }
};

/// The packet Encapsulate made must read back as what it claims.
void
CheckPacket(const std::vector<uint8_t>& pkt, const ParsedFrame& f, uint8_t sl, uint16_t dlid)
{
    FUZZ_CHECK(pkt.size() >= kIbLrhBytes + 12 + kIbIcrcBytes + kIbVcrcBytes && pkt.size() % 4 == 2,
               "an IB packet of impossible length");
    const LrhHeader lrh = LrhHeader::Read(pkt.data());
    FUZZ_CHECK(lrh.sl == sl && lrh.dlid == dlid, "the LRH's SL or DLID");
    FUZZ_CHECK(size_t(lrh.pktLen) * 4 + kIbVcrcBytes == pkt.size(),
               "the LRH's packet length (11 bits) is not the packet's");
    const size_t icrcAt = pkt.size() - kIbVcrcBytes - kIbIcrcBytes;
    const uint32_t icrc = uint32_t(pkt[icrcAt]) | uint32_t(pkt[icrcAt + 1]) << 8 |
                          uint32_t(pkt[icrcAt + 2]) << 16 | uint32_t(pkt[icrcAt + 3]) << 24;
    FUZZ_CHECK(icrc == IbIcrc(pkt.data(), icrcAt), "the ICRC");
    FUZZ_CHECK((uint16_t(pkt[pkt.size() - 2]) << 8 | pkt[pkt.size() - 1]) ==
                   IbCrc16(pkt.data(), pkt.size() - kIbVcrcBytes),
               "the VCRC");
    if (f.kind == FrameKind::Roce)
    {
        FUZZ_CHECK(lrh.lnh == kIbLnhGlobal, "a RoCEv2 frame's packet without a GRH");
        const GrhHeader grh = GrhHeader::Read(pkt.data() + kIbLrhBytes);
        FUZZ_CHECK(size_t(grh.payLen) == pkt.size() - kIbLrhBytes - kIbGrhBytes - kIbVcrcBytes,
                   "the GRH's payload length (16 bits) is not the packet's");
        FUZZ_CHECK(pkt[kIbLrhBytes + kIbGrhBytes] == f.opcode, "the BTH is not the frame's");
    }
    else
    {
        FUZZ_CHECK(lrh.lnh == kIbLnhLocal, "an IPoIB packet with a GRH");
    }
}

/// A RoCEv2 frame with its ICRC made right (the filter checks it); others as they are.
std::vector<uint8_t>
WithRightIcrc(const uint8_t* data, size_t size)
{
    std::vector<uint8_t> frame(data, data + size);
    const ParsedFrame f = ParseEthernetFrame(frame.data(), frame.size(), false);
    if (f.kind == FrameKind::Roce)
    {
        const uint8_t* ip = frame.data() + f.l3Offset;
        const size_t end = f.ipVersion == 4 ? f.l3Offset + (size_t(ip[2]) << 8 | ip[3])
                                            : f.l3Offset + 40 + (size_t(ip[4]) << 8 | ip[5]);
        if (const auto icrc = ComputeRoceIcrc(ip, end - kIcrcSize - f.l3Offset))
        {
            WriteIcrc(frame.data() + end - kIcrcSize, *icrc);
        }
    }
    return frame;
}

/// The bytes as an IB packet, through the readers (they read fixed-size headers).
void
ReadAsIbPacket(const uint8_t* data, size_t size)
{
    if (size >= kIbFcpBytes)
    {
        FcpHeader fcp;
        if (FcpHeader::Read(data, fcp))
        {
            uint8_t again[kIbFcpBytes];
            fcp.Write(again);
            FcpHeader back;
            FUZZ_CHECK(FcpHeader::Read(again, back) && back.fctbs == fcp.fctbs &&
                           back.fccl == fcp.fccl && back.vl == fcp.vl && back.op == fcp.op,
                       "a flow-control packet does not read back as written");
        }
    }
    if (size >= kIbLrhBytes)
    {
        const LrhHeader lrh = LrhHeader::Read(data);
        uint8_t again[kIbLrhBytes];
        lrh.Write(again);
        const LrhHeader back = LrhHeader::Read(again);
        FUZZ_CHECK(back.vl == lrh.vl && back.sl == lrh.sl && back.lnh == lrh.lnh &&
                       back.dlid == lrh.dlid && back.slid == lrh.slid && back.pktLen == lrh.pktLen,
                   "an LRH does not read back as written");
        if (lrh.lnh == kIbLnhGlobal && size >= kIbLrhBytes + kIbGrhBytes)
        {
            const GrhHeader grh = GrhHeader::Read(data + kIbLrhBytes);
            uint8_t g[kIbGrhBytes];
            grh.Write(g);
            const GrhHeader gb = GrhHeader::Read(g);
            FUZZ_CHECK(gb.tClass == grh.tClass && gb.flowLabel == grh.flowLabel &&
                           gb.payLen == grh.payLen && gb.sgid == grh.sgid && gb.dgid == grh.dgid,
                       "a GRH does not read back as written");
        }
    }
    (void)IbIcrc(data, size);
}

} // namespace

extern "C" int
LLVMFuzzerInitialize(int*, char***)
{
    Time::SetResolution(Time::PS); // as every FabricEmu simulation
    return 0;
}

extern "C" int
LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    static Edge edge;
    static fabemu::EdgeFrameFilter filter(4200); // the largest IP MTU an edge has (IpMtuForPathMtu)
    ReadAsIbPacket(data, size);

    const std::vector<uint8_t> frame = WithRightIcrc(data, size);
    const auto v = filter.Classify(frame.data(), frame.size());
    if (!v.admit || (v.frame.ipVersion != 4 && v.frame.ipVersion != 6))
    {
        return 0; // IbGateway::Send takes IP only
    }
    // As EdgePort: the frame parsed again without the ICRC check, its priority the SL.
    const ParsedFrame f = ParseEthernetFrame(frame.data(), frame.size(), false);
    const uint8_t sl = (f.kind == FrameKind::Roce ? 3 : f.dscp >> 3) & 0xf;
    (void)edge.gateway->LidFor(f);
    const auto pkt = edge.gateway->Encapsulate(frame, f, sl, edge.farLid);
    if (!pkt.empty())
    {
        CheckPacket(pkt, f, sl, edge.farLid);
    }
    return 0;
}
