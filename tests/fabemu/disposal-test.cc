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
    CHECK(port->GetReferenceCount() == 1);
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
    CHECK(c.requester->GetReferenceCount() == 1);
    CHECK(c.responder->GetReferenceCount() == 1);
}
