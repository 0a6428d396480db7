// Which ranks of a job aggregate in collective (two-phase) MPI-IO, chosen by the published rules
// (docs/collective.md; Chaarawi & Gabriel, Cluster 2011): ROMIO's default of one aggregator per
// host, the user's cb_nodes, Chaarawi & Gabriel's write saturation point k, alignment to the file's
// stripes, and balance over the I/O nodes. Pure code: no MPI, no OS calls, no threads.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"

namespace iorelay::collective {

// The job and its file, as far as the choice needs them. Ranks are placed in blocks: node n holds
// ranks [n * ranks_per_node, (n + 1) * ranks_per_node) (mpirun's default --map-by core).
struct JobShape {
  int32_t ranks = 1;
  int32_t ranks_per_node = 1;
  int32_t ionodes = 0;                  // I/O nodes the ranks forward through (0: direct)
  int32_t stripe_count = 1;             // the file's stripe count (1: not striped)
  uint64_t stripe_size_bytes = 0;       // the file's stripe size (0: not striped)
  uint64_t bytes_per_collective = 0;    // data of all ranks in one collective call (0: unknown)
  uint64_t saturation_point_bytes = 0;  // k, measured (0: not measured; the rule is not used)
  int32_t cb_nodes = 0;                 // the user's cb_nodes hint (0: none)
  int32_t max_per_node = 1;             // cb_config_list "*:M": at most M aggregators per node
};

// The choice and how it was reached: one line per rule that set or changed the count.
struct AggregatorChoice {
  std::vector<int32_t> ranks;  // the aggregators, in file-domain order (domain i: ranks[i])
  std::vector<std::string> reasons;
};

// ceil(ranks / ranks_per_node).
int32_t NodeCount(const JobShape& job);

// The number of aggregators, then its adjustments, in this order:
//  1. cb_nodes if given; else with k and the data volume, ceil(bytes_per_collective / k)
//     (one aggregator per k bytes, Chaarawi & Gabriel); else one per node (ROMIO's default).
//  2. at most nodes * max_per_node (cb_config_list) and at most ranks; at least 1.
//  3. striped file (stripe_count > 1): the largest count not above that divides the stripe count
//     or is a multiple of it, so each aggregator's stripes fall on a fixed set of targets and no
//     target is shared unevenly (ROMIO on Lustre: one aggregator per target by default).
//  4. otherwise, with I/O nodes: rounded down to a multiple of the I/O nodes (when at least one
//     per I/O node), so each I/O node serves as many aggregators as the next.
// InvalidArgument names the field that makes no sense (ranks < 1, stripe_count < 1, ...).
Result<int32_t> AggregatorCount(const JobShape& job, std::vector<std::string>* reasons = nullptr);

// `count` aggregator ranks spread over the nodes: the first rank of every node, then the second
// of every node, and so on (spreading over nodes beats packing: Sung et al.), nodes taken
// evenly spaced when there are more nodes than aggregators. Count must be in [1, ranks].
std::vector<int32_t> SpreadAggregators(const JobShape& job, int32_t count);

// `count` aggregator ranks packed onto as few nodes as the per-node limit allows: the first
// min(max_per_node, ranks_per_node) ranks of node 0, then of node 1, and so on; what spreading is
// measured against. Empty when count is not in [1, ranks] or the nodes cannot hold that many.
std::vector<int32_t> PackAggregators(const JobShape& job, int32_t count);

// AggregatorCount, then SpreadAggregators.
Result<AggregatorChoice> ChooseAggregators(const JobShape& job);

}  // namespace iorelay::collective
