// The simulator's use of src/placement, unchanged: a topology by spec, a layout, a policy by name.
#include "sim/ionode_placement.h"

#include <fmt/format.h>

#include <algorithm>

#include "placement/io_layout.h"
#include "placement/policy.h"
#include "placement/topology_spec.h"

namespace iorelay::sim {

Result<IoNodePlacement> PlaceIoNodes(const std::string& topology_spec, const std::string& policy,
                                     int32_t nodes, int32_t ionodes) {
  if (ionodes < 1 || ionodes > nodes) {
    return Status::InvalidArgument(
        fmt::format("--ionodes {} must be between 0 and --nodes ({})", ionodes, nodes));
  }
  const std::string spec =
      topology_spec.empty() ? fmt::format("fattree:1x{}x1", nodes) : topology_spec;
  auto topology = placement::ParseTopology(spec);
  if (!topology.ok()) return topology.status();
  const int32_t m = (*topology)->num_nodes();
  if (m < nodes) {
    return Status::InvalidArgument(
        fmt::format("topology {} has {} nodes, fewer than --nodes {}", spec, m, nodes));
  }
  placement::IoLayout layout;
  layout.model = "sim";
  layout.num_ionodes = ionodes;
  for (int32_t b = 0; b < ionodes; ++b) {
    layout.bridges.push_back(static_cast<placement::VertexId>(int64_t{b} * nodes / ionodes));
    layout.ionode_of_bridge.push_back(b);
  }
  layout.default_bridge.resize(m);
  for (int32_t v = 0; v < m; ++v) {
    layout.default_bridge[v] =
        static_cast<int32_t>(int64_t{std::min(v, nodes - 1)} * ionodes / nodes);
  }
  IORELAY_RETURN_IF_ERROR(placement::FinishLayout(m, &layout));
  auto assignment = placement::Assign(policy, **topology, layout, placement::PolicyOptions{});
  if (!assignment.ok()) return assignment.status();
  IoNodePlacement out;
  out.ionode_of.resize(nodes);
  for (int32_t v = 0; v < nodes; ++v) out.ionode_of[v] = layout.ionode_of_bridge[(*assignment)[v]];
  out.bridge_of.assign(layout.bridges.begin(), layout.bridges.end());
  return out;
}

}  // namespace iorelay::sim
