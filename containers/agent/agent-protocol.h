/*
 * The guest agent's protocol: one JSON object per line, both ways, over a
 * virtio-serial port named org.fabemu.agent (docs/guest-agent.md).
 *
 * host -> guest  {"op":"run","id":N,"cmd":"...","timeout_ms":T}
 *                {"op":"kill","id":N}
 *                {"op":"fetch","id":N,"path":"/file"}
 *                {"op":"ping","id":N}
 *                {"op":"shutdown"}
 * guest -> host  {"event":"ready","name":..,"device":..,"init":"ok"|"<error>",
 *                 "uptime_ms":..}
 *                {"event":"stdout"|"stderr","id":N,"data":"<text>"}
 *                {"event":"exit","id":N,"code":C}  (or "signal":S; "timed_out":true)
 *                {"event":"file","id":N,"data":"<base64>"} or {"event":"error",...}
 *                {"event":"pong","id":N}
 *
 * Each side decodes a line with one function (ParseAgentRequest, ParseAgentEvent)
 * that checks every field it knows for its type, so that a line that is not one of
 * these (not JSON, not an object, a number where text belongs) is an error the
 * reader reports, never an exception from deep inside it.
 */
#ifndef FABEMU_AGENT_PROTOCOL_H
#define FABEMU_AGENT_PROTOCOL_H

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>

namespace fabemu
{

constexpr const char* kAgentPortName = "org.fabemu.agent";

/// The longest command timeout a request may carry: one year (the deadline the agent
/// computes from it stays far inside its clock's range).
constexpr int64_t kAgentMaxTimeoutMs = int64_t{365} * 24 * 3600 * 1000;

/// Standard base64 (RFC 4648), for files the agent sends back.
std::string Base64Encode(const std::string& bytes);
/// Decodes base64; returns false on a character outside the alphabet.
bool Base64Decode(const std::string& text, std::string& bytes);

/// A request from the host, as the agent reads it; a field not given takes its default.
struct AgentRequest
{
    std::string op;
    int64_t id{0};
    std::string cmd;      ///< run
    int64_t timeoutMs{0}; ///< run: 0 for none, at most kAgentMaxTimeoutMs
    std::string path;     ///< fetch
};

/// Decodes one line from the host; nothing, with \p error saying why, when it is not
/// JSON, not an object, or a field above has the wrong type or range.
std::optional<AgentRequest> ParseAgentRequest(const std::string& line, std::string& error);

/// An event from the guest, as the host reads it; a field not given takes its default.
struct AgentEvent
{
    std::string event;
    uint64_t id{0};
    std::string data;        ///< stdout, stderr: text; file: base64
    std::string message;     ///< error
    std::optional<int> code; ///< exit: the exit status; none when a signal ended it
    int signal{0};           ///< exit
    bool timedOut{false};    ///< exit
    /// The whole object, for the fields only some callers read (ready: name, device;
    /// init and uptime_ms are checked to be text and an integer).
    nlohmann::json raw;
};

/// Decodes one line from the guest; nothing, with \p error saying why, when it is not
/// JSON, not an object, or a field above has the wrong type or range.
std::optional<AgentEvent> ParseAgentEvent(const std::string& line, std::string& error);

} // namespace fabemu

#endif
