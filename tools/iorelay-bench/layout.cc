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

uint32_t NodeCount(const Options& o, uint32_t ranks) {
  return (ranks + o.ranks_per_node - 1) / o.ranks_per_node;
}

}  // namespace iorelay::bench
