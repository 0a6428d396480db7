// Chaarawi & Gabriel's aggregator grouping around the write saturation point k (Cluster 2011,
// OMPIO's dynamic selection): ranks that are contiguous in the file form groups; a group with more
// than k bytes is split, adjacent groups with less are merged while the sum stays <= k; the first
// rank of each final group aggregates for it. Pure code.
#pragma once

#include <cstdint>
#include <vector>

#include "common/status.h"

namespace iorelay::collective {

// One rank's part of a collective access: `bytes` starting at file `offset`.
struct RankExtent {
  int32_t rank = 0;
  uint64_t offset = 0;
  uint64_t bytes = 0;
};

// Consecutive ranks in file order with no gap between them; `bytes` their sum.
struct RankGroup {
  std::vector<int32_t> ranks;
  uint64_t bytes = 0;
};

// The starting groups: extents sorted by offset, a new group wherever one extent does not begin
// where the previous ended. Ranks with no bytes are left out.
std::vector<RankGroup> FileContiguousGroups(std::vector<RankExtent> extents);

// The starting groups of `extents`, split, then merged (see above). A group of bytes B > k becomes
// min(ceil(B / k), its ranks) groups of consecutive ranks, as even in rank count as possible (a
// single rank with more than k stays alone: then every rank aggregates). Merging walks the groups
// in file order and joins a group to the previous one while both are below k and the sum stays <=
// k. One extent per rank (one collective call's data); InvalidArgument when a rank has two or k is
// 0.
Result<std::vector<RankGroup>> SplitMerge(const std::vector<RankExtent>& extents, uint64_t k_bytes);

// The aggregators of the groups: the first rank of each.
std::vector<int32_t> GroupAggregators(const std::vector<RankGroup>& groups);

}  // namespace iorelay::collective
