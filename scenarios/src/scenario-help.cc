// Keys(), WorkloadTypes() ...: the key tables as documentation, for `fabemu list` and docs.
#include "scenarios/src/scenario-keys.h"

#include <fmt/format.h>

namespace fabemu
{

namespace
{

std::string
Joined(const std::vector<std::string>& words)
{
    return fmt::format("{}", fmt::join(words, ", "));
}

template <class T>
void
AddHelp(std::vector<KeyHelp>& out, const std::vector<Key<T>>& keys, const std::string& prefix)
{
    for (const auto& k : keys)
    {
        out.push_back({prefix + k.name, k.type, k.def, k.help, Joined(k.only), k.example});
    }
}

template <class T>
std::string
KeysOf(const std::vector<Key<T>>& keys, const std::string& name)
{
    std::vector<std::string> words;
    for (const auto& k : keys)
    {
        if (!k.only.empty() && k.AppliesTo(name) && k.name.find('.') == std::string::npos)
        {
            words.push_back(k.name);
        }
    }
    return Joined(words);
}

std::string
Cell(std::string text)
{
    for (size_t at = text.find('|'); at != std::string::npos; at = text.find('|', at + 2))
    {
        text.replace(at, 1, "\\|");
    }
    return text;
}

} // namespace

const std::vector<KeyHelp>&
Keys()
{
    static const std::vector<KeyHelp> keys = [] {
        std::vector<KeyHelp> out;
        AddHelp(out, ScenarioKeys(), "");
        AddHelp(out, FabricKeys(), "fabric.");
        AddHelp(out, TopologyKeys(), "topology.");
        AddHelp(out, EndpointKeys(), "endpoints.hN.");
        AddHelp(out, WorkloadKeys(), "workloads.N.");
        AddHelp(out, RecordKeys(), "record.");
        AddHelp(out, FaultKeys(), "faults.N.");
        return out;
    }();
    return keys;
}

const std::vector<KeyHelp>&
WorkloadTypes()
{
    static const std::vector<KeyHelp> types = [] {
        std::vector<KeyHelp> out;
        for (const auto& w : WorkloadKinds())
        {
            out.push_back({w.name, KeysOf(WorkloadKeys(), w.name), "", w.help, "", ""});
        }
        return out;
    }();
    return types;
}

const std::vector<KeyHelp>&
FabricTypeHelp()
{
    static const std::vector<KeyHelp> types = [] {
        std::vector<KeyHelp> out;
        for (const auto& f : FabricTypes())
        {
            out.push_back({f.name, KeysOf(FabricKeys(), f.name), "", f.help, "", ""});
        }
        return out;
    }();
    return types;
}

const std::vector<KeyHelp>&
BuilderHelp()
{
    static const std::vector<KeyHelp> builders = [] {
        std::vector<KeyHelp> out;
        for (const auto& b : Builders())
        {
            out.push_back({b.name, KeysOf(TopologyKeys(), b.name), "", b.help, "", ""});
        }
        return out;
    }();
    return builders;
}

std::string
KeysMarkdown()
{
    std::string out = "| key | type | default | applies to | what |\n|---|---|---|---|---|\n";
    for (const auto& k : Keys())
    {
        out += fmt::format("| `{}` | {} | {} | {} | {} |\n", k.key, Cell(k.type),
                           Cell(k.defaultValue), Cell(k.appliesTo), Cell(k.help));
    }
    return out;
}

} // namespace fabemu
