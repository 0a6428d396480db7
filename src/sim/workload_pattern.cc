// A simulated pattern: the bench's checks and sizes (src/workload) plus the compute nodes, so a
// simulated pattern and a measured one with the same options move the same bytes at the same
// offsets.
#include "sim/workload_pattern.h"

namespace iorelay::sim {

uint64_t Pattern::File(uint32_t rank) const {
  return spec.layout == Layout::kFilePerProcess ? uint64_t{rank} + 1 : 0;
}

Result<Pattern> MakePattern(const PatternSpec& spec) {
  Result<workload::Shape> shape = workload::Derive(spec, spec.ranks);
  if (!shape.ok()) return shape.status();
  if (spec.nodes == 0 || spec.nodes > spec.ranks) {
    return Status::InvalidArgument("--nodes must be between 1 and --ranks");
  }
  Pattern p;
  p.spec = spec;
  p.shape = *shape;
  p.ranks_per_node = (spec.ranks + spec.nodes - 1) / spec.nodes;
  return p;
}

}  // namespace iorelay::sim
