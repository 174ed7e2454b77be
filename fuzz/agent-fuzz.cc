// Fuzz target: the guest agent's protocol decoders, on a stream of lines as either side
// reads them: ParseAgentRequest (the agent, PID 1 of the VM, reading the host's requests)
// and ParseAgentEvent (the host's AgentClient reading the agent's events). They report a
// line that is not a message as a value; any exception is a finding (the agent would die
// with its VM, the host would stop with an error that is not an AgentError). Oracles: what
// decodes encodes back to the same message; the command deadline the agent computes from
// a request stays inside its clock; base64 decodes what it encodes.
#include "containers/agent/agent-protocol.h"
#include "fuzz/fuzz-check.h"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>

namespace
{

using nlohmann::json;

void
Request(const std::string& line)
{
    std::string error;
    const auto r = fabemu::ParseAgentRequest(line, error);
    if (!r)
    {
        FUZZ_CHECK(!error.empty(), "a request refused without a reason");
        return;
    }
    // As the agent's Run: a deadline from the timeout, when there is one.
    if (r->timeoutMs > 0)
    {
        const auto deadline =
            std::chrono::steady_clock::now() + std::chrono::milliseconds(r->timeoutMs);
        FUZZ_CHECK(deadline > std::chrono::steady_clock::now(), "a deadline in the past");
    }
    // As the host's AgentClient writes it.
    const json again = {{"op", r->op},
                        {"id", r->id},
                        {"cmd", r->cmd},
                        {"timeout_ms", r->timeoutMs},
                        {"path", r->path}};
    const auto back = fabemu::ParseAgentRequest(again.dump(), error);
    FUZZ_CHECK(back && back->op == r->op && back->id == r->id && back->cmd == r->cmd &&
                   back->timeoutMs == r->timeoutMs && back->path == r->path,
               "a request does not decode back as encoded");
}

void
Event(const std::string& line)
{
    std::string error;
    const auto e = fabemu::ParseAgentEvent(line, error);
    if (!e)
    {
        FUZZ_CHECK(!error.empty(), "an event refused without a reason");
        return;
    }
    FUZZ_CHECK(e->raw.is_object(), "an event that is not an object");
    // What the launcher reads of a ready event, straight from the object.
    (void)e->raw.value("init", "");
    (void)e->raw.value("uptime_ms", int64_t{0});
    std::string bytes;
    (void)fabemu::Base64Decode(e->data, bytes);
    // As the agent writes it (a code, or a signal).
    json again = {{"event", e->event},     {"id", e->id},         {"data", e->data},
                  {"message", e->message}, {"signal", e->signal}, {"timed_out", e->timedOut}};
    if (e->code)
    {
        again["code"] = *e->code;
    }
    const auto back = fabemu::ParseAgentEvent(again.dump(), error);
    FUZZ_CHECK(back && back->event == e->event && back->id == e->id && back->data == e->data &&
                   back->message == e->message && back->code == e->code &&
                   back->signal == e->signal && back->timedOut == e->timedOut,
               "an event does not decode back as encoded");
}

void
Base64(const std::string& bytes)
{
    std::string decoded;
    FUZZ_CHECK(fabemu::Base64Decode(fabemu::Base64Encode(bytes), decoded) && decoded == bytes,
               "base64 does not decode what it encodes");
    if (fabemu::Base64Decode(bytes, decoded))
    {
        std::string again;
        FUZZ_CHECK(fabemu::Base64Decode(fabemu::Base64Encode(decoded), again) && again == decoded,
                   "base64 of decoded text");
    }
}

} // namespace

extern "C" int
LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    const std::string text(reinterpret_cast<const char*>(data), size);
    // One message a line, as both readers split the stream.
    size_t from = 0;
    while (from <= text.size())
    {
        size_t nl = text.find('\n', from);
        if (nl == std::string::npos)
        {
            nl = text.size();
        }
        const std::string line = text.substr(from, nl - from);
        if (!line.empty())
        {
            Request(line);
            Event(line);
        }
        from = nl + 1;
    }
    Base64(text);
    return 0;
}
