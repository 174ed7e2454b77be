// What the fabric helpers build and no Node owns (InfiniBand ports, switches and HCAs,
// PCIe ports, links and endpoints, iWARP's queue pairs) holds no reference cycle after
// Simulator::Destroy: a Ptr kept by the test is the last one left, so the objects are
// freed with it. Before DisposeAtDestroy these were cycles that LeakSanitizer reported.
#include "ns3/dispose-at-destroy.h"
#include "ns3/ib-fabric-helper.h"
#include "ns3/iwarp-fabric-helper.h"
#include "ns3/pcie-helper.h"
#include "ns3/simulator.h"
#include "ns3/topology-spec.h"

#include <doctest/doctest.h>

using namespace ns3;

namespace
{

/// Records whether it was disposed.
class Watched : public Object
{
  public:
    bool disposed{false};

  private:
    void DoDispose() override
    {
        disposed = true;
        Object::DoDispose();
    }
};

const LinkParams kLink{DataRate("100Gbps"), MicroSeconds(1)};

} // namespace

TEST_CASE("DisposeAtDestroy disposes at Simulator::Destroy, not before")
{
    Ptr<Watched> w = CreateObject<Watched>();
    DisposeAtDestroy(w);
    Simulator::Stop(MicroSeconds(1));
    Simulator::Run();
    CHECK_FALSE(w->disposed);
    Simulator::Destroy();
    CHECK(w->disposed);
    CHECK(w->GetReferenceCount() == 1); // the destroy event let go of it
}

TEST_CASE("an InfiniBand fabric's ports, switches and HCAs are ours alone after Destroy")
{
    Ptr<IbPort> port;
    Ptr<IbSwitch> sw;
    Ptr<IbHca> hca;
    {
        IbFabricHelper fabric;
        fabric.Install(TopologySpec::Dumbbell(2, kLink, kLink));
        fabric.Connect(0, 1);
        port = fabric.GetPort(0);
        sw = fabric.GetSwitches().at(0);
        hca = fabric.GetHca(0);
        Simulator::Stop(MicroSeconds(50));
        Simulator::Run();
        // The port's peer, its switch or HCA and the helper hold it too.
        CHECK(port->GetReferenceCount() > 1);
    }
    Simulator::Destroy();
    CHECK(port->GetReferenceCount() == 1); // its peer let go of it
    // The switch and the HCA were disposed once, and nothing holds them either.
    CHECK(sw->GetReferenceCount() == 1);
    CHECK(hca->GetReferenceCount() == 1);
}

TEST_CASE("a PCIe pair's link, ports and endpoints are ours alone after Destroy")
{
    PcieHelper pcie;
    PcieHelper::Pair pair = pcie.Install();
    REQUIRE(pair.Ok());
    Ptr<PciePort> port = pair.a->GetPort();
    CHECK(port->GetReferenceCount() > 1); // the endpoint, the link, its peer
    Simulator::Destroy();
    CHECK(port->GetReferenceCount() == 1);
    CHECK(pair.a->GetReferenceCount() == 1);
    CHECK(pair.link->GetReferenceCount() == 1);
}

TEST_CASE("a two-socket PCIe tree's root complexes, socket link and endpoints are ours alone "
          "after Destroy")
{
    PcieTreeSpec spec;
    spec.sockets = 2;
    PcieTreeSpec::Switch sw;
    sw.devices.resize(2);
    sw.devices[0].kind = PcieDeviceKind::Gpu;
    sw.devices[1].kind = PcieDeviceKind::Nic;
    spec.switches.push_back(sw);
    spec.rootDevices.resize(1);
    spec.rootDevices[0].kind = PcieDeviceKind::Gpu;
    spec.rootDevices[0].socket = 1;
    Ptr<PcieRootComplex> rc;
    Ptr<PcieSocketLink> upi;
    std::vector<Ptr<PcieEndpoint>> endpoints;
    std::vector<Ptr<PciePort>> ports;
    {
        PcieHelper pcie;
        auto built = pcie.InstallTree(spec);
        REQUIRE(built.Ok());
        rc = built.tree->GetRootComplex(1);
        upi = built.tree->GetSocketLink();
        for (const auto& name : built.tree->GetEndpointNames())
        {
            endpoints.push_back(built.tree->GetEndpoint(name));
            ports.push_back(endpoints.back()->GetPort()); // disposed, the endpoint forgets it
        }
    }
    REQUIRE(endpoints.size() == 3);
    CHECK(rc->GetReferenceCount() > 1); // registered: held until Destroy disposes it
    Simulator::Destroy();
    CHECK(rc->GetReferenceCount() == 1);
    CHECK(upi->GetReferenceCount() == 1);
    for (size_t i = 0; i < endpoints.size(); ++i)
    {
        CHECK(endpoints[i]->GetReferenceCount() == 1);
        CHECK(ports[i]->GetReferenceCount() == 1); // its link and peer let go of it
    }
}

TEST_CASE("iWARP's queue pairs are ours alone after the connection and Destroy")
{
    RdmaFabric::Connection c;
    {
        IwarpFabricHelper fabric;
        fabric.Install(TopologySpec::Pair(kLink));
        c = fabric.Connect(0, 1);
        Simulator::Stop(MilliSeconds(1)); // accepted: the listener forked a socket
        Simulator::Run();
    }
    Simulator::Destroy();
    // The listener's accept callback, copied into the socket it forked, held the
    // responder (and the listener itself).
    CHECK(c.responder->GetReferenceCount() == 1);
    CHECK(c.requester->GetReferenceCount() == 1);
}
