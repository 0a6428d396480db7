// Chaarawi & Gabriel's split/merge grouping around the saturation point (see split_merge.h).
#include "collective/split_merge.h"

#include <algorithm>
#include <map>
#include <string>

namespace iorelay::collective {
namespace {

// Splits `g` (bytes > k) into parts of consecutive ranks, as even in rank count as possible.
void Split(const RankGroup& g, uint64_t k, const std::map<int32_t, uint64_t>& bytes_of,
           std::vector<RankGroup>& out) {
  const uint64_t n = g.ranks.size();
  const uint64_t parts = std::min<uint64_t>((g.bytes + k - 1) / k, n);
  for (uint64_t p = 0; p < parts; ++p) {
    RankGroup part;
    for (uint64_t i = p * n / parts; i < (p + 1) * n / parts; ++i) {
      part.ranks.push_back(g.ranks[i]);
      part.bytes += bytes_of.at(g.ranks[i]);
    }
    out.push_back(std::move(part));
  }
}

}  // namespace

std::vector<RankGroup> FileContiguousGroups(std::vector<RankExtent> extents) {
  std::stable_sort(extents.begin(), extents.end(),
                   [](const RankExtent& a, const RankExtent& b) { return a.offset < b.offset; });
  std::vector<RankGroup> groups;
  uint64_t end = 0;
  for (const RankExtent& e : extents) {
    if (e.bytes == 0) continue;
    if (groups.empty() || e.offset != end) groups.emplace_back();
    groups.back().ranks.push_back(e.rank);
    groups.back().bytes += e.bytes;
    end = e.offset + e.bytes;
  }
  return groups;
}

Result<std::vector<RankGroup>> SplitMerge(const std::vector<RankExtent>& extents,
                                          uint64_t k_bytes) {
  if (k_bytes == 0) return Status::InvalidArgument("the saturation point k must be > 0 bytes");
  std::map<int32_t, uint64_t> bytes_of;
  for (const RankExtent& e : extents) {
    if (!bytes_of.emplace(e.rank, e.bytes).second) {
      return Status::InvalidArgument("rank " + std::to_string(e.rank) +
                                     " has two extents (one per rank: one collective call)");
    }
  }
  std::vector<RankGroup> split;
  for (const RankGroup& g : FileContiguousGroups(extents)) {
    if (g.bytes <= k_bytes || g.ranks.size() <= 1) {
      split.push_back(g);
    } else {
      Split(g, k_bytes, bytes_of, split);
    }
  }
  std::vector<RankGroup> merged;
  for (RankGroup& g : split) {
    if (!merged.empty() && merged.back().bytes < k_bytes && g.bytes < k_bytes &&
        merged.back().bytes + g.bytes <= k_bytes) {
      merged.back().ranks.insert(merged.back().ranks.end(), g.ranks.begin(), g.ranks.end());
      merged.back().bytes += g.bytes;
    } else {
      merged.push_back(std::move(g));
    }
  }
  return merged;
}

std::vector<int32_t> GroupAggregators(const std::vector<RankGroup>& groups) {
  std::vector<int32_t> out;
  for (const RankGroup& g : groups) out.push_back(g.ranks.front());
  return out;
}

}  // namespace iorelay::collective
