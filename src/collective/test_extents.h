// Extents the collective tests share: the contiguous layout, rank r owning
// [r * bytes, (r + 1) * bytes).
#pragma once

#include <cstdint>
#include <vector>

#include "collective/split_merge.h"  // RankExtent

namespace iorelay::collective::fixtures {

inline std::vector<RankExtent> Contiguous(int32_t ranks, uint64_t bytes) {
  std::vector<RankExtent> out;
  for (int32_t r = 0; r < ranks; ++r) out.push_back({r, r * bytes, bytes});
  return out;
}

}  // namespace iorelay::collective::fixtures
