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

// The subarray view's grid: the ranks as rows x cols tiles, rows the largest divisor of `ranks`
// whose square is at most ranks (4: 2 x 2; 6: 2 x 3; 7: 1 x 7). The file is a 2D array of
// rows * segments rows of cols * request bytes, rank r's tile at tile row r / cols, column r %
// cols.
struct TileGrid {
  uint32_t rows = 1;
  uint32_t cols = 1;
};
TileGrid TileOf(uint32_t ranks);

// The file offset of request i of `rank`: row i of its tile with --view subarray, else the
// pattern's (ShapeOf(o).Offset).
uint64_t RequestOffset(const Options& o, uint32_t rank, uint32_t ranks, uint64_t i);

// Compute nodes the ranks stand for: ceil(ranks / ranks_per_node).
uint32_t NodeCount(const Options& o, uint32_t ranks);

}  // namespace iorelay::bench
