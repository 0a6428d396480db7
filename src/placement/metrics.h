// What a mapping costs on the network: hop counts, messages per link along the default routes,
// I/O messages passing through other bridge nodes, and load per bridge and per I/O node.
#pragma once

#include <cstdint>
#include <vector>

#include "common/status.h"
#include "placement/io_layout.h"
#include "placement/topology.h"

namespace iorelay::placement {

struct MessageModel {
  int ranks_per_node = 16;
  // true: the ranks of a node gather first and the node sends one message (intra-node
  // aggregation); false: every rank sends its own message along the node's route.
  bool aggregate = false;
  int64_t messages_per_node() const { return aggregate ? 1 : ranks_per_node; }
};

struct Spread {
  double mean = 0;
  int64_t max = 0;
  int64_t min = 0;
  double cv = 0;  // standard deviation / mean (population), 0 when the mean is 0
};

struct MappingMetrics {
  int32_t nodes = 0;
  int32_t bridges = 0;
  int32_t ionodes = 0;
  int64_t messages = 0;  // I/O messages sent in total (one per node or per rank)
  double hops_mean = 0;  // per compute node, to its bridge node
  int hops_max = 0;
  int64_t links_used = 0;               // directed links carrying at least one I/O message
  Spread link_messages;                 // over the links used
  int64_t bridge_transit_messages = 0;  // messages whose route passes another bridge node
  int64_t bridge_transits = 0;          // (message, bridge passed) pairs
  Spread bridge_load;                   // compute nodes per bridge node
  Spread ionode_load;                   // compute nodes per I/O node
};

// Metrics of `assignment` (compute node -> bridge index) under `model`. When link_messages is
// not null, it receives the messages carried by every link (size num_links()). O(N * hops).
Result<MappingMetrics> ComputeMetrics(const Topology& topology, const IoLayout& layout,
                                      const Assignment& assignment, const MessageModel& model,
                                      std::vector<int64_t>* link_messages = nullptr);

// Mean, max, min and coefficient of variation of values (all zeros for an empty input).
Spread SpreadOf(const std::vector<int64_t>& values);

}  // namespace iorelay::placement
