#include "ns3/rdma-staged-write.h"

#include "ns3/simulator.h"

#include <algorithm>

namespace ns3
{

RdmaStagedWrite::RdmaStagedWrite(const RdmaFabric::Connection& c, uint64_t bytes, End src, End dst,
                                 Callback<void, const RdmaCompletion&> done)
    : m_connection(c),
      m_bytes(bytes),
      m_src(std::move(src)),
      m_dst(std::move(dst)),
      m_done(done)
{
    // The sender's NIC decides how it streams; a receiver-only interface lends its own.
    Ptr<RdmaHostInterface> nic = m_src.nic ? m_src.nic : m_dst.nic;
    NS_ASSERT_MSG(nic, "a staged WRITE needs a host interface on at least one side");
    m_chunk = nic->GetChunkBytes();
    m_window = nic->GetChunkWindow();
    m_chunks = std::max<uint64_t>(1, (m_bytes + m_chunk - 1) / m_chunk);
    // Without immediate data (iWARP) a chunk goes as a SEND into a buffer posted in the
    // destination memory; a reliable connection delivers them in order, so the receiver
    // knows each chunk by its place in the sequence rather than by its immediate.
    m_immediate = c.requester->HasImmediateData();
}

uint64_t
RdmaStagedWrite::ChunkBytes(uint64_t i) const
{
    return std::min(m_chunk, m_bytes - i * m_chunk);
}

void
RdmaStagedWrite::Start()
{
    m_started = Simulator::Now();
    m_connection.requester->SetCompletionCallback(MakeCallback(&RdmaStagedWrite::Sent, this));
    m_connection.responder->SetCompletionCallback(MakeCallback(&RdmaStagedWrite::Arrived, this));
    Pump();
}

void
RdmaStagedWrite::Pump()
{
    while (!m_finished && m_nextFetch < m_chunks && m_inWindow < m_window)
    {
        const uint64_t i = m_nextFetch++;
        ++m_inWindow;
        if (m_src.nic)
        {
            m_src.nic->Fetch(m_src.memory, i * m_chunk, ChunkBytes(i),
                             MakeCallback(&RdmaStagedWrite::Fetched, this).Bind(i));
        }
        else
        {
            Fetched(i); // host memory without an interface: the NIC has it at once
        }
    }
}

void
RdmaStagedWrite::Fetched(uint64_t i)
{
    if (m_finished)
    {
        return;
    }
    RdmaWorkRequest wr;
    wr.op = m_immediate ? RdmaWorkRequest::Op::WriteWithImm : RdmaWorkRequest::Op::Send;
    wr.bytes = ChunkBytes(i);
    wr.wrId = i;
    wr.imm = static_cast<uint32_t>(i);
    m_connection.requester->PostSend(wr);
}

void
RdmaStagedWrite::Sent(const RdmaCompletion& c)
{
    if (m_finished)
    {
        return;
    }
    if (c.status != RdmaCompletion::Status::Success)
    {
        Finish(c.status);
        return;
    }
    ++m_acked;
    --m_inWindow;
    if (!FinishIfDone())
    {
        Pump();
    }
}

void
RdmaStagedWrite::Arrived(const RdmaCompletion& c)
{
    if (m_finished || !c.receive)
    {
        return;
    }
    const uint64_t i = m_immediate ? c.imm : m_arrived;
    ++m_arrived;
    if (m_dst.nic)
    {
        m_dst.nic->Place(m_dst.memory, i * m_chunk, ChunkBytes(i),
                         MakeCallback(&RdmaStagedWrite::Placed, this));
    }
    else
    {
        Placed();
    }
}

void
RdmaStagedWrite::Placed()
{
    if (m_finished)
    {
        return;
    }
    ++m_placed;
    FinishIfDone();
}

bool
RdmaStagedWrite::FinishIfDone()
{
    if (m_acked < m_chunks || m_placed < m_chunks)
    {
        return false;
    }
    Finish(RdmaCompletion::Status::Success);
    return true;
}

void
RdmaStagedWrite::Finish(RdmaCompletion::Status status)
{
    m_finished = true;
    RdmaCompletion done;
    done.op = RdmaWorkRequest::Op::Write;
    done.bytes = m_bytes;
    done.status = status;
    done.posted = m_started;
    done.completed = Simulator::Now();
    m_done(done);
}

} // namespace ns3
