// Which I/O node serves each compute node, by a src/placement policy: the I/O nodes' bridge nodes
// spread evenly over the job's nodes, the policy assigns every node a bridge.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"

namespace iorelay::sim {

struct IoNodePlacement {
  std::vector<int32_t> ionode_of;  // compute node [0, nodes) → I/O node [0, ionodes)
  std::vector<int32_t> bridge_of;  // I/O node → the compute node it attaches to the network at
};

// `topology_spec` empty: fattree:1x<nodes>x1 (one switch: only block and round-robin then
// differ). InvalidArgument for an unknown policy or topology, a topology with fewer than `nodes`
// nodes, or more I/O nodes than nodes.
Result<IoNodePlacement> PlaceIoNodes(const std::string& topology_spec, const std::string& policy,
                                     int32_t nodes, int32_t ionodes);

}  // namespace iorelay::sim
