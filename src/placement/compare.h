// Runs several policies on one topology and measures each: what the iorelay-place tool, the
// benchmark and the tests compare (default model against route-aware, and the others).
#pragma once

#include <string>
#include <vector>

#include "common/status.h"
#include "placement/io_layout.h"
#include "placement/metrics.h"
#include "placement/policy.h"
#include "placement/topology.h"

namespace iorelay::placement {

// The Blue Gene/Q layout for a 5-D torus made of 4x4x4x4x2 midplanes, else the spread layout
// with nodes_per_bridge compute nodes per bridge node.
Result<IoLayout> ChooseLayout(const Topology& topology, int nodes_per_bridge);

struct PolicyResult {
  std::string policy;
  Assignment assignment;
  MappingMetrics metrics;             // under the requested message model
  MappingMetrics metrics_aggregated;  // one message per node
};

Result<std::vector<PolicyResult>> ComparePolicies(const Topology& topology, const IoLayout& layout,
                                                  const std::vector<std::string>& policies,
                                                  const PolicyOptions& options,
                                                  const MessageModel& model);

}  // namespace iorelay::placement
