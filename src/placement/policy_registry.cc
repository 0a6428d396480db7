// Chooses an assignment policy by name, the way the tool and the simulator select them.
#include <fmt/format.h>

#include "placement/policy.h"

namespace iorelay::placement {

Assignment DefaultAssignment(const IoLayout& layout) { return layout.default_bridge; }

const std::vector<std::string>& PolicyNames() {
  static const std::vector<std::string> kNames = {"default", "block", "round-robin", "nearest",
                                                  "route-aware"};
  return kNames;
}

Result<Assignment> Assign(std::string_view policy, const Topology& topology, const IoLayout& layout,
                          const PolicyOptions& options) {
  if (layout.default_bridge.size() != static_cast<size_t>(topology.num_nodes())) {
    return Status::InvalidArgument("layout does not match the topology");
  }
  if (policy == "default") return DefaultAssignment(layout);
  if (policy == "block") return BlockAssignment(topology, layout);
  if (policy == "round-robin") return RoundRobinAssignment(topology, layout);
  if (policy == "nearest") return NearestAssignment(topology, layout);
  if (policy == "route-aware") {
    if (options.tree_cap < 1) return Status::InvalidArgument("tree cap must be >= 1");
    return RouteAwareAssignment(topology, layout, options);
  }
  return Status::InvalidArgument(
      fmt::format("unknown policy '{}' (known: {})", policy, fmt::join(PolicyNames(), ", ")));
}

}  // namespace iorelay::placement
