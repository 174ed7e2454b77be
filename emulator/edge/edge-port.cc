#include "emulator/edge/edge-port.h"

#include "emulator/edge/frame-buffers.h"
#include "emulator/edge/realtime-simulator.h"

#include "ns3/nstime.h"
#include "ns3/simulator.h"

#include <cstring>

namespace fabemu
{

using namespace ns3;

uint8_t
EdgePriority(const ParsedFrame& f, uint8_t rocePriority)
{
    switch (f.kind)
    {
    case FrameKind::Roce:
        return rocePriority;
    case FrameKind::Ip:
        return static_cast<uint8_t>(f.dscp >> 3);
    default:
        return 0;
    }
}

EdgePort::EdgePort(std::string name, std::unique_ptr<EdgeUplink> uplink,
                   std::unique_ptr<TapPort> tap, uint32_t mtu, uint8_t rocePriority,
                   std::vector<EndpointAddress> directory)
    : m_name(std::move(name)),
      m_uplink(std::move(uplink)),
      m_tap(std::move(tap)),
      m_rocePriority(rocePriority),
      m_neighbours(std::move(directory)),
      m_context(m_uplink->Context()),
      m_filter(mtu)
{
    m_uplink->SetDeliver([this](std::vector<uint8_t> frame) { WriteToEndpoint(std::move(frame)); });
}

EdgePort::~EdgePort()
{
    Stop();
}

void
EdgePort::Start()
{
    // The reader begins on the simulation thread once Run is under way: frames it
    // schedules from its own thread earlier could be lost by the real-time
    // simulator while Run starts (seen: 1 frame in 600, now and then). Until
    // then frames wait in the socket, which is open already.
    Simulator::ScheduleWithContext(m_context, Time(0), &EdgePort::StartReading, this);
}

void
EdgePort::StartReading()
{
    auto handler = [this](uint8_t* frame, size_t len, TapPort::Clock::time_point arrived) {
        OnTapFrame(frame, len, arrived);
    };
    if (auto sim = DynamicCast<FabemuRealtimeSimulatorImpl>(Simulator::GetImplementation()))
    {
        // The simulation thread reads the tap itself: no hand-over per frame.
        m_watching = sim;
        // Each frame runs the model as it is read: a few batches a turn, so that a
        // fast sender cannot keep the events due (and MaxBacklog's check) waiting.
        sim->Watch(m_tap->Fd(),
                   [this, handler] { m_tap->ReadAvailable(handler, kReadBatchesPerTurn); });
        // And writes what a burst of events produced with one system call.
        m_idleHook = sim->AddIdleHook([this] { FlushQueued(); });
        return;
    }
    m_tap->Start(handler);
}

void
EdgePort::Stop()
{
    m_tap->Stop();
    if (m_watching)
    {
        m_watching->Unwatch(m_tap->Fd());
        m_watching->RemoveIdleHook(m_idleHook);
        m_watching = nullptr;
        FlushQueued(); // what the last burst produced
    }
    m_retry.Cancel();
    m_uplink->Stop();
    m_counters.heldAtStop = m_held.size();
}

void
EdgePort::OnTapFrame(uint8_t* frame, size_t len, TapPort::Clock::time_point arrived)
{
    ParsedFrame f;
    {
        std::lock_guard<std::mutex> lock(m_filterMutex);
        auto verdict = m_filter.Classify(frame, len);
        if (!verdict.admit)
        {
            return;
        }
        f = verdict.frame;
    }
    if (m_watching)
    {
        // On the simulation thread, at the time the frame arrived: straight in.
        m_watching->RunInContext(m_context, arrived, [&] { Take(frame, len, f); });
        return;
    }
    auto copy = std::make_shared<std::vector<uint8_t>>(frame, frame + len);
    // Thread-safe in the real-time simulator: runs "now" on the simulation thread.
    Simulator::ScheduleWithContext(m_context, Time(0), &EdgePort::Inject, this, copy);
}

void
EdgePort::Inject(std::shared_ptr<std::vector<uint8_t>> frame)
{
    Take(frame->data(), frame->size(), ParseEthernetFrame(frame->data(), frame->size(), false));
}

void
EdgePort::Take(uint8_t* frame, size_t len, const ParsedFrame& f)
{
    if (f.vlan)
    {
        ++m_counters.drops["tagged_from_endpoint"]; // rxe and siw do not tag
        return;
    }
    auto neighbour = m_neighbours.Handle(frame, len, f);
    switch (neighbour.verdict)
    {
    case NeighbourResponder::Verdict::Keep:
        ++m_counters.drops[neighbour.reason];
        return;
    case NeighbourResponder::Verdict::Answer:
        if (m_tap->Write(neighbour.reply.data(), neighbour.reply.size()) ==
            TapPort::WriteStatus::Written)
        {
            ++(neighbour.arp ? m_counters.arpReplies : m_counters.neighbourAdverts);
        }
        return;
    case NeighbourResponder::Verdict::NotMine:
        break;
    }
    ++m_counters.fromTap;
    m_uplink->Send(frame, len, f, EdgePriority(f, m_rocePriority));
}

void
EdgePort::WriteToEndpoint(std::vector<uint8_t> bytes)
{
    if (m_held.empty())
    {
        if (m_watching)
        {
            m_tap->Queue(std::move(bytes)); // written by FlushQueued when the burst is over
            return;
        }
        switch (m_tap->Write(bytes.data(), bytes.size()))
        {
        case TapPort::WriteStatus::Written:
            ++m_counters.toTap;
            m_counters.bytesToTap += bytes.size();
            FrameBuffers::Give(std::move(bytes));
            return;
        case TapPort::WriteStatus::Failed:
            return; // counted by the tap
        case TapPort::WriteStatus::Full:
            break;
        }
    }
    Hold(std::move(bytes));
}

void
EdgePort::FlushQueued()
{
    if (!m_tap->HasQueued())
    {
        return;
    }
    std::vector<std::vector<uint8_t>> refused;
    FlushTap(refused);
    for (auto& frame : refused)
    {
        Hold(std::move(frame));
    }
}

void
EdgePort::FlushTap(std::vector<std::vector<uint8_t>>& refused)
{
    const auto [frames, bytes] = m_tap->Flush(refused);
    m_counters.toTap += frames;
    m_counters.bytesToTap += bytes;
}

void
EdgePort::Hold(std::vector<uint8_t> bytes)
{
    // Behind a full tap, or behind frames already waiting: keep the order.
    if (m_heldBytes + bytes.size() > kHoldLimit)
    {
        ++m_counters.drops["edge_hold_full"];
        return;
    }
    ++m_counters.framesHeld;
    m_heldBytes += bytes.size();
    m_counters.peakHeldBytes = std::max(m_counters.peakHeldBytes, m_heldBytes);
    m_held.push_back(std::move(bytes));
    UpdateHold();
    if (!m_retry.IsRunning())
    {
        // The VM's reads cannot be waited on from here; try again shortly.
        m_retry = Simulator::Schedule(MicroSeconds(20), &EdgePort::DrainHeld, this);
    }
}

void
EdgePort::DrainHeld()
{
    // What the tap takes now goes in batches of one system call each (Flush), in order;
    // what it refuses stays held, at the front, for the next try.
    constexpr size_t kBatch = 64;
    std::vector<std::vector<uint8_t>> refused;
    while (!m_held.empty())
    {
        uint64_t moved = 0;
        for (size_t i = 0; i < kBatch && !m_held.empty(); ++i)
        {
            moved += m_held.front().size();
            m_tap->Queue(std::move(m_held.front()));
            m_held.pop_front();
        }
        FlushTap(refused);
        uint64_t back = 0;
        for (auto i = refused.rbegin(); i != refused.rend(); ++i)
        {
            back += i->size();
            m_held.push_front(std::move(*i));
        }
        m_heldBytes -= moved - back; // written, or failed and counted by the tap
        if (!refused.empty())
        {
            break; // the tap is full again
        }
    }
    UpdateHold();
    if (!m_held.empty())
    {
        m_retry = Simulator::Schedule(MicroSeconds(20), &EdgePort::DrainHeld, this);
    }
}

void
EdgePort::UpdateHold()
{
    if (!m_holding && m_heldBytes > kHoldXoff)
    {
        m_holding = true;
        m_uplink->HoldFabric(true);
    }
    else if (m_holding && m_heldBytes <= kHoldXon)
    {
        m_holding = false;
        m_uplink->HoldFabric(false);
    }
}

EdgePort::Counters
EdgePort::GetCounters() const
{
    Counters c = m_counters;
    c.tapWriteFailures = m_tap->WriteFailures();
    c.tapWriteCalls = m_tap->WriteCalls();
    if (c.tapWriteFailures > 0)
    {
        c.drops["tap_write_error"] = c.tapWriteFailures;
    }
    c.framesRead = m_tap->FramesRead();
    c.framesUnstamped = m_tap->Unstamped();
    c.heldBytesNow = m_heldBytes;
    if (m_tap->Truncated() > 0)
    {
        c.drops["oversize"] += m_tap->Truncated();
    }
    if (const uint64_t lost = m_tap->SocketDrops())
    {
        c.drops["socket_overflow"] = lost; // from the endpoint, before the edge saw them
    }
    std::lock_guard<std::mutex> lock(m_filterMutex);
    for (const auto& [reason, n] : m_filter.DropsByReason())
    {
        c.drops[reason] += n;
    }
    m_uplink->AddCounters(c);
    return c;
}

} // namespace fabemu
