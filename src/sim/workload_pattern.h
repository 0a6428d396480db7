// The simulator's view of an iorelay-bench access pattern (src/workload/pattern.h: names,
// checks, sizes, offsets): which file and offset each request of each rank touches, on which
// compute node, and when a rank stops issuing.
#pragma once

#include <cstdint>

#include "common/status.h"
#include "workload/pattern.h"

namespace iorelay::sim {

using workload::Layout;
using workload::Spatiality;

// The bench's pattern plus what a simulated run adds: the operation, a request budget, and the
// ranks and nodes the bench takes from its MPI launch.
struct PatternSpec : workload::PatternSpec {
  bool write = true;  // false: read
  // Every rank issues at most its first this many requests (0: all of them); the file layout
  // stays that of the whole pattern, as a stonewall leaves it. A time budget for patterns whose
  // real runs move far more requests than are worth simulating one by one.
  uint64_t max_requests = 0;
  uint32_t ranks = 1;
  uint32_t nodes = 1;  // ranks are spread in blocks of ranks/nodes (the last may hold fewer)
};

// A checked pattern with every size derived, as iorelay-bench derives them (workload::Derive).
struct Pattern {
  PatternSpec spec;
  workload::Shape shape;
  uint32_t ranks_per_node = 1;

  uint64_t RequestsPerRank() const { return shape.RequestsPerRank(); }
  uint64_t TotalBytes() const { return RequestsPerRank() * spec.request_bytes * spec.ranks; }
  // Requests a rank issues at most: RequestsPerRank(), capped at spec.max_requests.
  uint64_t IssuedPerRank() const {
    const uint64_t n = RequestsPerRank();
    return spec.max_requests > 0 && spec.max_requests < n ? spec.max_requests : n;
  }
  // Offset of request i (issue order) of `rank` (workload::Shape::Offset).
  uint64_t Offset(uint32_t rank, uint64_t i) const { return shape.Offset(rank, spec.ranks, i); }
  // File id: 0 for the shared file, rank + 1 for file per process.
  uint64_t File(uint32_t rank) const;
  uint32_t NodeOf(uint32_t rank) const { return rank / ranks_per_node; }
  // Whether a rank may issue another request at simulated time `now_s`.
  bool BeforeStonewall(double now_s) const {
    return spec.stonewall_s <= 0 || now_s < spec.stonewall_s;
  }
};

// InvalidArgument naming the offending option for impossible combinations.
Result<Pattern> MakePattern(const PatternSpec& spec);

}  // namespace iorelay::sim
