#include "ns3/qp-table.h"
#include "ns3/rdma-queue-pair.h"

#include <doctest/doctest.h>

#include <vector>

using namespace ns3;

namespace
{

struct Conn
{
    Ptr<RdmaQueuePair> qp;
    int tag{0};
};

Ptr<RdmaQueuePair>
Qp(uint32_t qpn)
{
    Ptr<RdmaQueuePair> qp = CreateObject<RdmaQueuePair>();
    qp->SetQpn(qpn);
    return qp;
}

std::vector<int>
Tags(QpTable<Conn>& table)
{
    std::vector<int> tags;
    for (auto& c : table)
    {
        tags.push_back(c.tag);
    }
    return tags;
}

} // namespace

TEST_CASE("a QpTable keeps its connections in QPN order, finds them, and goes round from a QPN")
{
    QpTable<Conn> table(17);
    CHECK(table.NextQpn() == 17);
    table.Add(Conn{Qp(19), 1});
    table.Add(Conn{Qp(17), 2});
    table.Add(Conn{Qp(18), 3});
    CHECK(Tags(table) == std::vector<int>{2, 3, 1});
    REQUIRE(table.Find(18) != nullptr);
    CHECK(table.Find(18)->tag == 3);
    CHECK(table.Find(20) == nullptr);
    CHECK(table.Find(16) == nullptr);
    CHECK(table.At(19).tag == 1);
    // The round robin goes on from a QPN: at or after it, else from the first.
    CHECK(table.IndexFrom(18) == 1);
    CHECK(table.IndexFrom(20) == 0);
    CHECK(table.IndexFrom(0) == 0);
    const auto gone = table.Remove(18);
    REQUIRE(gone.has_value());
    CHECK(gone->tag == 3);
    CHECK(gone->qp->GetQpn() == 18);
    CHECK(!table.Remove(18).has_value());
    CHECK(Tags(table) == std::vector<int>{2, 1});
    CHECK(table.IndexFrom(18) == 1);
    CHECK(table.size() == 2);
}

TEST_CASE("a QpTable searches by the QPN each connection joined with, not by asking its queue pair")
{
    // The search reads the table's entries alone (a QP's state is far from the NIC's in
    // memory). A QP's number is fixed once it joins a table; were it changed behind the
    // table's back, the table would still answer by the number it was given.
    QpTable<Conn> table(17);
    Ptr<RdmaQueuePair> a = Qp(17);
    table.Add(Conn{a, 1});
    table.Add(Conn{Qp(18), 2});
    a->SetQpn(99);
    REQUIRE(table.Find(17) != nullptr);
    CHECK(table.Find(17)->tag == 1);
    CHECK(table.Find(99) == nullptr);
}
