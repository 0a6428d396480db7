// FORGE's "block" policy: contiguous compute node ids per bridge node (hence per I/O node).
#include "placement/policy.h"

namespace iorelay::placement {

Assignment BlockAssignment(const Topology& topology, const IoLayout& layout) {
  const int64_t n = topology.num_nodes();
  const int64_t k = layout.num_bridges();
  Assignment out(n);
  for (int64_t v = 0; v < n; ++v) out[v] = static_cast<int32_t>(v * k / n);
  return out;
}

}  // namespace iorelay::placement
