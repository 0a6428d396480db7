// Request offsets and file names of the access patterns (see layout.h).
#include "layout.h"

#include <cstdio>

namespace iorelay::bench {

uint64_t RequestsPerRank(const Options& o) { return o.block_bytes / o.request_bytes * o.segments; }

uint64_t RequestOffset(const Options& o, uint32_t rank, uint32_t ranks, uint64_t i) {
  const uint64_t per_block = o.block_bytes / o.request_bytes;
  const uint64_t segment = i / per_block;
  const uint64_t within = (i % per_block) * o.request_bytes;
  if (o.layout == Layout::kFilePerProcess) return segment * o.block_bytes + within;
  return (segment * ranks + rank) * o.block_bytes + within;
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

uint32_t NodeCount(const Options& o, uint32_t ranks) {
  return (ranks + o.ranks_per_node - 1) / o.ranks_per_node;
}

}  // namespace iorelay::bench
