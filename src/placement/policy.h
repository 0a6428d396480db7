// Assignment policies: which bridge node (hence I/O node) serves each compute node. Each policy
// is a pure function of (topology, layout, options); they are chosen by name.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "placement/io_layout.h"
#include "placement/topology.h"

namespace iorelay::placement {

// Route-aware: where nodes that no connectivity tree reaches go.
enum class Unreached {
  kDefaultBridge,      // their default bridge node, as in the paper (may exceed the share)
  kNearestUnderShare,  // the nearest bridge (hops) still below ceil(N/K) nodes
};

struct PolicyOptions {
  // Route-aware: largest connectivity tree, in compute nodes (the authors' value for Mira).
  int tree_cap = 256;
  Unreached unreached = Unreached::kDefaultBridge;
};

// Every result maps each compute node [0, N) to a bridge index [0, K).

// The layout's boot-time default (layout.default_bridge).
Assignment DefaultAssignment(const IoLayout& layout);
// FORGE "block": compute node v -> bridge floor(v*K/N), contiguous node ids per bridge (and so
// per I/O node, since consecutive bridges share one).
Assignment BlockAssignment(const Topology& topology, const IoLayout& layout);
// Compute node v -> bridge v mod K.
Assignment RoundRobinAssignment(const Topology& topology, const IoLayout& layout);
// Nearest by hops with balance: distance levels 0, 1, 2, ...; within a level, bridges take in
// turn one unassigned node at that distance, up to ceil(N/K) nodes each.
Assignment NearestAssignment(const Topology& topology, const IoLayout& layout);

// Route-aware, load-aware reassignment (docs/placement.md; see route_aware_policy.cc).
struct RouteAwareStats {
  int32_t reached = 0;     // nodes assigned by the tree traversal
  int32_t unreached = 0;   // nodes no tree assigned (placed by PolicyOptions::unreached)
  int32_t max_depth = 0;   // deepest tree level
  int64_t tree_nodes = 0;  // sum of tree sizes
};
Assignment RouteAwareAssignment(const Topology& topology, const IoLayout& layout,
                                const PolicyOptions& options, RouteAwareStats* stats = nullptr);

// Policy names in display order: default, block, round-robin, nearest, route-aware.
const std::vector<std::string>& PolicyNames();
// Runs the named policy; InvalidArgument for an unknown name or bad options.
Result<Assignment> Assign(std::string_view policy, const Topology& topology, const IoLayout& layout,
                          const PolicyOptions& options);

}  // namespace iorelay::placement
