#include "containers/agent/agent-protocol.h"

#include <array>
#include <limits>

namespace fabemu
{

namespace
{
constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
}

std::string
Base64Encode(const std::string& bytes)
{
    std::string out;
    out.reserve((bytes.size() + 2) / 3 * 4);
    size_t i = 0;
    for (; i + 2 < bytes.size(); i += 3)
    {
        const uint32_t v = static_cast<uint8_t>(bytes[i]) << 16 |
                           static_cast<uint8_t>(bytes[i + 1]) << 8 |
                           static_cast<uint8_t>(bytes[i + 2]);
        out += kAlphabet[v >> 18];
        out += kAlphabet[(v >> 12) & 63];
        out += kAlphabet[(v >> 6) & 63];
        out += kAlphabet[v & 63];
    }
    const size_t rest = bytes.size() - i;
    if (rest > 0)
    {
        uint32_t v = static_cast<uint8_t>(bytes[i]) << 16;
        if (rest == 2)
        {
            v |= static_cast<uint8_t>(bytes[i + 1]) << 8;
        }
        out += kAlphabet[v >> 18];
        out += kAlphabet[(v >> 12) & 63];
        out += rest == 2 ? kAlphabet[(v >> 6) & 63] : '=';
        out += '=';
    }
    return out;
}

bool
Base64Decode(const std::string& text, std::string& bytes)
{
    std::array<int, 256> value;
    value.fill(-1);
    for (int i = 0; i < 64; ++i)
    {
        value[static_cast<uint8_t>(kAlphabet[i])] = i;
    }
    bytes.clear();
    uint32_t acc = 0;
    int bits = 0;
    for (char c : text)
    {
        if (c == '=')
        {
            break;
        }
        const int v = value[static_cast<uint8_t>(c)];
        if (v < 0)
        {
            return false;
        }
        acc = acc << 6 | static_cast<uint32_t>(v);
        bits += 6;
        if (bits >= 8)
        {
            bits -= 8;
            bytes += static_cast<char>((acc >> bits) & 0xff);
        }
    }
    return true;
}

namespace
{

using nlohmann::json;

/// The object on \p line, or nothing with \p error set.
std::optional<json>
ParseObject(const std::string& line, std::string& error)
{
    json msg;
    try
    {
        msg = json::parse(line);
    }
    catch (const json::exception& e)
    {
        error = std::string("not JSON: ") + e.what();
        return std::nullopt;
    }
    if (!msg.is_object())
    {
        error = std::string("not a JSON object but ") + msg.type_name();
        return std::nullopt;
    }
    return msg;
}

/// Member \p key of \p msg into \p out when it is text; false, with \p error, when it is
/// something else. A missing member leaves \p out as it was.
bool
ReadText(const json& msg, const char* key, std::string* out, std::string& error)
{
    const auto it = msg.find(key);
    if (it == msg.end())
    {
        return true;
    }
    if (!it->is_string())
    {
        error = std::string("'") + key + "' must be text, not " + it->type_name();
        return false;
    }
    if (out)
    {
        *out = it->get<std::string>();
    }
    return true;
}

/// The same for an integer in \p lo..\p hi (a fraction, or a number outside, is an error).
bool
ReadInteger(const json& msg, const char* key, int64_t lo, int64_t hi, int64_t* out,
            std::string& error)
{
    const auto it = msg.find(key);
    if (it == msg.end())
    {
        return true;
    }
    const bool inRange =
        it->is_number_unsigned()
            ? hi >= 0 && it->get<uint64_t>() <= static_cast<uint64_t>(hi) &&
                  static_cast<int64_t>(it->get<uint64_t>()) >= lo
            : it->is_number_integer() && it->get<int64_t>() >= lo && it->get<int64_t>() <= hi;
    if (!inRange)
    {
        error = std::string("'") + key + "' must be an integer in " + std::to_string(lo) + ".." +
                std::to_string(hi) + ", not " + it->dump();
        return false;
    }
    if (out)
    {
        *out = it->get<int64_t>();
    }
    return true;
}

bool
ReadBool(const json& msg, const char* key, bool* out, std::string& error)
{
    const auto it = msg.find(key);
    if (it == msg.end())
    {
        return true;
    }
    if (!it->is_boolean())
    {
        error = std::string("'") + key + "' must be true or false, not " + it->type_name();
        return false;
    }
    *out = it->get<bool>();
    return true;
}

constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();
constexpr int64_t kIntMin = std::numeric_limits<int>::min();
constexpr int64_t kIntMax = std::numeric_limits<int>::max();

} // namespace

std::optional<AgentRequest>
ParseAgentRequest(const std::string& line, std::string& error)
{
    const auto msg = ParseObject(line, error);
    if (!msg)
    {
        return std::nullopt;
    }
    AgentRequest r;
    if (!ReadText(*msg, "op", &r.op, error) ||
        !ReadInteger(*msg, "id", std::numeric_limits<int64_t>::min(), kInt64Max, &r.id, error) ||
        !ReadText(*msg, "cmd", &r.cmd, error) ||
        !ReadInteger(*msg, "timeout_ms", 0, kAgentMaxTimeoutMs, &r.timeoutMs, error) ||
        !ReadText(*msg, "path", &r.path, error))
    {
        return std::nullopt;
    }
    return r;
}

std::optional<AgentEvent>
ParseAgentEvent(const std::string& line, std::string& error)
{
    auto msg = ParseObject(line, error);
    if (!msg)
    {
        return std::nullopt;
    }
    AgentEvent e;
    int64_t id = 0;
    int64_t code = 0;
    int64_t signal = 0;
    if (!ReadText(*msg, "event", &e.event, error) ||
        !ReadInteger(*msg, "id", 0, kInt64Max, &id, error) ||
        !ReadText(*msg, "data", &e.data, error) || !ReadText(*msg, "message", &e.message, error) ||
        !ReadInteger(*msg, "code", kIntMin, kIntMax, &code, error) ||
        !ReadInteger(*msg, "signal", kIntMin, kIntMax, &signal, error) ||
        !ReadBool(*msg, "timed_out", &e.timedOut, error) ||
        !ReadText(*msg, "init", nullptr, error) ||
        !ReadInteger(*msg, "uptime_ms", 0, kInt64Max, nullptr, error))
    {
        return std::nullopt;
    }
    e.id = static_cast<uint64_t>(id);
    if (msg->contains("code"))
    {
        e.code = static_cast<int>(code);
    }
    e.signal = static_cast<int>(signal);
    e.raw = std::move(*msg);
    return e;
}

} // namespace fabemu
