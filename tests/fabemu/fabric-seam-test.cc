// One seam per fabric (issue 15): every fabric through FabricRegistry, and one source
// for each rule that simulation and emulation used to write apart: host addresses,
// the IP MTU for a path MTU, the order of defaults, the InfiniBand peak queue.
#include "emulator/edge/realtime-simulator.h"
#include "emulator/fabemu/emulate.h"
#include "emulator/runner/fabric.h"
#include "emulator/runner/scenario-fabric.h"
#include "emulator/runner/summary.h"

#include "ns3/config.h"
#include "ns3/double.h"
#include "ns3/host-address.h"
#include "ns3/ib-fabric-helper.h"
#include "ns3/ib-port.h"
#include "ns3/ib-recorders.h"
#include "ns3/iwarp-fabric-helper.h"
#include "ns3/rdma-workload.h"
#include "ns3/simulator.h"
#include "ns3/switch-mmu.h"
#include "ns3/uinteger.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <sstream>

using namespace fabemu;
using namespace ns3;

namespace
{

Scenario
StarOf(const std::string& fabric, uint32_t hosts)
{
    Scenario s;
    s.name = "seam";
    s.file = "fabric-seam-test";
    s.fabric.type = fabric;
    s.fabric.cc = fabric == "roce" ? "dcqcn" : fabric == "iwarp" ? "dctcp" : "none";
    s.fabric.pfc = fabric != "iwarp";
    s.topology.builder = "star";
    s.topology.hosts = hosts;
    return s;
}

/// A fabric of \p s built as \p mode would, in a fresh ns-3.
std::unique_ptr<Fabric>
Built(const Scenario& s, RunMode mode)
{
    Simulator::Destroy();
    Config::Reset();
    ApplyFabricDefaults(s, mode);
    auto fabric = FabricRegistry::Create(s.fabric.type);
    fabric->Build(s, mode);
    return fabric;
}

uint64_t
SwitchMmuKmax()
{
    UintegerValue v;
    CreateObject<SwitchMmu>()->GetAttribute("Kmax", v);
    return v.Get();
}

} // namespace

TEST_CASE("every fabric is made by name through the registry, and an unknown name is refused")
{
    CHECK(FabricRegistry::Names() == std::vector<std::string>{"roce", "infiniband", "iwarp"});
    for (const auto& name : FabricRegistry::Names())
    {
        CHECK(FabricRegistry::Create(name) != nullptr);
    }
    CHECK_THROWS_AS(FabricRegistry::Create("nvlink"), std::invalid_argument);
}

TEST_CASE("host hN has one IPv4 address and one MAC, from one rule, past 255 hosts too")
{
    CHECK(HostIpv4(0) == 0x0a000001);
    CHECK(HostIpv4Text(0) == "10.0.0.1");
    CHECK(HostIpv4Text(254) == "10.0.0.255");
    CHECK(HostIpv4Text(255) == "10.0.1.0");
    CHECK(HostMacText(0) == "52:54:00:00:00:01");
    CHECK(HostMacText(254) == "52:54:00:00:00:ff");
    // The old one-byte rule of fabemu vm gave h255 "52:54:00:00:00:100", h299 "...:12c".
    CHECK(HostMacText(255) == "52:54:00:00:01:00");
    CHECK(HostMacText(299) == "52:54:00:00:01:2c");
    const auto mac = HostMac(299);
    CHECK(mac == std::array<uint8_t, 6>{0x52, 0x54, 0, 0, 0x01, 0x2c});
}

TEST_CASE("the RoCE and InfiniBand fabrics give their hosts the addresses that {hN} and the "
          "endpoints use")
{
    for (const std::string type : {"roce", "infiniband"})
    {
        CAPTURE(type);
        const auto fabric = Built(StarOf(type, 3), RunMode::Simulation);
        for (uint32_t h = 0; h < 3; ++h)
        {
            CHECK(fabric->Rdma().GetHostIpv4(h) == HostIpv4(h));
        }
        fabric->AttachRecorders(StarOf(type, 3), {{}, MicroSeconds(10), RunMode::Simulation});
    }
    Simulator::Destroy();
}

TEST_CASE("iWARP's IP MTU for a path MTU is the one the emulated endpoints get, 4200 at 4096")
{
    CHECK(IpMtuForPathMtu(1024) == 1500);
    CHECK(IpMtuForPathMtu(2048) == 4200);
    CHECK(IpMtuForPathMtu(4096) == 4200); // simulation said 9000, emulation 4200
    for (uint32_t mtu : {256u, 512u, 1024u, 2048u, 4096u})
    {
        CAPTURE(mtu);
        Scenario s = StarOf("iwarp", 2);
        s.fabric.mtu = mtu;
        const auto fabric = Built(s, RunMode::Simulation);
        auto& iwarp = dynamic_cast<IwarpFabricHelper&>(fabric->Rdma());
        CHECK(iwarp.GetMss() + 52 == IpMtuForPathMtu(mtu)); // the links' IP MTU
    }
    Simulator::Destroy();
}

TEST_CASE(
    "fabric.set comes last in emulation too: a user's SwitchMmu::Kmax reaches the iWARP model")
{
    Scenario s = StarOf("iwarp", 2);
    s.fabric.kmin = 30'000;
    Config::Reset();
    ApplyFabricDefaults(s, RunMode::Emulation);
    CHECK(SwitchMmuKmax() == 30'000); // emulation's own default: every packet above K marked

    s.fabric.set.push_back({"ns3::SwitchMmu::Kmax", "123456", {}});
    s.fabric.set.push_back({"ns3::SwitchMmu::Pmax", "0.25", {}});
    Config::Reset();
    ApplyFabricDefaults(s, RunMode::Emulation);
    CHECK(SwitchMmuKmax() == 123'456);
    DoubleValue pmax;
    CreateObject<SwitchMmu>()->GetAttribute("Pmax", pmax);
    CHECK(pmax.Get() == doctest::Approx(0.25));
    Config::Reset();
}

TEST_CASE("fabric.set comes last in emulation too: a user's IbPort::FcpInterval beats the "
          "real-time default")
{
    Scenario s = StarOf("infiniband", 2);
    auto interval = [] {
        TimeValue v;
        CreateObject<IbPort>()->GetAttribute("FcpInterval", v);
        return v.Get();
    };
    Config::Reset();
    ApplyFabricDefaults(s, RunMode::Emulation);
    CHECK(interval() == MilliSeconds(1));
    s.fabric.set.push_back({"ns3::IbPort::FcpInterval", "5us", {}});
    Config::Reset();
    ApplyFabricDefaults(s, RunMode::Emulation);
    CHECK(interval() == MicroSeconds(5));
    Config::Reset();
}

TEST_CASE("in an emulation the queue samplers are the real-time simulator's observers, which "
          "never wake its thread; in a simulation their events are as before")
{
    CHECK(RecordSetup{{}, MicroSeconds(1), RunMode::Emulation}.SampleContext() ==
          FabemuRealtimeSimulatorImpl::kObserverContext);
    CHECK(RecordSetup{{}, MicroSeconds(1), RunMode::Simulation}.SampleContext() ==
          Simulator::NO_CONTEXT);
}

TEST_CASE("InfiniBand's peak queue is one figure in simulation and emulation: the deepest VL input "
          "buffer")
{
    std::map<RunMode, uint64_t> peak;
    for (const RunMode mode : {RunMode::Simulation, RunMode::Emulation})
    {
        Scenario s = StarOf("infiniband", 4);
        const auto fabric = Built(s, mode);
        fabric->AttachRecorders(s, {{}, MicroSeconds(1), mode});
        // What emulation used to report: the queue sampler's peak on its grid (10 us by default).
        std::ostringstream sampledRows;
        IbQueueSampler sampled(dynamic_cast<IbFabricHelper&>(fabric->Rdma()), sampledRows,
                               MicroSeconds(10));
        FlowRunner runner(fabric->Rdma());
        runner.Add(workload::Incast(0, {1, 2, 3}, 20000, Time(0))); // a burst: its peak is brief
        runner.SetAllDoneCallback(MakeCallback(static_cast<void (*)()>(&Simulator::Stop)));
        runner.Start();
        Simulator::Stop(MilliSeconds(5));
        Simulator::Run();
        CHECK(runner.Records().size() == 3);
        uint64_t deepest = 0;
        for (const auto& p : dynamic_cast<IbFabricHelper&>(fabric->Rdma()).GetPorts())
        {
            for (uint8_t vl = 0; vl < p->GetNumDataVls(); ++vl)
            {
                deepest =
                    std::max<uint64_t>(deepest, uint64_t(p->GetPeakBlocks(vl)) * kIbCreditBytes);
            }
        }
        peak[mode] = fabric->Totals().peakQueueBytes;
        MESSAGE("deepest VL input buffer " << deepest << " B; the old emulation's sampled peak "
                                           << sampled.Peak() << " B");
        CHECK(peak[mode] == deepest);
        CHECK(fabric->Live()["peak_queue_bytes"].get<uint64_t>() == deepest);
        fabric->WriteRecords();
        Simulator::Destroy();
    }
    CHECK(peak[RunMode::Simulation] > 0);
    CHECK(peak[RunMode::Emulation] ==
          peak[RunMode::Simulation]); // the old sampled figure was 0 here
}

TEST_CASE("an emulation's summary has every totals key a simulation's has, from the same builder")
{
    for (const auto& type : FabricRegistry::Names())
    {
        CAPTURE(type);
        Scenario s = StarOf(type, 2);
        const auto fabric = Built(s, RunMode::Simulation);
        const FabricTotals totals = fabric->Totals();
        const nlohmann::json sim = RunSummaryJson(0.001, {}, totals);
        EmulateResult r;
        static_cast<FabricTotals&>(r) = totals;
        r.edgeCnpsSent = 3;
        r.bytesToEndpoints = 1000;
        const nlohmann::json em = EmulationSummaryJson(r);
        for (const auto& [key, value] : sim["totals"].items())
        {
            CAPTURE(key);
            CHECK(em["totals"].contains(key));
        }
        CHECK(em["totals"]["cnps"].get<uint64_t>() == totals.cnps + 3);
        CHECK(em["totals"]["bytes_delivered"].get<uint64_t>() == 1000);
        CHECK(em.contains("edge"));
        CHECK(em["switch_drops"] == sim["switch_drops"]);
        Simulator::Destroy();
    }
}
