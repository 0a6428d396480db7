// Where the I/O nodes attach to the network (their bridge nodes) and which bridge node each
// compute node uses by default: the data every assignment policy and metric starts from.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"
#include "placement/topology.h"

namespace iorelay::placement {

// Compute node -> bridge index, for every compute node [0, topology.num_nodes()).
using Assignment = std::vector<int32_t>;

struct IoLayout {
  std::string model;                      // "bgq" or "spread:<nodes per bridge>"
  std::vector<VertexId> bridges;          // bridge index -> the compute node it is
  std::vector<int32_t> ionode_of_bridge;  // bridge index -> I/O node index [0, num_ionodes)
  int32_t num_ionodes = 0;
  Assignment default_bridge;       // the default (boot-time) model
  std::vector<int32_t> bridge_at;  // compute node -> bridge index, or -1

  int32_t num_bridges() const { return static_cast<int32_t>(bridges.size()); }
};

// Generic layout for any topology: K = ceil(N / nodes_per_bridge) bridge nodes, bridge i the
// first node of block i = [ceil(i*N/K), ceil((i+1)*N/K)); the default assignment is that block;
// bridges_per_ionode consecutive bridges form one I/O node.
Result<IoLayout> MakeSpreadLayout(const Topology& topology, int nodes_per_bridge,
                                  int bridges_per_ionode = 2);

// Fills bridge_at from bridges and checks the layout is consistent (every index in range).
Status FinishLayout(int32_t num_nodes, IoLayout* layout);

}  // namespace iorelay::placement
