// Computes a mapping's network metrics by walking every compute node's default route once.
#include "placement/metrics.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace iorelay::placement {

Spread SpreadOf(const std::vector<int64_t>& values) {
  Spread s;
  if (values.empty()) return s;
  double sum = 0;
  s.max = values[0];
  s.min = values[0];
  for (int64_t v : values) {
    sum += static_cast<double>(v);
    s.max = std::max(s.max, v);
    s.min = std::min(s.min, v);
  }
  s.mean = sum / static_cast<double>(values.size());
  double var = 0;
  for (int64_t v : values) var += (static_cast<double>(v) - s.mean) * (v - s.mean);
  var /= static_cast<double>(values.size());
  s.cv = s.mean > 0 ? std::sqrt(var) / s.mean : 0;
  return s;
}

Result<MappingMetrics> ComputeMetrics(const Topology& topology, const IoLayout& layout,
                                      const Assignment& assignment, const MessageModel& model,
                                      std::vector<int64_t>* link_messages) {
  const int32_t n = topology.num_nodes();
  const int32_t k = layout.num_bridges();
  if (static_cast<int32_t>(assignment.size()) != n) {
    return Status::InvalidArgument(
        fmt::format("assignment has {} entries for {} nodes", assignment.size(), n));
  }
  if (model.ranks_per_node < 1) return Status::InvalidArgument("ranks per node must be >= 1");
  const int64_t per_node = model.messages_per_node();
  MappingMetrics m;
  m.nodes = n;
  m.bridges = k;
  m.ionodes = layout.num_ionodes;
  m.messages = per_node * n;
  std::vector<int64_t> links(topology.num_links(), 0);
  std::vector<int64_t> bridge_nodes(k, 0), ionode_nodes(layout.num_ionodes, 0);
  std::vector<LinkId> route;
  int64_t hops_sum = 0;
  for (VertexId v = 0; v < n; ++v) {
    const int32_t b = assignment[v];
    if (b < 0 || b >= k) {
      return Status::InvalidArgument(fmt::format("node {} mapped to bad bridge {}", v, b));
    }
    ++bridge_nodes[b];
    ++ionode_nodes[layout.ionode_of_bridge[b]];
    route.clear();
    topology.Route(v, layout.bridges[b], &route);
    hops_sum += static_cast<int64_t>(route.size());
    m.hops_max = std::max(m.hops_max, static_cast<int>(route.size()));
    int transits = 0;
    for (size_t i = 0; i < route.size(); ++i) {
      links[route[i]] += per_node;
      if (i + 1 < route.size()) {
        const VertexId via = topology.LinkEnds(route[i]).second;
        if (via < n && layout.bridge_at[via] >= 0) ++transits;
      }
    }
    if (transits > 0) m.bridge_transit_messages += per_node;
    m.bridge_transits += per_node * transits;
  }
  m.hops_mean = n > 0 ? static_cast<double>(hops_sum) / n : 0;
  std::vector<int64_t> used;
  for (int64_t c : links) {
    if (c > 0) used.push_back(c);
  }
  m.links_used = static_cast<int64_t>(used.size());
  m.link_messages = SpreadOf(used);
  m.bridge_load = SpreadOf(bridge_nodes);
  m.ionode_load = SpreadOf(ionode_nodes);
  if (link_messages != nullptr) *link_messages = std::move(links);
  return m;
}

}  // namespace iorelay::placement
