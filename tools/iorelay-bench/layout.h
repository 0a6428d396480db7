// Where each request of each rank goes (docs/exploration.md; the offsets are src/workload's), as
// pure functions so they can be tested without files or MPI.
#pragma once

#include <cstdint>
#include <string>

#include "options.h"
#include "workload/pattern.h"

namespace iorelay::bench {

// The pattern's sizes as ParseOptions derived them, with each request's offset
// (workload::Shape::RequestsPerRank, Offset).
workload::Shape ShapeOf(const Options& o);

// The file `rank` uses: DIR/NAME (shared) or DIR/NAME.RRRRRR (file per process).
std::string FilePath(const Options& o, uint32_t rank);

// Compute nodes the ranks stand for: ceil(ranks / ranks_per_node).
uint32_t NodeCount(const Options& o, uint32_t ranks);

}  // namespace iorelay::bench
