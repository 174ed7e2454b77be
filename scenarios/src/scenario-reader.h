/*
 * Inside the scenario library: the YAML reader that turns nodes into values
 * or "FILE:LINE:COL: what is wrong", and the unit helpers it shares.
 */
#ifndef FABEMU_SCENARIO_READER_H
#define FABEMU_SCENARIO_READER_H

#include "scenarios/src/scenario.h"

#include <yaml-cpp/yaml.h>

namespace fabemu
{

/// "<number><unit>" with the number possibly fractional; false when it is not that shape.
bool SplitQuantity(const std::string& text, double& number, std::string& unit);

class Reader
{
  public:
    explicit Reader(std::string file) : m_file(std::move(file)) {}

    [[noreturn]] void Fail(const YAML::Node& at, const std::string& what) const;
    [[noreturn]] void Fail(SourceMark at, const std::string& what) const;
    static SourceMark MarkOf(const YAML::Node& n);

    /// \p node must be a map whose keys are among \p allowed (no duplicates).
    void CheckMap(const YAML::Node& node, const std::string& where,
                  const std::vector<std::string>& allowed) const;
    std::string Scalar(const YAML::Node& n, const std::string& what) const;
    std::string String(const YAML::Node& n, const std::string& what) const
    {
        return Scalar(n, what);
    }
    std::string Choice(const YAML::Node& n, const std::string& what,
                       const std::vector<std::string>& options) const;
    bool Bool(const YAML::Node& n, const std::string& what) const;
    uint64_t Integer(const YAML::Node& n, const std::string& what, uint64_t lo, uint64_t hi) const;
    double Number(const YAML::Node& n, const std::string& what, double lo, double hi) const;
    uint64_t Bytes(const YAML::Node& n, const std::string& what, uint64_t lo, uint64_t hi) const;
    int64_t Duration(const YAML::Node& n, const std::string& what, int64_t lo, int64_t hi) const;
    /// A link rate, 1Mbps..3200Gbps.
    uint64_t Rate(const YAML::Node& n, const std::string& what) const;
    /// "h3" -> 3 when it names one of \p hosts hosts.
    uint32_t Host(const YAML::Node& n, const std::string& what, uint32_t hosts) const;
    /// "h3" -> {3, ""}, "h3.gpu0" -> {3, "gpu0"}: a host or a device inside it.
    std::pair<uint32_t, std::string> Endpoint(const YAML::Node& n, const std::string& what,
                                              uint32_t hosts) const;
    /// [h1, h2] or "all".
    std::vector<uint32_t> Hosts(const YAML::Node& n, const std::string& what, uint32_t hosts,
                                bool mayBeEmpty = false) const;

    const std::string& File() const { return m_file; }

  private:
    std::string m_file;
};

/// One expect: entry.
Expectation ParseExpectation(const Reader& r, const YAML::Node& key, const YAML::Node& value);

/// The node at a dotted path of the document ("fabric.ecn", "workloads.2.start"), or an
/// undefined node.
YAML::Node NodeAt(const YAML::Node& root, const std::string& path);

} // namespace fabemu

#endif
