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
 */
#ifndef FABEMU_AGENT_PROTOCOL_H
#define FABEMU_AGENT_PROTOCOL_H

#include <string>

namespace fabemu
{

constexpr const char* kAgentPortName = "org.fabemu.agent";

/// Standard base64 (RFC 4648), for files the agent sends back.
std::string Base64Encode(const std::string& bytes);
/// Decodes base64; returns false on a character outside the alphabet.
bool Base64Decode(const std::string& text, std::string& bytes);

} // namespace fabemu

#endif
