// Where each request of each rank goes (docs/exploration.md), as pure functions so the
// offsets can be tested without files or MPI.
#pragma once

#include <cstdint>
#include <string>

#include "options.h"

namespace iorelay::bench {

// Requests one rank issues when nothing stops it early: block/request per segment.
uint64_t RequestsPerRank(const Options& o);

// File offset of request `i` (0-based, in issue order) of `rank` among `ranks`:
//   segment k = i / (b/t), j = i % (b/t);
//   shared: (k * ranks + rank) * b + j * t;   file per process: k * b + j * t.
uint64_t RequestOffset(const Options& o, uint32_t rank, uint32_t ranks, uint64_t i);

// The file `rank` uses: DIR/NAME (shared) or DIR/NAME.RRRRRR (file per process).
std::string FilePath(const Options& o, uint32_t rank);

// Compute nodes the ranks stand for: ceil(ranks / ranks_per_node).
uint32_t NodeCount(const Options& o, uint32_t ranks);

}  // namespace iorelay::bench
