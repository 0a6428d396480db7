// OMPIO's collective write as cycle plans: each group of ranks (split/merge's groups, the first
// rank aggregating) moves its data to its aggregator in cycles of the cycle buffer, with one of
// two segmentations (../shared/ALGORITHMS.md section 4):
//  - static: each cycle every rank of the group hands a fixed share of its own data, the buffer
//    divided by the group's ranks (communication-friendly: every rank sends alike, but the
//    aggregator's pieces are scattered in the file);
//  - dynamic: each cycle the aggregator takes the next buffer's worth of the group's data in
//    file-offset order (disk-friendly: a dense group's cycle is one contiguous write, whichever
//    ranks it comes from).
// Pure code: no MPI, no OS calls. The cycles have ROMIO's plan's shape (two_phase.h), the
// aggregator index being the group's index.
#pragma once

#include <cstdint>
#include <vector>

#include "collective/split_merge.h"
#include "collective/two_phase.h"
#include "common/status.h"

namespace iorelay::collective {

enum class Segmentation { kStatic, kDynamic };

struct OmpioSpec {
  // Each aggregator's bytes per cycle: half of OpenMPI 4.1's io_ompio_bytes_per_agg, which
  // its fcoll components halve to overlap two cycles (io_ompio_cycle_buffer_size splits
  // independent calls instead); required (> 0).
  uint64_t cycle_buffer_bytes = 0;
  Segmentation segmentation = Segmentation::kDynamic;
};

// Static segmentation's share: each rank of a group of `ranks` hands at most this many bytes per
// cycle, the buffer divided evenly (at least 1 byte).
uint64_t StaticShare(uint64_t cycle_buffer_bytes, uint64_t ranks);

// The plan of one collective write of `extents` (any number per rank, none overlapping another,
// each rank's data taken in file order) by `groups` (every rank with bytes in exactly one).
// InvalidArgument naming what is wrong: a cycle buffer of 0, an empty group, a rank in two
// groups, a rank with data but no group, overlapping extents.
Result<std::vector<Cycle>> PlanOmpio(const std::vector<RankExtent>& extents,
                                     const std::vector<RankGroup>& groups, const OmpioSpec& spec);

}  // namespace iorelay::collective
