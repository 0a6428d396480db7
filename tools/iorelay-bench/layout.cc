// The derived sizes and file names of the access patterns (see layout.h).
#include "layout.h"

#include <cstdio>

namespace iorelay::bench {

workload::Shape ShapeOf(const Options& o) {
  return {o.layout, o.request_bytes, o.block_bytes, o.segments};
}

std::string FilePath(const Options& o, uint32_t rank) {
  std::string path = o.dir + "/" + o.name;
  if (o.layout == Layout::kFilePerProcess) {
    char suffix[16];
    std::snprintf(suffix, sizeof suffix, ".%06u", rank);
    path += suffix;
  }
  return path;
}

TileGrid TileOf(uint32_t ranks) {
  TileGrid g;
  for (uint32_t r = 1; static_cast<uint64_t>(r) * r <= ranks; ++r) {
    if (ranks % r == 0) g.rows = r;
  }
  g.cols = ranks / g.rows;
  return g;
}

uint64_t RequestOffset(const Options& o, uint32_t rank, uint32_t ranks, uint64_t i) {
  if (o.view != View::kSubarray) return ShapeOf(o).Offset(rank, ranks, i);
  const TileGrid g = TileOf(ranks);
  const uint64_t row = uint64_t{rank / g.cols} * o.segments + i;
  return (row * g.cols + rank % g.cols) * o.request_bytes;
}

uint32_t NodeCount(const Options& o, uint32_t ranks) {
  return (ranks + o.ranks_per_node - 1) / o.ranks_per_node;
}

}  // namespace iorelay::bench
