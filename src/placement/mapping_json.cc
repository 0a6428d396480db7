// Writes and reads the mapping JSON shared with the client library and the Python tooling.
#include "placement/mapping_json.h"

#include <fmt/format.h>

#include <charconv>

namespace iorelay::placement {
namespace {

constexpr int32_t kMaxNodeId = 1 << 24;

nlohmann::json SpreadToJson(const Spread& s) {
  return {{"mean", s.mean}, {"max", s.max}, {"min", s.min}, {"cv", s.cv}};
}

}  // namespace

std::vector<int32_t> DaemonIndices(const IoLayout& layout, const Assignment& assignment,
                                   DaemonUnit unit) {
  std::vector<int32_t> out(assignment.size());
  for (size_t v = 0; v < assignment.size(); ++v) {
    out[v] = unit == DaemonUnit::kBridge ? assignment[v] : layout.ionode_of_bridge[assignment[v]];
  }
  return out;
}

nlohmann::json MetricsToJson(const MappingMetrics& m) {
  return {{"nodes", m.nodes},
          {"bridges", m.bridges},
          {"ionodes", m.ionodes},
          {"messages", m.messages},
          {"hops_mean", m.hops_mean},
          {"hops_max", m.hops_max},
          {"links_used", m.links_used},
          {"link_messages", SpreadToJson(m.link_messages)},
          {"bridge_transit_messages", m.bridge_transit_messages},
          {"bridge_transits", m.bridge_transits},
          {"bridge_load", SpreadToJson(m.bridge_load)},
          {"ionode_load", SpreadToJson(m.ionode_load)}};
}

nlohmann::json MappingDocument(const Topology& topology, const IoLayout& layout,
                               const Assignment& assignment, std::string_view policy,
                               DaemonUnit unit, const MappingMetrics* metrics) {
  const std::vector<int32_t> daemon = DaemonIndices(layout, assignment, unit);
  nlohmann::json mapping = nlohmann::json::object();
  for (size_t v = 0; v < daemon.size(); ++v) mapping[std::to_string(v)] = daemon[v];
  nlohmann::json doc = {
      {"format", "iorelay-placement-map/1"},
      {"topology", topology.spec()},
      {"layout", layout.model},
      {"policy", std::string(policy)},
      {"daemon_unit", unit == DaemonUnit::kBridge ? "bridge" : "ionode"},
      {"daemons", unit == DaemonUnit::kBridge ? layout.num_bridges() : layout.num_ionodes},
      {"bridge_nodes", layout.bridges},
      {"ionode_of_bridge", layout.ionode_of_bridge},
      {"mapping", std::move(mapping)}};
  if (metrics != nullptr) doc["metrics"] = MetricsToJson(*metrics);
  return doc;
}

Result<std::vector<int32_t>> ParseMapping(std::string_view text) {
  const nlohmann::json doc = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object()) {
    return Status::InvalidArgument("mapping file is not a JSON object");
  }
  const auto it = doc.find("mapping");
  if (it == doc.end() || !it->is_object()) {
    return Status::InvalidArgument("mapping file has no \"mapping\" object");
  }
  std::vector<int32_t> out;
  for (const auto& [key, value] : it->items()) {
    int32_t node = -1;
    const auto [end, ec] = std::from_chars(key.data(), key.data() + key.size(), node);
    if (ec != std::errc() || end != key.data() + key.size() || node < 0 || node > kMaxNodeId) {
      return Status::InvalidArgument(fmt::format("bad node id '{}' in mapping", key));
    }
    if (!value.is_number_integer() || value.get<int64_t>() < 0 ||
        value.get<int64_t>() > kMaxNodeId) {
      return Status::InvalidArgument(fmt::format("bad daemon index for node {}", key));
    }
    if (static_cast<size_t>(node) >= out.size()) out.resize(node + 1, -1);
    out[node] = static_cast<int32_t>(value.get<int64_t>());
  }
  return out;
}

}  // namespace iorelay::placement
